#!/usr/bin/env node
// Contracts that cannot break silently: each released app's contracts today against its last
// release (tools/release/projects.mjs, releases/<key>.json). A step of `npm test`; on its own:
//
//   npm run contracts:check [-- records proto openapi events]   (default: all four)
//
//   records  every release record matches its package: version, changelog, pinned image tags;
//            every pending changeset names released packages only
//   proto    `buf breaking` (FILE rules) of each service's gRPC package, plus the shared
//            recur.common and recur.events packages, against the protos at its release commit
//   openapi  oasdiff between the OpenAPI document of the gateway's last release and today's:
//            a removed field (required or optional), a new required input, a narrowed enum… fail
//   events   the public JSON shapes (libs/contracts/src/public) and event types against each
//            app's release commit: a removed field or type, a changed type, a field made optional
//
// A deliberate breaking change is a new major version of that contract beside the old one: a
// recur.<service>.v2 package, /v2 routes, a new shape (InvoiceJsonV2) or event type, served until
// the callers of v1 have moved. Each failure says what broke and why it matters.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument, commitExists, git, lastRelease, OPENAPI_RELEASE_FILE, packageVersion, RELEASED, ROOT, SHARED_PROTO } from '../release/projects.mjs';
import { inTodaysNotation } from './openapi-notation.mjs';
import { breakingShapeChanges, EVENT_TYPES_FILE, readShapes, SHAPES_DIR } from './public-shapes.mjs';

/**
 * oasdiff's own levels, but for two. Removing an optional response field is only "info" to
 * oasdiff, yet a client may read an optional field as much as a required one: an error here.
 * A new value in a response enum (a new status, a new refund reason) is an error to oasdiff; here
 * it is reported but passes: the interface promises that answers and events may carry values a
 * client has not seen (as new fields), or every new state of a resource would need /v2.
 */
const OASDIFF_LEVELS = ['response-optional-property-removed ERR', 'response-property-enum-value-added WARN'];

const sections = process.argv.slice(2).length ? process.argv.slice(2) : ['records', 'proto', 'openapi', 'events'];
const tmp = mkdtempSync(join(tmpdir(), 'recur-contracts-'));
let failed = 0;
const ok = (line) => console.error(`  ok    ${line}`);
const fail = (line, details = []) => {
  failed++;
  console.error(`  FAIL  ${line}`);
  for (const detail of details) console.error(`        ${detail.replace(/\n/g, '\n        ')}`);
};
const short = (release) => `${release.version} (commit ${release.commit.slice(0, 12)})`;

/** Releases whose commit this clone has; the others fail the records check. */
function readableReleases() {
  return RELEASED.map((project) => ({ project, release: lastRelease(project) })).filter(({ release }) => release && commitExists(release.commit));
}

function checkRecords() {
  for (const project of RELEASED) {
    const release = lastRelease(project);
    const version = packageVersion(project);
    const problems = [];
    if (!release) {
      fail(`${project.key}: no release recorded (releases/${project.key}.json)`, [`record its first release: npm run release -- record ${project.key}`]);
      continue;
    }
    if (release.version !== version) {
      problems.push(`${project.dir}/package.json says ${version}, the last release ${release.version}: versions move only with \`npm run release\`, which records the release the checks compare against`);
    }
    if (!commitExists(release.commit)) {
      problems.push(`commit ${release.commit} of release ${release.version} is not in this clone: fetch the history (git fetch --unshallow), or if the branch was rewritten, record the release again (npm run release -- record ${project.key})`);
    }
    if (!existsSync(join(ROOT, project.dir, 'CHANGELOG.md'))) problems.push(`${project.dir}/CHANGELOG.md is missing`);
    if (project.image) {
      const values = readFileSync(join(ROOT, 'helm/recur/values.yaml'), 'utf8');
      const pinned = new RegExp(`\\n  ${project.key}:\\n(?:    .*\\n|\\s*#.*\\n)*?    image: \\{tag: "([^"]*)"\\}`).exec(values)?.[1];
      if (pinned !== version) problems.push(`helm/recur/values.yaml pins apps.${project.key}.image.tag ${JSON.stringify(pinned)}, not its version ${version}`);
      const composed = new RegExp(`image: recur-${project.key}:(\\S+)`).exec(readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8'))?.[1];
      if (composed !== version) problems.push(`deploy/compose.yaml runs recur-${project.key}:${composed}, not its version ${version}`);
    }
    if (project.key === 'gateway' && !existsSync(OPENAPI_RELEASE_FILE)) problems.push('releases/gateway.openapi.json (the document of its last release) is missing: npm run release -- record gateway');
    if (problems.length) fail(`${project.key}: release record`, problems);
    else ok(`${project.key} ${short(release)}`);
  }
}

/**
 * Each pending changeset (.changeset/*.md) names only packages released on their own: a library
 * bundled into the apps (changesets' `ignore`) gets no version, and a changeset that mixes one
 * with a released package stops `npm run release` (changesets refuses a mixed changeset). A
 * change to such a library is announced on the apps it changes.
 */
function checkChangesets() {
  const dir = join(ROOT, '.changeset');
  const released = new Set(RELEASED.map((project) => project.name));
  const problems = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.md') && name !== 'README.md')) {
    const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(dir, file), 'utf8'))?.[1];
    if (front === undefined) {
      problems.push(`.changeset/${file}: no front matter naming the packages it bumps`);
      continue;
    }
    for (const line of front.split('\n').filter((text) => text.trim() !== '')) {
      const name = /^\s*['"]?([^'":]+)['"]?\s*:\s*(patch|minor|major)\s*$/.exec(line)?.[1];
      if (!name) problems.push(`.changeset/${file}: cannot read "${line}" (want '<package>': patch|minor|major)`);
      else if (!released.has(name)) problems.push(`.changeset/${file}: ${name} is not released on its own (released: ${[...released].join(', ')}); name the apps the change reaches instead`);
    }
  }
  if (problems.length) fail('pending changesets', problems);
  else ok('pending changesets name released packages only');
}

const buf = join(ROOT, 'node_modules/.bin/buf');
/** A buf image of proto/ as it was at `commit` (undefined: today's tree), built once per commit. */
const protoImages = new Map();
function protoImageAt(commit) {
  if (!protoImages.has(commit)) {
    const image = join(tmp, `proto-${commit ?? 'today'}.binpb`);
    let source = join(ROOT, 'proto');
    if (commit) {
      const dir = join(tmp, `proto-${commit}`);
      execFileSync('bash', ['-c', `mkdir -p "${dir}" && git archive "${commit}" proto | tar -x -C "${dir}"`], { cwd: ROOT });
      source = join(dir, 'proto');
    }
    execFileSync(buf, ['build', source, '-o', image], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    protoImages.set(commit, image);
  }
  return protoImages.get(commit);
}

function checkProtos() {
  for (const { project, release } of readableReleases().filter(({ project }) => project.proto)) {
    // Images on both sides, so --path names the same files in each: the service's package
    // folder (all of its versions) and the shared packages.
    const paths = [project.proto, ...SHARED_PROTO].filter((path) => existsSync(join(ROOT, 'proto', path)));
    const args = ['breaking', protoImageAt(undefined), '--against', protoImageAt(release.commit), '--exclude-imports', '--error-format', 'text', ...paths.flatMap((path) => ['--path', path])];
    const result = spawnSync(buf, args, { cwd: ROOT, encoding: 'utf8' });
    if (result.status === 0) ok(`${project.key}: gRPC contract compatible with ${short(release)}`);
    else {
      fail(`${project.key}: the gRPC contract breaks callers built against its last release ${short(release)} (buf breaking)`, [
        (result.stdout + result.stderr).trim().replace(/^recur\//gm, 'proto/recur/'),
        `A running replica of the previous release (or a caller built against it) would misread these messages. Keep the old field/RPC (deprecate it, reserve removed numbers), or add the change as a new package recur.${project.proto.split('/')[1]}.v2 served beside v1.`,
      ]);
    }
  }
}

function checkOpenApi() {
  const release = lastRelease(RELEASED.find((project) => project.key === 'gateway'));
  if (!release || !existsSync(OPENAPI_RELEASE_FILE)) return fail('openapi: no release of the gateway recorded to compare with');
  const current = join(tmp, 'openapi.json');
  writeFileSync(current, JSON.stringify(buildOpenApiDocument()));
  // The release in today's notation (openapi-notation.mjs: nullable objects as anyOf, two boolean
  // one-value enums stated in descriptions; the same wire, which oasdiff would call breaking);
  // every other difference is compared as it is.
  const released = join(tmp, 'released.openapi.json');
  writeFileSync(released, JSON.stringify(inTodaysNotation(JSON.parse(readFileSync(OPENAPI_RELEASE_FILE, 'utf8')))));
  const levels = join(tmp, 'oasdiff-levels');
  writeFileSync(levels, `${OASDIFF_LEVELS.join('\n')}\n`);
  const oasdiff = execFileSync(join(ROOT, 'tools/contracts/ensure-oasdiff.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  // --flatten-allof: a list answer is the shared ListEnvelope plus its `data` (an allOf); merged,
  // it is compared with the release's inline envelope field by field.
  const result = spawnSync(oasdiff, ['breaking', released, current, '--flatten-allof', '--fail-on', 'ERR', '--severity-levels', levels, '--format', 'text'], { encoding: 'utf8' });
  const output = (result.stdout + result.stderr).trim().replaceAll(current, 'today').replaceAll(released, 'releases/gateway.openapi.json');
  if (result.status === 0) ok(`gateway: /openapi.json compatible with ${short(release)}${/ [1-9]\d* warning/.test(output) ? `; allowed:\n${output}` : ''}`);
  else {
    fail(`gateway: /openapi.json breaks clients of its last release ${short(release)} (oasdiff)`, [
      output,
      'Integrators call /v1 with code written against the published document. Keep the old behaviour, or put the change on new routes (/v2) served beside /v1.',
    ]);
  }
}

function shapesAt(commit) {
  const files = git('ls-tree', '-r', '--name-only', commit, '--', SHAPES_DIR, EVENT_TYPES_FILE).split('\n').filter((path) => path.endsWith('.ts'));
  return readShapes(files.map((path) => ({ path, text: git('show', `${commit}:${path}`) })));
}

function checkEvents() {
  const files = readdirSync(join(ROOT, SHAPES_DIR))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(SHAPES_DIR, name))
    .concat(EVENT_TYPES_FILE);
  const today = readShapes(files.map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') })));
  const byCommit = new Map();
  for (const { project, release } of readableReleases().filter(({ project }) => project.image)) {
    byCommit.set(release.commit, [...(byCommit.get(release.commit) ?? []), `${project.key} ${release.version}`]);
  }
  for (const [commit, releases] of byCommit) {
    const problems = breakingShapeChanges(shapesAt(commit), today);
    const what = `public event and resource shapes against ${releases.join(', ')} (commit ${commit.slice(0, 12)})`;
    if (problems.length === 0) ok(what);
    else {
      fail(`${what}: ${problems.length} breaking change(s)`, [
        ...problems,
        'Webhook consumers and API clients read these shapes. Add fields instead; for a different shape, publish a new one (a new interface and event type) beside the old until its readers move.',
      ]);
    }
  }
}

const checks = { records: () => { checkRecords(); checkChangesets(); }, proto: checkProtos, openapi: checkOpenApi, events: checkEvents };
try {
  for (const section of sections) {
    if (!checks[section]) throw new Error(`unknown section ${section}; one of ${Object.keys(checks).join(', ')}`);
    console.error(`== contracts: ${section}`);
    checks[section]();
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
if (failed) {
  console.error(`\ncontracts: ${failed} check(s) failed`);
  process.exit(1);
}
console.error('\ncontracts: all compatible with the last releases');
