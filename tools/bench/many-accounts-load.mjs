// The mixed read/write load of the overload and soak benches (overload.mjs, soak.mjs): many
// accounts, each with its own sandbox key and its own customers, so no one key's rate limit is
// what refuses a request; every answer tallied by status with its latency.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { operatorSandboxKey, percentile, v1Client } from './harness.mjs';

/**
 * One request in four creates a customer (a write: its row, its outbox events, its webhook
 * delivery when an endpoint listens), two retrieve one of the account's customers by id, one
 * lists the account's customers (10 a page).
 */
export const MIX = 'create 1/4, retrieve by id 2/4, list 1/4';

/** A tally of answers by status class: count and latencies (ms). */
export function outcomes() {
  const byStatus = new Map();
  return {
    record(status, ms) {
      const key = status === 0 ? 'no answer' : String(status);
      if (!byStatus.has(key)) byStatus.set(key, []);
      byStatus.get(key).push(ms);
    },
    /** Latencies of the answers whose status `accept` takes, ascending. */
    latencies(accept) {
      return [...byStatus].filter(([status]) => accept(status)).flatMap(([, values]) => values).sort((a, b) => a - b);
    },
    /** `200 1234, 201 456, 503 789`. */
    describe() {
      return [...byStatus].sort(([a], [b]) => a.localeCompare(b)).map(([status, values]) => `${status} ${values.length}`).join(', ');
    },
    count: (accept) => [...byStatus].filter(([status]) => accept(status)).reduce((sum, [, values]) => sum + values.length, 0),
  };
}

export const isSuccess = (status) => status.startsWith('2');
export const isShed = (status) => status === '503' || status === '429';

/** p50 / p99 of ascending latencies: `p50 1.2 ms, p99 9.9 ms` (— when none). */
export const p50p99 = (sorted) => (sorted.length === 0 ? '—' : `p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms`);

/**
 * `accounts` accounts made through the operator API, their rate limits raised out of the way
 * (operatorSandboxKey), each with a keep-alive client of `connections` sockets and `seed` customers.
 */
export async function prepareAccounts(stack, { accounts, connections, seed = 5 }) {
  const prepared = [];
  for (let n = 0; n < accounts; n++) {
    const key = await operatorSandboxKey(stack.adminUrl, stack.operatorToken);
    const client = v1Client({ url: stack.url, key }, connections);
    const account = { client, ids: [] };
    for (let i = 0; i < seed; i++) {
      const { status, body } = await client.call('POST', '/v1/customers', { name: `Seed ${n}-${i}`, email: `seed${n}.${i}@example.com` });
      if (status !== 201) throw new Error(`seed customer: ${status} ${body}`);
      account.ids.push(JSON.parse(body.toString()).id);
    }
    prepared.push(account);
  }
  return prepared;
}

/**
 * A receiver of webhook deliveries (answers 204) and an endpoint for `customer.created` on it in
 * every account: each create then also makes a delivery job. `received()` counts the deliveries.
 */
export async function listenForCustomerCreated(accounts) {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/hooks`;
  for (const { client } of accounts) {
    const { status, body } = await client.call('POST', '/v1/webhooks', { url, events: ['customer.created'] });
    if (status !== 201) throw new Error(`webhook endpoint: ${status} ${body}`);
  }
  return { received: () => received, close: () => server.close() };
}

/**
 * The mixed request (MIX) for the harness's loops: the accounts take turns (every one as loaded as
 * the others, whatever the loop's numbering), and each answer's status and latency go to `tally`
 * (an `outcomes()`); true for a 2xx.
 */
export function mixedRequest(accounts, tally) {
  let turn = 0;
  return async (worker, i) => {
    const account = accounts[turn++ % accounts.length];
    const kind = ((i % 4) + 4) % 4;
    const started = performance.now();
    let status = 0;
    try {
      if (kind === 0) {
        const answer = await account.client.call('POST', '/v1/customers', { name: `Load ${worker}-${i}`, email: `load.${randomBytes(4).toString('hex')}@example.com` });
        status = answer.status;
        if (status === 201) account.ids.push(JSON.parse(answer.body.toString()).id);
      } else if (kind === 3) {
        status = (await account.client.call('GET', '/v1/customers?limit=10')).status;
      } else {
        status = (await account.client.call('GET', `/v1/customers/${account.ids[(worker * 31 + i) % account.ids.length]}`)).status;
      }
    } finally {
      tally.record(status, performance.now() - started);
    }
    return status >= 200 && status < 300;
  };
}

export const closeAccounts = (accounts) => Promise.all(accounts.map(({ client }) => client.close()));
