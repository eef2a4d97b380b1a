import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { RESPONSE_EXCERPT_MAX, sendDelivery } from '../src/deliveries/http-sender';

/**
 * The delivery-time half of the URL policy: the address a name resolves to is checked on
 * every attempt (a name that was public at creation may resolve to a private address
 * later). `localhost` stands for such a name; a real receiver listens behind it.
 */
let receiver: WebhookReceiver;
let port: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  port = new URL(receiver.url).port;
});

afterAll(async () => {
  await receiver?.stop();
});

describe('sendDelivery', () => {
  it('refuses a name that resolves to a private address unless private URLs are allowed, and sends nothing', async () => {
    const refused = await sendDelivery(`http://localhost:${port}/hooks/refused`, '{"id":"evt_1"}', {}, 5_000, false);
    expect(refused).toMatchObject({ statusCode: null, error: 'localhost resolves to a non-public address', responseExcerpt: '' });
    expect(await receiver.received('/hooks/refused')).toEqual([]);

    const allowed = await sendDelivery(`http://localhost:${port}/hooks/allowed`, '{"id":"evt_2"}', { 'x-recur-signature': 'sha256=00' }, 5_000, true);
    expect(allowed).toMatchObject({ statusCode: 200, error: null, responseExcerpt: '{"received":true}' });
    const [arrival] = await receiver.received('/hooks/allowed');
    expect({ body: arrival.body, signature: arrival.headers['x-recur-signature'] }).toEqual({ body: '{"id":"evt_2"}', signature: 'sha256=00' });
  });

  it('refuses an IP-literal URL on a private address unless private URLs are allowed, and sends nothing', async () => {
    // The URL parser writes the IPv4-mapped literal in hex (::ffff:7f00:1): still 127.0.0.1.
    for (const [host, shown] of [['127.0.0.1', '127.0.0.1'], ['[::ffff:127.0.0.1]', '::ffff:7f00:1']]) {
      const refused = await sendDelivery(`http://${host}:${port}/hooks/literal`, '{"id":"evt_3"}', {}, 5_000, false);
      expect({ host, ...refused }).toMatchObject({ host, statusCode: null, error: `${shown} is a non-public address`, responseExcerpt: '' });
    }
    expect(await receiver.received('/hooks/literal')).toEqual([]);

    const allowed = await sendDelivery(`http://127.0.0.1:${port}/hooks/literal-allowed`, '{"id":"evt_4"}', {}, 5_000, true);
    expect(allowed).toMatchObject({ statusCode: 200, error: null });
  });

  it('fails an attempt with no answer within the timeout, and one whose connection is refused', async () => {
    const hung = await sendDelivery(`http://127.0.0.1:${port}/hooks/hang?mode=hang`, '{"id":"evt_5"}', {}, 300, true);
    expect(hung).toMatchObject({ statusCode: null, error: 'no answer within 300 ms', responseExcerpt: '' });
    expect(hung.durationMs).toBeGreaterThanOrEqual(290);

    const refused = await sendDelivery(`http://127.0.0.1:${await freePort()}/nobody`, '{"id":"evt_6"}', {}, 5_000, true);
    expect(refused).toMatchObject({ statusCode: null, responseExcerpt: '' });
    expect(refused.error).toMatch(/ECONNREFUSED/);
  });

  it('keeps the status and the first characters of a long answer', async () => {
    const long = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(503, { 'content-type': 'text/plain' }).end('é'.repeat(3 * RESPONSE_EXCERPT_MAX)));
    });
    await new Promise<void>((resolve) => long.listen(0, '127.0.0.1', resolve));
    try {
      const answered = await sendDelivery(`http://127.0.0.1:${(long.address() as AddressInfo).port}/long`, '{"id":"evt_7"}', {}, 5_000, true);
      expect(answered).toMatchObject({ statusCode: 503, error: null, responseExcerpt: 'é'.repeat(RESPONSE_EXCERPT_MAX) });
    } finally {
      long.close();
    }
  });
});
