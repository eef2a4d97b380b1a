import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `npm pack` makes the package an integrator installs: its own version, the built code with its
 * declarations, nothing else; a fresh program requires it and type-checks against it.
 */
const PACKAGE_DIR = join(__dirname, '..');
const ROOT = join(PACKAGE_DIR, '..', '..');

describe('the @recur/node package', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'recur-node-pack-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('packs with its own version, the built code and declarations, and a program uses it', () => {
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: PACKAGE_DIR, encoding: 'utf8' })) as { name: string; version: string; filename: string; files: { path: string }[] }[];
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string };
    expect({ name: packed.name, version: packed.version }).toEqual({ name: '@recur/node', version: manifest.version });
    const files = packed.files.map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/openapi.d.ts']));
    expect(files.filter((file) => !file.startsWith('dist/') && !['package.json', 'README.md', 'CHANGELOG.md'].includes(file))).toEqual([]);

    // A program with the tarball installed (its dependencies linked from this workspace).
    const app = join(dir, 'app');
    const modules = join(app, 'node_modules');
    mkdirSync(join(modules, '@recur', 'node'), { recursive: true });
    execFileSync('tar', ['-xzf', join(dir, packed.filename), '-C', join(modules, '@recur', 'node'), '--strip-components=1']);
    symlinkSync(join(ROOT, 'node_modules', 'openapi-fetch'), join(modules, 'openapi-fetch'));
    symlinkSync(join(ROOT, 'libs', 'webhooks'), join(modules, '@recur', 'webhooks'));
    symlinkSync(join(ROOT, 'node_modules', '@types'), join(modules, '@types'));
    writeFileSync(
      join(app, 'main.ts'),
      [
        "import { Recur, InvalidRequestError, constructEvent, type Customer } from '@recur/node';",
        "const recur = new Recur('recur_test_sk_x', { baseUrl: 'http://127.0.0.1:9' });",
        'export async function names(): Promise<string[]> {',
        '  const names: string[] = [];',
        '  for await (const customer of recur.customers.list({ limit: 100 })) names.push((customer satisfies Customer).name);',
        '  return names;',
        '}',
        'export const checks = [InvalidRequestError, constructEvent];',
      ].join('\n'),
    );
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] }, files: ['main.ts'] }));
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { cwd: app, encoding: 'utf8' });
    const required = execFileSync(process.execPath, ['-e', "const sdk = require('@recur/node'); console.log(JSON.stringify({ version: sdk.SDK_VERSION, resources: Object.keys(new sdk.Recur('k')).sort() }))"], { cwd: app, encoding: 'utf8' });
    expect(JSON.parse(required)).toEqual({ version: manifest.version, resources: ['api', 'customers', 'events', 'invoices', 'payments', 'plans', 'refunds', 'subscriptions', 'wallets', 'webhookEndpoints'] });
  }, 120_000);
});
