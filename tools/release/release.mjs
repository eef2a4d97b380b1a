#!/usr/bin/env node
// Releases apps (and @recur/webhooks) one by one, each with its own version.
//
//   npx changeset                      describe a change: which packages, patch/minor/major, the
//                                      changelog line (a .changeset/*.md file, committed with it)
//   npm run release                    apply the pending changesets: bump each named package's
//                                      version and CHANGELOG.md, pin its image in the chart and
//                                      deploy/compose.yaml, and record the release (releases/<key>.json)
//   npm run release -- record [key…]   record the current versions as released without bumping
//                                      (the first release; keys as in tools/release/projects.mjs)
//
// Then commit the result ("Release catalog 0.2.0"). The checks of `npm test` (tools/contracts) compare
// each app's contracts with its last recorded release.
//
// Why Changesets and not `nx release`: `nx release version` needs the @nx/js plugin for package.json
// projects, and the @nx plugins lag NestJS 12 and pull in their own toolchain (docs TOOLCHAIN); Changesets
// is one dev dependency that keeps independent versions and per-package changelogs of npm workspaces,
// reads the intended bump from files committed with the change (reviewed like code), and needs neither
// git tags nor a registry. @changesets/cli 2.x: 3.x requires Node 22.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument, git, lastRelease, OPENAPI_RELEASE_FILE, packageVersion, RELEASED, RELEASES_DIR, releaseFile, ROOT, writeJson } from './projects.mjs';

const [command = 'version', ...keys] = process.argv.slice(2);

function run(cmd, args) {
  console.error(`» ${cmd} ${args.join(' ')}`);
  execFileSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
}

function requireCleanTree() {
  const dirty = git('status', '--porcelain');
  if (dirty) fail(`commit or stash your changes first: the release records HEAD as the commit it was cut from.\n${dirty}`);
}

function fail(message) {
  console.error(`release: ${message}`);
  process.exit(1);
}

/** apps.<key>.image.tag in the chart's values and the image of deploy/compose.yaml. */
function pinImage(project, version) {
  const valuesFile = join(ROOT, 'helm/recur/values.yaml');
  const values = readFileSync(valuesFile, 'utf8');
  const block = new RegExp(`(\\n  ${project.key}:\\n(?:    .*\\n|\\s*#.*\\n)*?    image: \\{tag: ")[^"]*("\\})`);
  if (!block.test(values)) fail(`helm/recur/values.yaml has no apps.${project.key}.image: {tag: "…"} line to move`);
  writeFileSync(valuesFile, values.replace(block, `$1${version}$2`));

  const composeFile = join(ROOT, 'deploy/compose.yaml');
  const compose = readFileSync(composeFile, 'utf8');
  const image = new RegExp(`(image: recur-${project.key}:)\\S+`);
  if (!image.test(compose)) fail(`deploy/compose.yaml has no image: recur-${project.key}:… line to move`);
  writeFileSync(composeFile, compose.replace(image, `$1${version}`));
}

/** Changesets moves the workspaces' ranges on each other, not the private root's: do that here. */
function pinInRootManifest(projects) {
  const file = join(ROOT, 'package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  for (const field of ['dependencies', 'devDependencies']) {
    for (const project of projects) {
      if (manifest[field]?.[project.name]) manifest[field][project.name] = packageVersion(project);
    }
  }
  writeJson(file, manifest);
}

function bumpChartPatch() {
  const chartFile = join(ROOT, 'helm/recur/Chart.yaml');
  const chart = readFileSync(chartFile, 'utf8');
  const next = chart.replace(/^version: (\d+)\.(\d+)\.(\d+)$/m, (_, major, minor, patch) => `version: ${major}.${minor}.${Number(patch) + 1}`);
  writeFileSync(chartFile, next);
  return /^version: (.*)$/m.exec(next)[1];
}

function record(projects, commit) {
  mkdirSync(RELEASES_DIR, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  for (const project of projects) {
    writeJson(releaseFile(project), { name: project.name, version: packageVersion(project), commit, date });
    console.error(`recorded ${project.name} ${packageVersion(project)} at ${commit.slice(0, 12)}`);
  }
  if (projects.some((project) => project.key === 'gateway')) {
    run('npx', ['nx', 'run', '@recur/gateway:build', '--output-style=stream-without-prefixes']);
    writeJson(OPENAPI_RELEASE_FILE, buildOpenApiDocument());
    console.error(`kept the gateway's OpenAPI document in ${OPENAPI_RELEASE_FILE.slice(ROOT.length + 1)}`);
  }
}

function selected() {
  if (keys.length === 0) return RELEASED;
  const unknown = keys.filter((key) => !RELEASED.some((project) => project.key === key));
  if (unknown.length) fail(`unknown ${unknown.join(', ')}; one of: ${RELEASED.map((project) => project.key).join(', ')}`);
  return RELEASED.filter((project) => keys.includes(project.key));
}

if (command === 'record') {
  requireCleanTree();
  record(selected(), git('rev-parse', 'HEAD'));
} else if (command === 'version') {
  requireCleanTree();
  const base = git('rev-parse', 'HEAD');
  run('npx', ['changeset', 'version']);
  const released = RELEASED.filter((project) => packageVersion(project) !== lastRelease(project)?.version);
  if (released.length === 0) fail('no package changed version: add a changeset first (`npx changeset`)');
  pinInRootManifest(released);
  // The lockfile carries each workspace's version; `npm ci` refuses a stale one.
  run('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund']);
  for (const project of released.filter((p) => p.image)) pinImage(project, packageVersion(project));
  record(released, base);
  if (released.some((project) => project.image)) {
    const chartVersion = bumpChartPatch();
    // deploy/k8s is the chart rendered; tools/helm/check.sh fails when it is stale.
    run('bash', ['tools/helm/render-manifests.sh']);
    console.error(`chart ${chartVersion}`);
  }
  const summary = released.map((project) => `${project.key} ${packageVersion(project)}`).join(', ');
  console.error(`\nreleased ${summary}. Review, then:\n  git add -A && git commit -m "Release ${summary}"`);
} else {
  fail(`unknown command ${command}: use no argument (apply the pending changesets) or \`record [key…]\``);
}
