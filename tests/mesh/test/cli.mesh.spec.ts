import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Recur } from '@recur/node';
import { startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import { api, eventually, type Mesh, MESH_START_TIMEOUT_MS, sleep, startMesh } from './mesh';

/**
 * The `recur` command (libs/cli, docs/cli.md) against the real mesh, run as a developer runs it
 * (bin/recur.js as its own process): `recur listen` forwards real events to a local HTTP server,
 * signed so that @recur/webhooks' verifier takes them and byte for byte the body webhook-dispatch
 * delivers; `recur trigger invoice.paid` makes a real invoice.paid event; a burst of creates is
 * forwarded whole, none twice; `recur events tail` prints what happens.
 */
const BIN = join(__dirname, '..', '..', '..', 'libs', 'cli', 'bin', 'recur.js');
/** Poll often: a test waits less, and more reads fall within one second of `created`. */
const INTERVAL = ['--interval', '200'];

interface RunningRecur {
  lines: string[];
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Ctrl-C; resolves with the exit code. */
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcessWithoutNullStreams>();

function startRecur(args: string[]): RunningRecur {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, RECUR_API_KEY: '', RECUR_BASE_URL: '' } });
  running.add(child);
  const lines: string[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    lines.push(...complete);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (running.delete(child), resolve(code))));
  return {
    lines,
    waitFor: (pattern, timeoutMs = 30_000) =>
      eventually(async () => {
        if (child.exitCode !== null) throw new Error(`recur ${args[0]} exited ${child.exitCode}: ${stderr}`);
        for (const line of lines) {
          const match = pattern.exec(line);
          if (match) return match;
        }
        return undefined;
      }, timeoutMs, `recur ${args.join(' ')} to print ${pattern}`),
    stop: () => (child.kill('SIGINT'), exited),
  };
}

/** Runs a command to its end. */
async function runRecur(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

let mesh: Mesh;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  for (const child of running) child.kill('SIGKILL');
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

const client = (key: string) => ['--api-key', key, '--base-url', mesh.baseUrl];

describe('recur against the mesh', () => {
  it('listen forwards a real event signed as the webhooks are: the verifier takes it, and its body is the delivery’s to the byte; events tail prints it', async () => {
    const { keys } = await mesh.createAccount('CLI listen');
    const call = api(mesh, keys.test);
    // A real endpoint too, to compare what webhook-dispatch delivers with what the CLI forwards.
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/listen-endpoint`, events: ['customer.created'] });
    expect(endpoint.status).toBe(201);

    const listen = startRecur(['listen', ...client(keys.test), `--forward-to=${receiver.url}/listen-local`, ...INTERVAL]);
    const tail = startRecur(['events', 'tail', ...client(keys.test), '--type', 'customer.created', ...INTERVAL]);
    const [, secret] = await listen.waitFor(/^Ready! Your webhook signing secret is (whsec_[0-9A-Za-z]{32}) /);
    await tail.waitFor(/^Tailing customer\.created/);

    const customer = await call('POST', '/v1/customers', { name: 'Listened To', email: 'listened@example.com' });
    expect(customer.status).toBe(201);
    const [forwarded] = await eventually(async () => {
      const received = await receiver.received('/listen-local');
      return received.length > 0 ? received : undefined;
    }, 30_000, 'the forward to the local server');
    const event = constructEvent<{ object: { id: string } }>(forwarded.body, forwarded.headers, secret);
    expect(event).toMatchObject({ type: 'customer.created', livemode: false, data: { object: { id: customer.body.id } } });
    expect(() => constructEvent(forwarded.body, forwarded.headers, endpoint.body.secret)).toThrow(/signature/);

    const [delivered] = await eventually(async () => {
      const received = await receiver.received('/listen-endpoint');
      return received.length > 0 ? received : undefined;
    }, 30_000, 'the webhook delivery');
    expect(forwarded.body).toBe(delivered.body);
    expect(constructEvent(delivered.body, delivered.headers, endpoint.body.secret).id).toBe(event.id);

    await listen.waitFor(new RegExp(`  customer\\.created  ${event.id}  --> POST ${receiver.url}/listen-local \\[200\\] \\d+ ms$`));
    await tail.waitFor(new RegExp(`  customer\\.created  ${event.id}  ${customer.body.id}$`));
    expect(await listen.stop()).toBe(0);
    expect(await tail.stop()).toBe(0);
  });

  it('trigger invoice.paid makes a real invoice.paid event, which listen --events invoice.paid forwards alone', async () => {
    const { keys } = await mesh.createAccount('CLI trigger');
    const listen = startRecur(['listen', ...client(keys.test), '--forward-to', `${receiver.url}/trigger-local`, '--events', 'invoice.paid', ...INTERVAL]);
    const [, secret] = await listen.waitFor(/^Ready! Your webhook signing secret is (whsec_\w+) /);

    const triggered = await runRecur(['trigger', 'invoice.paid', ...client(keys.test)]);
    expect(triggered).toMatchObject({ code: 0, stderr: '' });
    const [, eventId, invoiceId] = /^Trigger succeeded: (evt_\w+) invoice\.paid about (in_\w+)$/m.exec(triggered.stdout)!;
    expect(triggered.stdout).toMatch(/made payment_method\s+pm_\w+\s+\(\+260971000001\)/);

    // Read back through /v1, not through the CLI: the event and the invoice are real.
    const call = api(mesh, keys.test);
    expect((await call('GET', `/v1/events/${eventId}`)).body).toMatchObject({ type: 'invoice.paid', data: { object: { id: invoiceId, status: 'paid' } } });
    expect((await call('GET', `/v1/invoices/${invoiceId}`)).body).toMatchObject({ status: 'paid', collection_method: 'charge_automatically' });

    const forwards = await eventually(async () => {
      const received = await receiver.received('/trigger-local');
      return received.length > 0 ? received : undefined;
    }, 30_000, 'the invoice.paid forward');
    // The fixture's customer.created and invoice.created were left out by --events.
    await sleep(1_000);
    expect((await receiver.received('/trigger-local')).map((request) => constructEvent(request.body, request.headers, secret).id)).toEqual([eventId]);
    expect(forwards).toHaveLength(1);
    await listen.stop();
  });

  it('trigger makes a real event of every type its --help lists', async () => {
    const { keys } = await mesh.createAccount('CLI every trigger');
    const help = await runRecur(['trigger', '--help']);
    const types = [...help.stdout.matchAll(/^ {2}([a-z_]+\.[a-z_]+) /gm)].map(([, type]) => type);
    expect(types).toHaveLength(10);
    const call = api(mesh, keys.test);
    const outcomes = await Promise.all(
      types.map(async (type) => {
        const triggered = await runRecur(['trigger', type, ...client(keys.test)]);
        const match = /^Trigger succeeded: (evt_\w+) (\S+) about (\w+)$/m.exec(triggered.stdout);
        if (!match) return { type, failed: `${triggered.code}: ${triggered.stderr}` };
        const event = (await call('GET', `/v1/events/${match[1]}`)).body as { type: string; data: { object: { id: string } } };
        return { type, event: event.type, about: event.data.object.id === match[3] };
      }),
    );
    expect(outcomes).toEqual(types.map((type) => ({ type, event: type, about: true })));
  });

  it('forwards a burst of creates whole and none twice, as the events of each second keep arriving across reads', async () => {
    const { keys } = await mesh.createAccount('CLI burst');
    const listen = startRecur(['listen', ...client(keys.test), '--forward-to', `${receiver.url}/burst-local`, '--events', 'customer.created', ...INTERVAL]);
    const [, secret] = await listen.waitFor(/^Ready! Your webhook signing secret is (whsec_\w+) /);
    const recur = new Recur(keys.test, { baseUrl: mesh.baseUrl, maxRetries: 10 });

    const BURST = 60;
    // In waves of ten: the events of one second are recorded across several of the listener's reads.
    const created: string[] = [];
    for (let wave = 0; wave < BURST / 10; wave++) {
      const customers = await Promise.all(Array.from({ length: 10 }, (_, index) => recur.customers.create({ name: `Burst ${wave}.${index}`, email: `burst${wave}.${index}@example.com` })));
      created.push(...customers.map((customer) => customer.id));
      await sleep(150);
    }
    const forwarded = async () => (await receiver.received('/burst-local')).map((request) => constructEvent<{ object: { id: string } }>(request.body, request.headers, secret));
    await eventually(async () => ((await forwarded()).length >= BURST ? true : undefined), 60_000, `${BURST} forwards`);
    // Several more reads, for a repeat to show itself.
    await sleep(1_500);
    const events = await forwarded();
    expect(events).toHaveLength(BURST);
    expect(new Set(events.map((event) => event.id)).size).toBe(BURST);
    expect(events.map((event) => event.data.object.id).sort()).toEqual([...created].sort());
    const seconds = new Set(events.map((event) => event.created));
    expect(seconds.size).toBeLessThan(BURST);
    await listen.stop();
  });
});
