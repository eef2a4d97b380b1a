import { queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import { api, eventually, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Metered billing as an integrator meets it, through the gateway only, every app its own
 * process: a plan with a metered component carrying a plan-level usage_limit, a subscription on
 * a test clock, usage records, the 80 %/100 % alerts from the plan's limit (delivered once each
 * to a real receiver), the upcoming invoice showing the usage so far, the clock advanced past
 * the renewal — whose invoice bills the period's usage exactly as the preview said — and a late
 * record for the invoiced period, which lands on the next invoice naming its period, once.
 */
let mesh: Mesh;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;

const DAY = 86_400;
const START = Date.UTC(2030, 0, 1, 12) / 1000;
const FEB = Date.UTC(2030, 1, 1, 12) / 1000;
const MAR = Date.UTC(2030, 2, 1, 12) / 1000;

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
  const { keys } = await mesh.createAccount('Metered billing');
  call = api(mesh, keys.test);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

type Line = { kind: string; description: string; quantity: number; amount: number; period: { start: number; end: number } | null; tax_amounts?: unknown[] };
const usageLines = (lines: Line[]) => lines.filter((line) => line.kind === 'usage').map(({ kind, description, quantity, amount, period }) => ({ kind, description, quantity, amount, period }));

async function advanceTo(clock: string, frozenTime: number): Promise<void> {
  expect((await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: frozenTime })).status).toBe(200);
  await eventually(async () => (await call('GET', `/v1/test-clocks/${clock}`)).body.status === 'ready' || undefined, 90_000, 'the test clock to be ready');
}

async function invoiceOfPeriod(subscription: string, periodStart: number): Promise<{ lines: Line[]; total: number; subtotal: number }> {
  return eventually(async () => {
    const listed = await call('GET', `/v1/invoices?subscription=${subscription}&limit=100`);
    return listed.body.data.find((invoice: any) => invoice.period?.start === periodStart);
  }, 60_000, `the invoice of the period starting ${periodStart}`);
}

it('bills the plan-limited metered usage of each closed period on the renewal invoice, as previewed, and a late record once on the next', async () => {
  const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/hooks/metered`, events: ['usage.threshold_reached'] });
  expect(endpoint.status).toBe(201);

  // A plan with a metered component: 100 calls a month included, 2 per call beyond, a plan-level limit of 500.
  const plan = await call('POST', '/v1/plans', { name: 'API', pricing_model: 'flat_rate', amount_monthly: 1_000 });
  expect((await call('POST', `/v1/plans/${plan.body.id}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 2, usage_limit: 0 })).body.error)
    .toMatchObject({ code: 'parameter_invalid', param: 'usage_limit' });
  expect((await call('POST', `/v1/plans/${plan.body.id}/price-components`, { type: 'fixed', name: 'Support', unit_amount: 2, usage_limit: 10 })).body.error).toMatchObject({ param: 'usage_limit' });
  const component = await call('POST', `/v1/plans/${plan.body.id}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 2, included_quantity: 100, usage_limit: 400 });
  expect(component.body).toMatchObject({ object: 'price_component', type: 'metered', metric_name: 'api_calls', included_quantity: 100, usage_limit: 400 });
  expect((await call('PATCH', `/v1/plans/${plan.body.id}/price-components/${component.body.id}`, { usage_limit: null })).body.usage_limit).toBeNull();
  const patched = await call('PATCH', `/v1/plans/${plan.body.id}/price-components/${component.body.id}`, { usage_limit: 500 });
  expect(patched.body.usage_limit).toBe(500);
  expect((await call('GET', `/v1/plans/${plan.body.id}/price-components`)).body.data).toMatchObject([{ id: component.body.id, usage_limit: 500 }]);

  const clock = (await call('POST', '/v1/test-clocks', { name: 'metered', frozen_time: START })).body.id;
  const customer = await call('POST', '/v1/customers', { name: 'Metered Ltd', email: 'metered@example.com', test_clock: clock });
  const created = await call('POST', '/v1/subscriptions', { customer: customer.body.id, plan: plan.body.id, billing_interval: 'monthly' });
  expect(created.body).toMatchObject({ status: 'active', current_period_start: START, current_period_end: FEB });
  expect(created.body.price.price_components).toMatchObject([{ metric_name: 'api_calls', usage_limit: 500 }]);
  const subscription = created.body.id as string;

  // usage-metering learns the plan's limit from the subscription's event: the default limit.
  const summary = await eventually(async () => {
    const answer = await call('GET', `/v1/usage/summary?subscription=${subscription}`);
    return answer.status === 200 ? answer.body : undefined;
  }, 30_000, 'usage-metering to learn of the subscription');
  expect(summary.metrics).toEqual([{ metric_name: 'api_calls', total: 0, limit: 500, limit_source: 'plan', included_quantity: 100 }]);

  // 60 %, 90 % (crosses 80), 100 % (crosses 100), then 102 %: two alerts from the plan's limit.
  for (const [quantity, key] of [[300, 'jan-1'], [150, 'jan-2'], [50, 'jan-3'], [10, 'jan-4']] as const) {
    expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity, idempotency_key: key })).status).toBe(201);
  }
  const alerts = await call('GET', `/v1/usage/alerts?subscription=${subscription}`);
  expect(alerts.body.data.map((alert: any) => [alert.threshold, alert.usage, alert.limit, alert.period.start])).toEqual([[100, 500, 500, START], [80, 450, 500, START]]);

  // The preview shows the usage so far (510: 410 beyond the 100 included), in the period it was used in.
  const januaryUsage = { kind: 'usage', description: 'API calls (api_calls): 510 used, 100 included', quantity: 410, amount: 820, period: { start: START, end: FEB } };
  const preview = await call('GET', `/v1/subscriptions/${subscription}/upcoming-invoice`);
  expect(preview.body).toMatchObject({ period_start: FEB, subtotal: 1_000 + 820, total: 1_820 });
  expect(usageLines(preview.body.lines)).toEqual([januaryUsage]);
  expect(preview.body.lines.find((line: Line) => line.kind === 'plan')).toMatchObject({ amount: 1_000, period: { start: FEB } });

  // The clock passes the renewal: its invoice bills January's usage exactly as previewed.
  await advanceTo(clock, FEB + DAY);
  const renewal = await invoiceOfPeriod(subscription, FEB);
  expect(usageLines(renewal.lines)).toEqual([januaryUsage]);
  expect(renewal.total).toBe(preview.body.total);
  expect(renewal.lines.map(({ kind, description, quantity, amount, period, tax_amounts }) => ({ kind, description, quantity, amount, period, tax_amounts }))).toEqual(preview.body.lines);

  // A record dated in January, after January was invoiced (within the grace window), counts in
  // January and is billed on the next invoice as a late line naming January; an older one is refused.
  await eventually(async () => (await call('GET', `/v1/usage/summary?subscription=${subscription}`)).body.period?.start === FEB || undefined, 30_000, 'usage-metering to learn of the new period');
  const late = await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 40, idempotency_key: 'jan-late', timestamp: FEB - DAY });
  expect(late.body).toMatchObject({ quantity: 40, period: { start: START, end: FEB } });
  expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 1, idempotency_key: 'dec', timestamp: START - DAY })).body.error).toMatchObject({ code: 'timestamp_outside_period' });
  expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 70, idempotency_key: 'feb-1' })).status).toBe(201);

  const februaryUsage = { kind: 'usage', description: 'API calls (api_calls): 70 used, 100 included', quantity: 0, amount: 0, period: { start: FEB, end: MAR } };
  const lateLine = { kind: 'usage', description: 'API calls (api_calls): 40 more reported after the period was invoiced', quantity: 40, amount: 80, period: { start: START, end: FEB } };
  const nextPreview = await call('GET', `/v1/subscriptions/${subscription}/upcoming-invoice`);
  expect(usageLines(nextPreview.body.lines)).toEqual([februaryUsage, lateLine]);
  expect(nextPreview.body.total).toBe(1_000 + 80);

  await advanceTo(clock, MAR + DAY);
  const march = await invoiceOfPeriod(subscription, MAR);
  expect(usageLines(march.lines)).toEqual([februaryUsage, lateLine]);
  expect(march.total).toBe(1_080);
  // The February invoice was not touched, and the late units were billed exactly once.
  expect(usageLines((await invoiceOfPeriod(subscription, FEB)).lines)).toEqual([januaryUsage]);

  // The plan's limit raised each threshold once: the late record (110 % of January) and the new period raised nothing.
  expect((await call('GET', `/v1/usage/alerts?subscription=${subscription}`)).body.total).toBe(2);
  const deliveries = await eventually(async () => {
    const received = await receiver.received('/hooks/metered');
    return received.length >= 2 ? received : undefined;
  }, 60_000, 'two usage.threshold_reached deliveries');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(await receiver.received('/hooks/metered')).toHaveLength(2);
  const events = deliveries.map((delivery) => constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as any);
  expect(events.map((event) => [event.type, event.data.object.threshold, event.data.object.limit]).sort()).toEqual([['usage.threshold_reached', 100, 500], ['usage.threshold_reached', 80, 500]]);
}, 300_000);

/** A plan billing 1 000 a month per unit, with API calls metered beyond 100 included at 2 each. */
async function meteredPlan(name: string): Promise<string> {
  const plan = await call('POST', '/v1/plans', { name, pricing_model: 'per_unit', amount_monthly: 1_000 });
  expect((await call('POST', `/v1/plans/${plan.body.id}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 2, included_quantity: 100 })).status).toBe(201);
  return plan.body.id;
}

async function subscribeOnClock(planId: string, clockName: string, quantity = 1): Promise<{ clock: string; subscription: string }> {
  const clock = (await call('POST', '/v1/test-clocks', { name: clockName, frozen_time: START })).body.id;
  const customer = await call('POST', '/v1/customers', { name: `${clockName} Ltd`, email: `${clockName}@example.com`, test_clock: clock });
  const created = await call('POST', '/v1/subscriptions', { customer: customer.body.id, plan: planId, billing_interval: 'monthly', quantity });
  expect(created.body).toMatchObject({ status: 'active', current_period_start: START, current_period_end: FEB });
  await eventually(async () => (await call('GET', `/v1/usage/summary?subscription=${created.body.id}`)).status === 200 || undefined, 30_000, 'usage-metering to learn of the subscription');
  return { clock, subscription: created.body.id };
}

/** The subscription's invoices (oldest first), once `count` of them exist and a moment more has raised no other. */
async function invoicesOf(subscription: string, count: number): Promise<any[]> {
  const list = async () => (await call('GET', `/v1/invoices?subscription=${subscription}&limit=100`)).body.data.reverse();
  await eventually(async () => ((await list()).length >= count) || undefined, 60_000, `${count} invoices of ${subscription}`);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  return list();
}

const linesOf = (invoice: { lines: Line[] }) => invoice.lines.map(({ kind, description, quantity, amount, period }) => ({ kind, description, quantity, amount, period }));

it('bills the usage of the last period on one final invoice when the subscription ends at its period end', async () => {
  const { clock, subscription } = await subscribeOnClock(await meteredPlan('Ending'), 'ending');
  expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 300, idempotency_key: 'last-1' })).status).toBe(201);
  expect((await call('POST', `/v1/subscriptions/${subscription}/cancel`, { at_period_end: true })).body).toMatchObject({ status: 'active', cancel_at_period_end: true });

  await advanceTo(clock, FEB + DAY);
  expect((await call('GET', `/v1/subscriptions/${subscription}`)).body).toMatchObject({ status: 'cancelled', ended_at: FEB });
  const [first, final, ...others] = await invoicesOf(subscription, 2);
  expect(others).toEqual([]);
  expect(first).toMatchObject({ billing_reason: 'subscription_create', total: 1_000 });
  expect(final).toMatchObject({ billing_reason: 'subscription_final', status: 'open', period: { start: START, end: FEB }, subtotal: 400, total: 400 });
  expect(Number(final.number.slice(4))).toBe(Number(first.number.slice(4)) + 1);
  expect(linesOf(final)).toEqual([{ kind: 'usage', description: 'API calls (api_calls): 300 used, 100 included', quantity: 200, amount: 400, period: { start: START, end: FEB } }]);
}, 180_000);

it('cancelled now, bills the pending proration and the usage so far on one final invoice, however many cancels race', async () => {
  const { clock, subscription } = await subscribeOnClock(await meteredPlan('Cancelled now'), 'cancelled-now');
  const MID = START + 15 * DAY;
  await advanceTo(clock, MID);
  expect((await call('POST', `/v1/subscriptions/${subscription}/change-plan`, { quantity: 3 })).body).toMatchObject({ quantity: 3 });
  // What the change left pending for the next invoice, as the preview shows it.
  const prorations = linesOf((await call('GET', `/v1/subscriptions/${subscription}/upcoming-invoice`)).body).filter((line) => line.kind === 'proration');
  expect(prorations.map((line) => Math.sign(line.amount))).toEqual([-1, 1]);
  expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 150, idempotency_key: 'so-far-1' })).status).toBe(201);

  const answers = await Promise.all(Array.from({ length: 4 }, () => call('POST', `/v1/subscriptions/${subscription}/cancel`, {})));
  expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409]);
  expect(answers.find((answer) => answer.status === 409)!.body.error).toMatchObject({ code: 'subscription_cancelled' });
  expect(answers.find((answer) => answer.status === 200)!.body).toMatchObject({ status: 'cancelled', ended_at: MID });

  const [first, final, ...others] = await invoicesOf(subscription, 2);
  expect(others).toEqual([]);
  expect(first.billing_reason).toBe('subscription_create');
  const usage = { kind: 'usage', description: 'API calls (api_calls): 150 used, 100 included', quantity: 50, amount: 100, period: { start: START, end: MID } };
  expect(final).toMatchObject({ billing_reason: 'subscription_final', period: { start: START, end: MID } });
  expect(linesOf(final)).toEqual([usage, ...prorations]);
  expect(final.total).toBe(100 + prorations[0].amount + prorations[1].amount);
  // Ended: nothing further is previewed, and the clock raises nothing more.
  expect((await call('GET', `/v1/subscriptions/${subscription}/upcoming-invoice`)).status).toBe(404);
  await advanceTo(clock, FEB + DAY);
  expect(await invoicesOf(subscription, 2)).toHaveLength(2);
}, 180_000);

it('raises the final invoice once when the clock\'s process is killed (-9) after invoicing raised it, before its step was marked done', async () => {
  const { subscription } = await subscribeOnClock(await meteredPlan('Crash'), 'crash-final');
  expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 250, idempotency_key: 'crash-1' })).status).toBe(201);
  // The next invoice request invoicing answers kills the process (SIGKILL) before its step is done.
  await mesh.apps.subscription.kill('SIGTERM');
  await mesh.apps.subscription.restart({ RECUR_FAULT_CLOCK_KILL_AFTER_INVOICE: '1' });
  // The cancel commits, then its final invoice step runs and kills the process: the answer may be lost.
  await call('POST', `/v1/subscriptions/${subscription}/cancel`, {});
  expect(await mesh.apps.subscription.exited()).toBeNull();
  // At the kill: invoicing holds the final invoice, its step is still pending.
  const finalStep = async () => (await queryDatabase<{ status: string }>(
    mesh.databaseUrls.subscription, "SELECT status FROM billing_jobs WHERE subscription_id = $1 AND step_key LIKE 'final_invoice:%'", [subscription],
  )).map((row) => row.status);
  expect(await finalStep()).toEqual(['pending']);
  const atKill = await invoicesOf(subscription, 2);
  expect(atKill.map((invoice) => invoice.billing_reason)).toEqual(['subscription_create', 'subscription_final']);
  await mesh.apps.subscription.restart({ RECUR_FAULT_CLOCK_KILL_AFTER_INVOICE: '0' });
  expect((await call('GET', `/v1/subscriptions/${subscription}`)).body.status).toBe('cancelled');
  // The dead worker's lease lapses (30 s); the step runs again and invoicing answers the same invoice.
  await eventually(async () => ((await finalStep())[0] === 'done') || undefined, 90_000, 'the final invoice step to be done');
  const [first, final, ...others] = await invoicesOf(subscription, 2);
  expect(others).toEqual([]);
  expect(first.billing_reason).toBe('subscription_create');
  expect(final).toMatchObject({ id: atKill[1].id, number: atKill[1].number, billing_reason: 'subscription_final', total: 300 });
}, 180_000);

it('bills the usage of a period cut short by a billing-interval change once, on the change\'s invoice at the monthly allowance; late records once on the yearly renewal, as previewed', async () => {
  const plan = await call('POST', '/v1/plans', { name: 'Monthly or yearly', pricing_model: 'per_unit', amount_monthly: 1_000, billing_intervals: ['monthly', 'yearly'] });
  expect((await call('POST', `/v1/plans/${plan.body.id}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 2, included_quantity: 100 })).status).toBe(201);
  const { clock, subscription } = await subscribeOnClock(plan.body.id, 'interval-change');
  expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 300, idempotency_key: 'cut-1' })).status).toBe(201);

  // Half-way through January (16 of its 31 days left), monthly becomes yearly.
  const MID = START + 15 * DAY;
  await advanceTo(clock, MID);
  const changed = await call('POST', `/v1/subscriptions/${subscription}/billing-interval`, { billing_interval: 'yearly' });
  expect(changed.body).toMatchObject({ billing_interval: 'yearly', current_period_start: MID, current_period_end: Date.UTC(2031, 0, 16, 12) / 1000 });
  const YEAR_END = changed.body.current_period_end as number;

  // The change's invoice bills the new year in advance, credits the unused January, and bills
  // January's usage so far in arrears: 300 used of the month's 100 included (not the year's 1 200).
  const [first, change] = await invoicesOf(subscription, 2);
  expect(first.billing_reason).toBe('subscription_create');
  const cutUsage = { kind: 'usage', description: 'API calls (api_calls): 300 used, 100 included', quantity: 200, amount: 400, period: { start: START, end: MID } };
  expect(change).toMatchObject({ billing_reason: 'subscription_update', period: { start: MID, end: YEAR_END } });
  expect(linesOf(change)).toEqual([
    { kind: 'plan', description: 'Monthly or yearly', quantity: 1, amount: 12_000, period: { start: MID, end: YEAR_END } },
    cutUsage,
    { kind: 'proration', description: 'Unused time on Monthly or yearly (monthly) after 2030-01-16', quantity: 1, amount: -516, period: null },
  ]);
  expect(change.total).toBe(12_000 + 400 - 516);

  // A record dated in the cut period arrives after it was billed (the grace window), and the new year's usage.
  await eventually(async () => (await call('GET', `/v1/usage/summary?subscription=${subscription}`)).body.period?.start === MID || undefined, 30_000, 'usage-metering to learn of the new period');
  expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 50, idempotency_key: 'cut-late', timestamp: MID - DAY })).body)
    .toMatchObject({ quantity: 50, period: { start: START } });
  expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 700, idempotency_key: 'year-1' })).status).toBe(201);

  // The preview of the yearly renewal: the year's usage on its 1 200 included, and the late 50
  // on top of January's 300 billed, on January's allowance (all 50 beyond it).
  const renewalUsage = [
    { kind: 'usage', description: 'API calls (api_calls): 700 used, 1200 included', quantity: 0, amount: 0, period: { start: MID, end: YEAR_END } },
    { kind: 'usage', description: 'API calls (api_calls): 50 more reported after the period was invoiced', quantity: 50, amount: 100, period: { start: START, end: MID } },
  ];
  const preview = await call('GET', `/v1/subscriptions/${subscription}/upcoming-invoice`);
  expect(usageLines(preview.body.lines)).toEqual(renewalUsage);
  expect(preview.body).toMatchObject({ period_start: YEAR_END, total: 12_000 + 100 });

  // A year on, past January's old renewal date too: the renewal is the preview, and nothing else was raised.
  await advanceTo(clock, YEAR_END + DAY);
  const [, , renewal, ...others] = await invoicesOf(subscription, 3);
  expect(others).toEqual([]);
  expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', period: { start: YEAR_END }, total: preview.body.total });
  // As previewed, tax included.
  expect(renewal.lines.map(({ kind, description, quantity, amount, period, tax_amounts }: Line) => ({ kind, description, quantity, amount, period, tax_amounts }))).toEqual(preview.body.lines);
  // January's usage was billed exactly once: 300 on the change's invoice, the late 50 on the renewal.
  const januaryLines = (await invoicesOf(subscription, 3)).flatMap(linesOf).filter((line) => line.kind === 'usage' && line.period?.start === START);
  expect(januaryLines).toEqual([cutUsage, renewalUsage[1]]);
}, 240_000);
