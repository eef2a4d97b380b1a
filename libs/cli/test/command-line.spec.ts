import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * The `recur` command as a shell runs it (bin/recur.js, the built dist/): its command line is read
 * as recur-admin's is — `--help` exits 0, a flag the command does not take or a missing value
 * exits 2 before anything is sent, `--flag=value` works.
 */
const BIN = join(__dirname, '..', 'bin', 'recur.js');
const recur = (args: string[], env: Record<string, string> = {}) => {
  const { RECUR_API_KEY: _key, RECUR_BASE_URL: _url, ...inherited } = process.env;
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...inherited, ...env }, timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
};

/** The same, without blocking this process (so a server in it can answer the command). */
const recurAsync = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const { RECUR_API_KEY: _key, RECUR_BASE_URL: _url, ...inherited } = process.env;
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...inherited, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

/** A gateway stand-in that refuses every key, saying which one it was and which server answered. */
async function refusingGateway(name: string) {
  const server = createServer((req, res) => {
    res.writeHead(401, { 'content-type': 'application/json', 'request-id': `req_${name}` });
    res.end(JSON.stringify({ error: { type: 'authentication_error', code: 'invalid_api_key', message: `${name} refused ${String(req.headers['x-api-key'])}` } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('the recur command line', () => {
  it('prints its usage for --help and exits 0; trigger --help lists every event type it can cause', () => {
    const help = recur(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/recur listen --forward-to URL/);
    expect(help.stdout).toMatch(/recur events tail/);
    const trigger = recur(['trigger', '--help']);
    expect(trigger.code).toBe(0);
    for (const type of ['customer.created', 'subscription.created', 'invoice.paid', 'invoice.payment_failed']) expect(trigger.stdout).toContain(`  ${type} `);
  });

  it('refuses an unknown command or flag, a missing value, an extra argument and an unknown event type with exit code 2', () => {
    expect(recur([]).code).toBe(2);
    expect(recur(['lisen'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown command 'lisen'/) });
    expect(recur(['listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--forward', 'x'], { RECUR_API_KEY: 'k' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/Unknown option '--forward'/) });
    expect(recur(['listen', '--forward-to'], { RECUR_API_KEY: 'k' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/argument missing/) });
    expect(recur(['listen'], { RECUR_API_KEY: 'k' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/--forward-to is required/) });
    expect(recur(['listen', '--forward-to=http://127.0.0.1:9/hooks', '--events=invoice.payed'], { RECUR_API_KEY: 'k' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/'invoice.payed' is not an event type/) });
    expect(recur(['trigger', 'invoice.refunded'], { RECUR_API_KEY: 'k' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot cause 'invoice.refunded'/) });
    expect(recur(['trigger', 'invoice.paid', 'extra'], { RECUR_API_KEY: 'k' }).code).toBe(2);
    expect(recur(['trigger', 'invoice.paid', '--base-url=http://127.0.0.1:9'], { RECUR_API_KEY: 'recur_live_sk_x' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/sandbox only/) });
    expect(recur(['events', 'tail', '--type', 'a,b'], { RECUR_API_KEY: 'k' }).code).toBe(2);
  });

  it('needs a key from --api-key or RECUR_API_KEY, and calls --base-url (else RECUR_BASE_URL)', async () => {
    expect(recur(['events', 'tail'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--api-key or RECUR_API_KEY/) });
    const [flagged, fromEnv] = await Promise.all([refusingGateway('flagged'), refusingGateway('from-env')]);
    try {
      const env = { RECUR_API_KEY: 'recur_test_sk_env', RECUR_BASE_URL: fromEnv.url };
      expect(await recurAsync(['trigger', 'customer.created', '--api-key=recur_test_sk_flag', `--base-url=${flagged.url}`], env)).toMatchObject({ code: 1, stderr: 'flagged refused recur_test_sk_flag (request req_flagged)\n' });
      expect(await recurAsync(['events', 'tail'], env)).toMatchObject({ code: 1, stderr: 'from-env refused recur_test_sk_env (request req_from-env)\n' });
    } finally {
      await Promise.all([flagged.close(), fromEnv.close()]);
    }
  }, 60_000);
});
