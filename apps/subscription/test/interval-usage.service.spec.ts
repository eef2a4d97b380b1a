// Jest (CommonJS) cannot load Nest 12's ESM; the clock's classes only need its decorators to be inert here.
jest.mock('@nestjs/common', () => ({ Injectable: () => () => undefined, Inject: () => () => undefined }));
jest.mock('@recur/service-host', () => ({ SERVICE_RUNTIME: Symbol('SERVICE_RUNTIME') }));

import { catalogV1, invoicingV1, subscriptionV1, usageMeteringV1 } from '@recur/contracts';
import { eventually, freePort, grpcFailure, queryDatabase, type ServiceUnderTest, startServiceUnderTest, testKafkaBrokers } from '@recur/testing';
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { BillingClock } from '../src/billing-clock/billing-clock.worker';
import { BillingJobs, type InvoicePayload } from '../src/billing-clock/billing-jobs.repository';
import type { BillingInvoicing } from '../src/billing-clock/invoicing.client';
import { UsageMeteringClient } from '../src/billing-clock/usage-metering.client';
import { PrismaService } from '../src/infrastructure/prisma.service';
import type { SubscriptionConfig } from '../src/subscription-config';
import { SubscriptionsRepository } from '../src/subscriptions/subscriptions.repository';

/**
 * The usage of a period cut short by a billing-interval change (docs/api/usage.md#a-billing-interval-change), with every part real: the subscription service, the catalog and usage-metering each
 * their own process on PostgreSQL, usage-metering learning of the subscription from its events
 * over a real Kafka broker. The service's own clock is off; the test drives a BillingClock on
 * the service's database (fake time for the renewal a year on) whose invoicer records each
 * invoice request in full, as invoicing would receive it.
 */
jest.setTimeout(90_000);

const namespace = `interval-usage-${randomBytes(4).toString('hex')}`;
const tenant = { accountId: `acct_${randomBytes(6).toString('hex')}`, livemode: false };
const DAY = 86_400;

let catalog: ServiceUnderTest<typeof catalogV1.CatalogService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;
let usageMetering: ServiceUnderTest<typeof usageMeteringV1.UsageMeteringService>;
let service: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let prisma: PrismaService;
let usageClient: UsageMeteringClient;

beforeAll(async () => {
  const brokers = await testKafkaBrokers();
  const kafka = { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: namespace };
  // The upcoming-invoice preview asks invoicing for its tax, and invoicing asks subscription for the customer.
  const subscriptionPort = await freePort();
  [catalog, usageMetering, invoicing] = await Promise.all([
    startServiceUnderTest('catalog', catalogV1.CatalogService),
    startServiceUnderTest('usage-metering', usageMeteringV1.UsageMeteringService, kafka),
    startServiceUnderTest('invoicing', invoicingV1.InvoicingService, { SUBSCRIPTION_GRPC_ADDR: `127.0.0.1:${subscriptionPort}`, SMTP_URL: 'smtp://127.0.0.1:9', INVOICE_MAIL_ON_FINALIZE: 'false' }),
  ]);
  service = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, {
    ...kafka,
    GRPC_PORT: String(subscriptionPort),
    CATALOG_GRPC_ADDR: catalog.grpcAddress,
    INVOICING_GRPC_ADDR: invoicing.grpcAddress,
    USAGE_METERING_GRPC_ADDR: usageMetering.grpcAddress,
    PAYMENTS_GRPC_ADDR: '127.0.0.1:1',
    BILLING_CLOCK_CONCURRENCY: '0',
  });
  prisma = new PrismaService(service.databaseUrl);
  usageClient = new UsageMeteringClient({ usageMeteringAddress: usageMetering.grpcAddress } as SubscriptionConfig);
}, 180_000);

let usageMeteringStopped = false;

afterAll(async () => {
  usageClient?.onModuleDestroy();
  await prisma?.$disconnect();
  await Promise.all([service?.stop(), usageMeteringStopped ? undefined : usageMetering?.stop(), catalog?.stop(), invoicing?.stop()]);
}, 60_000);

/** Every invoice request the clock sent, in order; each period raised once, as invoicing does. */
const raised: { requestId: string; invoice: InvoicePayload }[] = [];
const invoicer: BillingInvoicing = {
  raise: async (batch) => batch.map(({ requestId, invoice }) => {
    raised.push({ requestId, invoice });
    return { invoiceId: `in_${invoice.period_start}` };
  }),
  remind: async () => true,
};

/** Runs every step due at `at` with a clock that measures usage in usage-metering. */
async function drain(at: Date): Promise<void> {
  const clock = new BillingClock(prisma, new SubscriptionsRepository(prisma, new BillingJobs(() => at)), invoicer, () => at, { pollMs: 20, leaseMs: 30_000, usage: usageClient });
  for (let steps = await clock.claim(100, at); steps.length > 0; steps = await clock.claim(100, at)) {
    for (const step of steps) await clock.run(step);
  }
}

const usageBillings = (subscriptionId: string) => queryDatabase<{ billing_key: string; period_start: Date; quantity: string; late: boolean; billing_interval: string }>(
  usageMetering.databaseUrl,
  'SELECT billing_key, period_start, quantity::text, late, billing_interval FROM usage_billings WHERE subscription_id = $1 ORDER BY created_at, late',
  [subscriptionId],
);

const usageLines = (invoice: { lines: { kind: string; description: string; quantity: number | bigint; amount: number | bigint; period_start?: number | bigint; periodStart?: number | bigint }[] }) =>
  invoice.lines.filter((line) => line.kind === 'usage').map((line) => [line.description, Number(line.quantity), Number(line.amount), Number(line.period_start ?? line.periodStart)]);

async function meteredSubscription(): Promise<{ id: string; start: number }> {
  // 1 000 a month; API calls beyond 100 a month at 2 each; sold monthly and yearly.
  const { plan } = await catalog.client.createPlan({ tenant, name: 'API', pricingModel: 'flat_rate', amountMonthly: 1_000n, billingIntervals: ['monthly', 'yearly'] });
  await catalog.client.createPriceComponent({ tenant, planId: plan!.id, type: 'metered', name: 'API calls', metricName: 'api_calls', unitAmount: 2n, includedQuantity: 100n });
  const { customer } = await service.client.createCustomer({ tenant, name: 'Ada', email: 'ada@example.com' });
  const { subscription } = await service.client.createSubscription({ tenant, customerId: customer!.id, planId: plan!.id, billingInterval: 'monthly' });
  return { id: subscription!.id, start: Number(subscription!.currentPeriodStart) };
}

it('bills the cut period\'s usage once, on the interval change\'s invoice at the monthly allowance; its late records once on the yearly renewal, as previewed', async () => {
  const { id, start } = await meteredSubscription();
  await eventually(async () => (await usageMetering.client.getUsageSummary({ tenant, subscriptionId: id }).then(() => true, () => undefined)), 30_000, 'usage-metering to learn of the subscription');
  await usageMetering.client.recordUsage({ tenant, record: { subscriptionId: id, metricName: 'api_calls', quantity: 300n, idempotencyKey: 'month-1' } });

  // A change the rules refuse measures nothing: no billing is recorded for the period.
  expect(await grpcFailure(service.client.changeBillingInterval({ tenant, id, billingInterval: 'quarterly' }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'billing_interval' });
  expect(await usageBillings(id)).toEqual([]);

  // The period must have begun at least a second before it is cut (docs/api/subscriptions.md).
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const { subscription: yearly } = await service.client.changeBillingInterval({ tenant, id, billingInterval: 'yearly' });
  const cut = Number(yearly!.currentPeriodStart);
  expect(yearly).toMatchObject({ billingInterval: 'yearly', currentPeriodStart: BigInt(cut) });
  // Recorded under the cut period's own key, on the monthly interval.
  expect(await usageBillings(id)).toEqual([{ billing_key: `usage:${id}:${start}`, period_start: new Date(start * 1000), quantity: '300', late: false, billing_interval: 'monthly' }]);

  // A record dated in the cut period arrives after it was billed (the grace window): late.
  await eventually(async () => ((await usageMetering.client.getUsageSummary({ tenant, subscriptionId: id })).periodStart === BigInt(cut)) || undefined, 30_000, 'usage-metering to learn of the new period');
  await usageMetering.client.recordUsage({ tenant, record: { subscriptionId: id, metricName: 'api_calls', quantity: 50n, idempotencyKey: 'month-late', timestamp: BigInt(start) } });
  await usageMetering.client.recordUsage({ tenant, record: { subscriptionId: id, metricName: 'api_calls', quantity: 700n, idempotencyKey: 'year-1' } });
  const { upcomingInvoice: preview } = await service.client.getUpcomingInvoice({ tenant, id });

  // The clock raises the change's invoice, then (a year on) the renewal.
  const yearEnd = new Date(Number(yearly!.currentPeriodEnd) * 1000 + 1_000);
  await drain(yearEnd);
  expect(raised.map(({ requestId, invoice }) => [requestId, invoice.billing_reason])).toEqual([
    [`invoice:${id}:${start}`, 'subscription_create'],
    [`invoice:${id}:${cut}`, 'subscription_update'],
    [`invoice:${id}:${Number(yearly!.currentPeriodEnd)}`, 'subscription_cycle'],
  ]);
  const [, change, renewal] = raised.map(({ invoice }) => invoice);
  // 300 used of the month's 100 included: 200 × 2. Not 300 of the year's 1 200 (which bills 0).
  expect(usageLines(change)).toEqual([['API calls (api_calls): 300 used, 100 included', 200, 400, start]]);
  expect(change.lines.find((line) => line.kind === 'usage')).toMatchObject({ period_start: start, period_end: cut });
  const credit = change.lines.find((line) => line.kind === 'proration')!.amount;
  expect(change.total).toBe(12_000 + 400 + credit);

  // The renewal: the year's own usage (700 of 1 200 included), and the cut period's 50 late units
  // on top of the 300 billed (the month's 100 given once): all 50 billable. As previewed.
  const expectedRenewal = [['API calls (api_calls): 700 used, 1200 included', 0, 0, cut], ['API calls (api_calls): 50 more reported after the period was invoiced', 50, 100, start]];
  expect(usageLines(renewal)).toEqual(expectedRenewal);
  expect(usageLines(preview!)).toEqual(expectedRenewal);
  expect(renewal.total).toBe(Number(preview!.total));
  expect(renewal.total).toBe(12_000 + 100);

  // Every unit billed once: 300 on the change, 700 and the 50 late on the renewal; a retry of either key answers the same.
  expect((await usageBillings(id)).map((row) => [row.billing_key, row.quantity, row.late, row.billing_interval])).toEqual([
    [`usage:${id}:${start}`, '300', false, 'monthly'],
    [`usage:${id}:${cut}`, '700', false, 'yearly'],
    [`usage:${id}:${cut}`, '50', true, 'monthly'],
  ]);
  await drain(new Date(yearEnd.getTime() + 400 * DAY * 1000));
  expect(raised.filter(({ invoice }) => usageLines(invoice).some(([description]) => String(description).includes('more reported')))).toHaveLength(1);
});

it('while usage-metering cannot answer, a metered subscription\'s interval change answers UNAVAILABLE (503) and changes nothing; so does its preview', async () => {
  const { id } = await meteredSubscription();
  await usageMetering.stop();
  usageMeteringStopped = true;
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const unavailable = { code: grpc.status.UNAVAILABLE, errorCode: 'service_unavailable' };
  expect(await grpcFailure(service.client.changeBillingInterval({ tenant, id, billingInterval: 'yearly' }, { timeoutMs: 30_000 }))).toMatchObject(unavailable);
  expect(await grpcFailure(service.client.getUpcomingInvoice({ tenant, id }, { timeoutMs: 30_000 }))).toMatchObject(unavailable);
  expect((await service.client.getSubscription({ tenant, id })).subscription).toMatchObject({ billingInterval: 'monthly' });
});
