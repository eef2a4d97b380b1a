import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `npm pack` makes the package a developer installs: its own version, the `recur` bin and the built
 * code, nothing else; installed beside @recur/node and @recur/webhooks, its bin runs.
 */
const PACKAGE_DIR = join(__dirname, '..');
const ROOT = join(PACKAGE_DIR, '..', '..');

describe('the @recur/cli package', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'recur-cli-pack-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('packs with its own version, its bin and the built code, and the installed bin runs', () => {
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: PACKAGE_DIR, encoding: 'utf8' })) as { name: string; version: string; filename: string; files: { path: string }[] }[];
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    expect({ name: packed.name, version: packed.version, bin: manifest.bin }).toEqual({ name: '@recur/cli', version: manifest.version, bin: { recur: 'bin/recur.js' } });
    const files = packed.files.map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md', 'bin/recur.js', 'dist/main.js', 'dist/event-cursor.js']));
    expect(files.filter((file) => !file.startsWith('dist/') && !['package.json', 'README.md', 'CHANGELOG.md', 'bin/recur.js'].includes(file))).toEqual([]);

    // A project with the tarball installed (the two packages it uses linked from this workspace).
    const modules = join(dir, 'app', 'node_modules');
    mkdirSync(join(modules, '@recur', 'cli'), { recursive: true });
    execFileSync('tar', ['-xzf', join(dir, packed.filename), '-C', join(modules, '@recur', 'cli'), '--strip-components=1']);
    symlinkSync(join(ROOT, 'libs', 'sdk'), join(modules, '@recur', 'node'));
    symlinkSync(join(ROOT, 'libs', 'webhooks'), join(modules, '@recur', 'webhooks'));
    symlinkSync(join(ROOT, 'node_modules', 'openapi-fetch'), join(modules, 'openapi-fetch'));
    const help = execFileSync(process.execPath, [join(modules, '@recur', 'cli', manifest.bin.recur), 'trigger', '--help'], { cwd: join(dir, 'app'), encoding: 'utf8' });
    expect(help).toMatch(/^ {2}invoice\.paid /m);
  }, 120_000);
});
