import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT } from '@recur/testing';

/**
 * The documentation holds together: every relative link and anchor in README.md and
 * docs/**\/*.md resolves, and every docs/….md page (and anchor) that the code, tests, tools,
 * chart and deployment files name exists. A moved or renamed page fails here, not in a reader's
 * browser.
 */

function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist' || name === 'generated' || name === 'gen' || name.startsWith('.')) return [];
    return statSync(path).isDirectory() ? filesUnder(path, keep) : keep(path) ? [path] : [];
  });
}

const DOCUMENTS = [join(REPO_ROOT, 'README.md'), ...filesUnder(join(REPO_ROOT, 'docs'), (path) => path.endsWith('.md'))];

/** Markdown without its fenced code blocks and inline code, where a `[x](y)` is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Why a link from `from` to `target` (a path relative to `from`, or `#anchor`) does not resolve; undefined when it does. */
function brokenLink(from: string, target: string): string | undefined {
  const [path, anchor] = target.split('#') as [string, string | undefined];
  const file = path === '' ? from : join(dirname(from), decodeURI(path));
  if (!existsSync(file)) return `${target}: no such file`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor)) return `${target}: no heading makes the anchor #${anchor} in ${relative(REPO_ROOT, file)}`;
  return undefined;
}

function brokenLinksIn(document: string): string[] {
  const links = [...prose(readFileSync(document, 'utf8')).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)].map(([, target]) => target);
  return links
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .flatMap((target) => {
      const broken = brokenLink(document, target);
      return broken === undefined ? [] : [`${relative(REPO_ROOT, document)} → ${broken}`];
    });
}

it('finds the pages to check: the README and every page under docs/', () => {
  expect(DOCUMENTS.map((document) => relative(REPO_ROOT, document))).toEqual(
    expect.arrayContaining(['README.md', 'docs/getting-started.md', 'docs/api/conventions.md', 'docs/webhooks.md', 'docs/operations/configuration.md', 'docs/performance.md']),
  );
});

it('resolves every relative link and anchor in README.md and docs/**/*.md', () => {
  expect(DOCUMENTS.flatMap(brokenLinksIn)).toEqual([]);
});

it('finds every docs/ page and anchor that the code, tests, tools, chart and deployment files name', () => {
  const sources = ['apps', 'libs', 'tools', 'tests', 'helm', 'deploy', 'proto'].flatMap((dir) =>
    filesUnder(join(REPO_ROOT, dir), (path) => /\.(ts|mjs|js|proto|prisma|tpl|yaml|sh|md)$|Dockerfile$/.test(path)),
  );
  const cited = sources.flatMap((source) =>
    [...readFileSync(source, 'utf8').matchAll(/\bdocs\/[\w./-]+?\.md(?:#[a-z0-9-]+)?/g)].map(([reference]) => ({ source, reference })),
  );
  expect(cited.length).toBeGreaterThan(50);
  const broken = cited.flatMap(({ source, reference }) => {
    const why = brokenLink(join(REPO_ROOT, 'README.md'), reference);
    return why === undefined ? [] : [`${relative(REPO_ROOT, source)} → ${why}`];
  });
  expect(broken).toEqual([]);
});

it('finds no code, test, tool, chart or deployment file citing a README section: what they cite lives under docs/', () => {
  const sources = ['apps', 'libs', 'tools', 'tests', 'helm', 'deploy', 'proto'].flatMap((dir) =>
    filesUnder(join(REPO_ROOT, dir), (path) => /\.(ts|mjs|js|proto|prisma|tpl|yaml|sh)$|Dockerfile$/.test(path)),
  );
  // A section cited by its title, after the word README or before it in parentheses: the README has no sections to cite.
  const citation = /\bREADME(?:[,:]\s*|\s+)"?[A-Z][a-z]|, README\)/;
  const citing = sources.flatMap((source) =>
    readFileSync(source, 'utf8')
      .split('\n')
      .flatMap((line, index) => (citation.test(line) ? [`${relative(REPO_ROOT, source)}:${index + 1}: ${line.trim()}`] : [])),
  );
  expect(citing).toEqual([]);
});

it('reads anchors as GitHub makes them', () => {
  expect([...anchorsOf('# Customer portal (`/customer-portal/<token>`)\n## Calls: gRPC and in-process calls\n## Keys\n## Keys\n```sh\n# not a heading\n```')]).toEqual([
    'customer-portal-customer-portaltoken',
    'calls-grpc-and-in-process-calls',
    'keys',
    'keys-1',
  ]);
});
