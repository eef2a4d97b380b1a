import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';

/**
 * `recur-admin` (the built bin, as `npx recur-admin` runs it) against an HTTP server that records
 * what reaches it: a flag the command does not take is refused before anything is sent, a flag
 * takes its value as `--flag value` or `--flag=value`, and `--help` prints the usage and exits 0.
 */
const BIN = join(__dirname, '..', 'bin', 'recur-admin.js');
let server: Server;
let url: string;
const received: { method: string; path: string; body: unknown }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ method: request.method!, path: request.url!, body: body ? JSON.parse(body) : undefined });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => (received.length = 0));

function recurAdmin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, RECUR_ADMIN_URL: url, RECUR_OPERATOR_TOKEN: 'op-token' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });
}

it('refuses a flag the command does not take, sending nothing (a misspelt --scope must not create a full-scope key)', async () => {
  const result = await recurAdmin('keys', 'create', '--account', 'acct_1', '--app', 'sandbox', '--type', 'test', '--scoep', 'read_only');
  expect(result).toEqual({ code: 2, stdout: '', stderr: expect.stringMatching(/^Unknown option '--scoep'.*\nusage:/s) });
  expect(received).toEqual([]);
});

it('refuses a flag without its value, and an argument the command does not take', async () => {
  expect(await recurAdmin('keys', 'create', '--account', 'acct_1', '--app', 'sandbox', '--type')).toMatchObject({ code: 2, stderr: expect.stringContaining("'--type")});
  expect(await recurAdmin('keys', 'list', '--account', 'acct_1', 'extra')).toMatchObject({ code: 2, stderr: expect.stringContaining("unexpected argument 'extra'") });
  expect(await recurAdmin('keys', 'revoke')).toMatchObject({ code: 2, stderr: expect.stringContaining('keys revoke takes one KEY') });
  expect(await recurAdmin('keys', 'erase')).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command 'keys erase'") });
  expect(received).toEqual([]);
});

it('takes --flag=value as --flag value', async () => {
  const result = await recurAdmin('keys', 'create', '--account=acct_1', '--app=sandbox', '--type', 'test', '--scope=read_only', '--name=ci reader');
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect(received).toEqual([{ method: 'POST', path: '/operator/accounts/acct_1/keys', body: { app: 'sandbox', type: 'test', scope: 'read_only', name: 'ci reader' } }]);
  await recurAdmin('keys', 'roll', 'key_1', '--expires-in=60');
  expect(received[1]).toEqual({ method: 'POST', path: '/operator/keys/key_1/roll', body: { expires_in_seconds: 60 } });
});

it('prints the usage on --help and exits 0', async () => {
  for (const args of [['--help'], ['keys', 'create', '--help'], ['-h']]) {
    const result = await recurAdmin(...args);
    expect(result).toEqual({ code: 0, stdout: expect.stringContaining('recur-admin keys create --account ACCOUNT'), stderr: '' });
  }
  expect(received).toEqual([]);
});
