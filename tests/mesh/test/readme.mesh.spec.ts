import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * The commands the README and the operator's page on accounts and keys show work from a fresh
 * clone: `npx recur-admin` (a workspace bin, linked at the root by the root's dependency on
 * @recur/gateway) and the README's curl example, run with bash exactly as written there, against
 * a real mesh. (docs/getting-started.md is followed from `npm start` by getting-started.mesh.spec.ts.)
 */
const ROOT = join(__dirname, '..', '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const ACCOUNTS_AND_KEYS = readFileSync(join(ROOT, 'docs', 'operations', 'accounts-and-keys.md'), 'utf8');
const README_URL = 'http://127.0.0.1:8080';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await startMesh();
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await mesh?.stop();
}, 60_000);

const shell = (command: string, env: Record<string, string> = {}) =>
  execFileSync('bash', ['-c', command], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, RECUR_ADMIN_URL: mesh.adminUrl, RECUR_OPERATOR_TOKEN: mesh.operatorToken, ...env } });

it('creates an account and a key with the documented npx recur-admin commands, then runs the README’s curl example with that key', () => {
  const admin = [...ACCOUNTS_AND_KEYS.matchAll(/^npx recur-admin .*$/gm)].map(([line]) => line);
  expect(admin.map((line) => line.split(' ').slice(2, 4).join(' '))).toEqual(['accounts create', 'keys create']);
  const account = JSON.parse(shell(admin[0]));
  expect(account.id).toMatch(/^acct_/);
  const key = JSON.parse(shell(admin[1].replace('acct_…', account.id)));
  expect(key.secret).toMatch(/^recur_test_sk_/);

  const examples = [...README.matchAll(/```sh\n(curl [\s\S]*?)```/g)].map(([, block]) => block);
  expect(examples.length).toBeGreaterThanOrEqual(1);
  for (const example of examples) {
    const output = shell(example.replaceAll(README_URL, mesh.baseUrl), { KEY: key.secret });
    expect(JSON.parse(output)).toMatchObject({ object: 'customer', id: expect.stringMatching(/^cus_/), livemode: false });
  }
});
