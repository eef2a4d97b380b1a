// The kinds of `/v1` work the capacity and scale-out benches drive (capacity.mjs, scale.mjs), each
// a request for the harness's loops (closedLoop, openLoop, phases): true when answered 2xx. The
// mix is the five kinds in turn, a fifth each, every worker starting at a different kind so that
// all kinds run at once.
import { randomBytes } from 'node:crypto';
import { v1Client } from './harness.mjs';

export const KINDS = ['create customer', 'retrieve customer', 'create subscription', 'create invoice', 'report usage'];
export const MIX = 'the five kinds in turn, a fifth each';

/** Customers (and a subscription each) made before the loops: what retrieves, subscriptions, invoices and usage records refer to. */
const SEED = 16;

/**
 * A plan with a metered component, SEED customers each with a subscription to it that
 * usage-metering has learned of (a first usage record accepted), and the requests of each kind
 * (`requests[kind]`) and of the mix (`mix`) on a keep-alive client of `connections` sockets.
 */
export async function prepareWorkload(stack, { connections }) {
  const { call, close } = v1Client(stack, connections);
  const run = randomBytes(3).toString('hex');
  const post = async (path, body, expected = [200, 201]) => {
    const { status, body: bytes } = await call('POST', path, body);
    if (!expected.includes(status)) throw new Error(`POST ${path}: ${status} ${bytes}`);
    return JSON.parse(bytes.toString());
  };
  const plan = await post('/v1/plans', { name: 'Capacity metered', pricing_model: 'flat_rate', amount_monthly: 1_000 });
  await post(`/v1/plans/${plan.id}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 1, included_quantity: 0 });
  const customers = [];
  const subscriptions = [];
  for (let s = 0; s < SEED; s++) {
    const customer = await post('/v1/customers', { name: `Seed ${s}`, email: `seed${s}.${run}@example.com` });
    customers.push(customer.id);
    subscriptions.push((await post('/v1/subscriptions', { customer: customer.id, plan: plan.id, billing_interval: 'monthly' })).id);
  }
  // usage-metering learns of a subscription from its event: a record is refused until then.
  for (const subscription of subscriptions) {
    for (let attempt = 0; ; attempt++) {
      const { status, body } = await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 1, idempotency_key: `seed-${run}-${subscription}` });
      if (status === 201 || status === 200) break;
      if (attempt > 400) throw new Error(`usage-metering never learned of ${subscription}: ${status} ${body}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const pick = (list, worker, i) => list[(((worker * 7919 + i) % list.length) + list.length) % list.length];
  const ok = (status) => status >= 200 && status < 300;
  // Loops number their requests from 0 each phase: usage keys count on across phases, so none is a replay.
  let usageSent = 0;
  const requests = {
    'create customer': async (worker, i) => {
      const { status, body } = await call('POST', '/v1/customers', { name: `Load ${worker}-${i}`, email: `load${worker}.${i}.${run}@example.com` });
      if (status === 201) customers.push(JSON.parse(body.toString()).id);
      return ok(status);
    },
    'retrieve customer': async (worker, i) => ok((await call('GET', `/v1/customers/${pick(customers, worker, i)}`)).status),
    'create subscription': async (worker, i) => ok((await call('POST', '/v1/subscriptions', { customer: pick(customers, worker, i), plan: plan.id, billing_interval: 'monthly' })).status),
    'create invoice': async (worker, i) => ok((await call('POST', '/v1/invoices', { customer: pick(customers, worker, i), amount: 1_000 + (i % 100), currency: 'zmw', description: `Load ${run} ${worker}-${i}`, status: 'open' })).status),
    'report usage': async (worker, i) => ok((await call('POST', '/v1/usage', { subscription: pick(subscriptions, worker, i), metric_name: 'api_calls', quantity: (i % 5) + 1, idempotency_key: `${run}-${usageSent++}` })).status),
  };
  const mix = (worker, i) => requests[KINDS[(((worker + i) % KINDS.length) + KINDS.length) % KINDS.length]](worker, i);
  return { requests, mix, close };
}
