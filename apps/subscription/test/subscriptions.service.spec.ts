// Jest (CommonJS) cannot load Nest 12's ESM; the clock's classes only need its decorators to be inert here.
jest.mock('@nestjs/common', () => ({ Injectable: () => () => undefined, Inject: () => () => undefined }));
// The event consumers' handle() is called directly here; their runtime token (and Nest's core behind it) is not needed.
jest.mock('@recur/service-host', () => ({ SERVICE_RUNTIME: Symbol('SERVICE_RUNTIME') }));

import * as grpc from '@grpc/grpc-js';
import { catalogV1, invoicingEventsV1, type ServiceClient, subscriptionV1 } from '@recur/contracts';
import { type Clock, DomainError, systemClock } from '@recur/kernel';
import { decodePublicEvent, newInternalEvent } from '@recur/messaging';
import { eventually, grpcFailure, type ServiceUnderTest, startServiceUnderTest } from '@recur/testing';
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { BillingClock, type ClaimedStep } from '../src/billing-clock/billing-clock.worker';
import { BillingJobs, type DunningPayload } from '../src/billing-clock/billing-jobs.repository';
import type { BillingInvoicing } from '../src/billing-clock/invoicing.client';
import { CustomersRepository } from '../src/customers/customers.repository';
import { PrismaService } from '../src/infrastructure/prisma.service';
import { InvoicePaidConsumer } from '../src/invoice-payments/invoice-paid.consumer';
import { InvoicePaymentFailedConsumer } from '../src/invoice-payments/invoice-payment-failed.consumer';
import { SalesLinksRepository } from '../src/sales-links/sales-links.repository';
import { SubscriptionsRepository } from '../src/subscriptions/subscriptions.repository';

/**
 * The subscription service as its own process on a real PostgreSQL database with the real
 * catalog beside it, exercised through gRPC. The service runs without its own clock worker
 * (BILLING_CLOCK_CONCURRENCY=0): each test drives BillingClock instances in this process on
 * the service's database, on real or fake time, so a real-time worker never races a
 * fake-clock one (whose month-ahead time would see the real-time worker's leases as lapsed).
 * Invoicing (the BillingInvoicing seam) is played by recordingInvoicer, which records each
 * request and, like the contract says, raises one invoice per subscription + period start,
 * and records each dunning reminder (answering sent: false for invoices in paidInvoices);
 * the real call to invoicing is proven in the mesh (billing-clock.mesh.spec.ts).
 */
const tenant = { accountId: 'acct_subs', livemode: false };
const DAY = 86_400_000;

interface RaiseRecord {
  subscriptionId: string;
  periodStart: number;
  requestId: string;
  billingReason: string;
  total: number;
}
/** Every CreateSubscriptionInvoice request, in arrival order; and the invoices raised (one per period). */
const requests: RaiseRecord[] = [];
const invoices = new Map<string, string>();
/** Every SendDunningReminder request, in arrival order; invoices in `paidInvoices` answer sent: false, as invoicing does for a paid one. */
const reminders: DunningPayload[] = [];
const paidInvoices = new Set<string>();

function record(subscriptionId: string, periodStart: number, requestId: string, billingReason: string, total: number): string {
  requests.push({ subscriptionId, periodStart, requestId, billingReason, total });
  const key = `${subscriptionId}:${periodStart}`;
  if (!invoices.has(key)) invoices.set(key, `in_${invoices.size + 1}`);
  return invoices.get(key)!;
}

let catalog: ServiceUnderTest<typeof catalogV1.CatalogService>;
let service: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let client: ServiceClient<typeof subscriptionV1.SubscriptionService>;
let prisma: PrismaService;

beforeAll(async () => {
  catalog = await startServiceUnderTest('catalog', catalogV1.CatalogService);
  service = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, {
    CATALOG_GRPC_ADDR: catalog.grpcAddress,
    // Its own clock is off, so it never calls invoicing: the test's clocks use recordingInvoicer.
    INVOICING_GRPC_ADDR: '127.0.0.1:1',
    USAGE_METERING_GRPC_ADDR: '127.0.0.1:1',
    PAYMENTS_GRPC_ADDR: '127.0.0.1:1',
    BILLING_CLOCK_CONCURRENCY: '0',
  });
  client = service.client;
  prisma = new PrismaService(service.databaseUrl);
}, 120_000);

afterAll(async () => {
  await prisma?.$disconnect();
  await service?.stop();
  await catalog?.stop();
});

async function query<T>(sql: string, values: unknown[] = []): Promise<T[]> {
  const db = new Client({ connectionString: service.databaseUrl });
  await db.connect();
  try {
    return (await db.query(sql, values)).rows as T[];
  } finally {
    await db.end();
  }
}

/** The public events of a subscription, in outbox order. */
async function publicEventTypes(subscriptionId: string): Promise<string[]> {
  const rows = await query<{ payload: object }>("SELECT payload FROM outbox_events WHERE key = $1 AND topic LIKE '%.public' ORDER BY seq", [subscriptionId]);
  return rows.map((row) => decodePublicEvent(JSON.stringify(row.payload)).type);
}

async function newPlan(fields: Partial<{ amountMonthly: bigint; billingIntervals: string[] }> = {}) {
  const { plan } = await catalog.client.createPlan({ tenant, name: 'Team', pricingModel: 'per_unit', amountMonthly: fields.amountMonthly ?? 1000n, billingIntervals: fields.billingIntervals ?? [] });
  return plan!;
}

async function newCustomer(extra: { testClockId?: string } = {}) {
  return (await client.createCustomer({ tenant, name: 'Ada', email: 'ada@example.com', ...extra })).customer!;
}

async function newSubscription(extra: { trialDays?: number; metadata?: Record<string, string> } = {}) {
  const [plan, customer] = await Promise.all([newPlan(), newCustomer()]);
  const { subscription } = await client.createSubscription({ tenant, customerId: customer.id, planId: plan.id, billingInterval: 'monthly', quantity: 2, ...extra });
  return subscription!;
}

/** A BillingClock in this process, on the service's database, reading `clock`. */
function billingClock(clock: Clock, invoicer: BillingInvoicing = recordingInvoicer) {
  return new BillingClock(prisma, new SubscriptionsRepository(prisma, new BillingJobs(clock)), invoicer, clock, { pollMs: 20, leaseMs: 30_000 });
}

const recordingInvoicer: BillingInvoicing = {
  raise: async (batch) => batch.map(({ subscriptionId, requestId, invoice }) => ({ invoiceId: record(subscriptionId, invoice.period_start, requestId, invoice.billing_reason, invoice.total) })),
  remind: async (_tenant, reminder) => {
    reminders.push(reminder);
    return !paidInvoices.has(reminder.invoice_id);
  },
};

/** Claims and runs due steps at `at` until none is left (a step's successor may be due at once). */
async function drain(clock: BillingClock, at: Date): Promise<void> {
  for (let steps = await clock.claim(100, at); steps.length > 0; steps = await clock.claim(100, at)) {
    for (const step of steps) await clock.run(step);
  }
}

/** Runs every step due now, as the service's own worker would. */
function drainNow(): Promise<void> {
  const now = new Date();
  return drain(billingClock(() => now), now);
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

describe('SubscriptionService subscriptions', () => {
  it('creates an active subscription with a price snapshot, bills its first period once and publishes subscription.created', async () => {
    const subscription = await newSubscription({ metadata: { crm: '7' } });
    expect(subscription).toMatchObject({ status: 'active', billingInterval: 'monthly', quantity: 2, periodsBilled: 1, metadata: { crm: '7' } });
    expect(subscription.id).toMatch(/^sub_/);
    expect(subscription.price).toMatchObject({ pricingModel: 'per_unit', amountMonthly: { amountMinor: 1000n, currency: 'usd' } });
    const start = new Date(Number(subscription.currentPeriodStart) * 1000);
    const end = new Date(Number(subscription.currentPeriodEnd) * 1000);
    expect(end.getUTCMonth()).toBe((start.getUTCMonth() + 1) % 12);
    // The clock raises the first period's invoice, priced by @recur/pricing (2 × 1000).
    await drainNow();
    expect(requests.filter((request) => request.subscriptionId === subscription.id)).toEqual([
      { subscriptionId: subscription.id, periodStart: Number(subscription.currentPeriodStart), requestId: `invoice:${subscription.id}:${subscription.currentPeriodStart}`, billingReason: 'subscription_create', total: 2000 },
    ]);
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created']);
    // The first test of the file also waits for the processes' cold start.
  }, 20_000);

  it('refuses bad input with the offending field and stores nothing', async () => {
    const [plan, customer] = await Promise.all([newPlan({ billingIntervals: ['monthly'] }), newCustomer()]);
    const base = { tenant, customerId: customer.id, planId: plan.id, billingInterval: 'monthly' };
    expect(await grpcFailure(client.createSubscription({ ...base, planId: 'plan_nope' }))).toEqual({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'plan' });
    expect(await grpcFailure(client.createSubscription({ ...base, customerId: 'cus_nope' }))).toEqual({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'customer' });
    expect(await grpcFailure(client.createSubscription({ ...base, billingInterval: 'yearly' }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'billing_interval' });
    expect(await grpcFailure(client.createSubscription({ ...base, quantity: 0 }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'quantity' });
    expect(await grpcFailure(client.createSubscription({ ...base, trialDays: 3, trialEnd: BigInt(seconds(new Date()) + 86_400) }))).toMatchObject({ param: 'trial_end' });
    expect(await grpcFailure(client.createSubscription({ ...base, trialEnd: BigInt(seconds(new Date()) - 60) }))).toMatchObject({ param: 'trial_end' });
    expect(await grpcFailure(client.createSubscription({ ...base, tenant: { accountId: 'acct_other', livemode: false } }))).toMatchObject({ errorCode: 'resource_missing', param: 'customer' });
    await catalog.client.archivePlan({ tenant, id: plan.id });
    expect(await grpcFailure(client.createSubscription(base))).toEqual({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'plan_archived', param: undefined });
    const deleted = await newCustomer();
    await client.deleteCustomer({ tenant, id: deleted.id });
    expect(await grpcFailure(client.createSubscription({ ...base, planId: (await newPlan()).id, customerId: deleted.id }))).toMatchObject({ errorCode: 'customer_deleted' });
    expect((await client.listSubscriptions({ tenant, customerId: customer.id, page: { limit: 100 } })).page!.total).toBe(0);
  });

  it('moves through the state machine, refusing forbidden moves with 409 codes and publishing the spec\'s events', async () => {
    const subscription = await newSubscription();
    const id = subscription.id;
    const call = (method: 'pauseSubscription' | 'resumeSubscription' | 'reactivateSubscription', extra = {}) => client[method]({ tenant, id, ...extra });
    expect(await grpcFailure(call('resumeSubscription'))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'subscription_not_paused' });
    expect(await grpcFailure(client.extendTrial({ tenant, id, trialEnd: BigInt(seconds(new Date()) + 30 * 86_400) }))).toMatchObject({ errorCode: 'subscription_not_trialing' });
    expect(await grpcFailure(call('reactivateSubscription'))).toMatchObject({ errorCode: 'subscription_not_cancelled' });

    expect((await call('pauseSubscription')).subscription).toMatchObject({ status: 'paused' });
    expect(await grpcFailure(call('pauseSubscription'))).toMatchObject({ errorCode: 'subscription_not_active' });
    expect(await grpcFailure(client.cancelSubscription({ tenant, id, atPeriodEnd: true }))).toMatchObject({ errorCode: 'subscription_paused' });
    const resumed = (await call('resumeSubscription')).subscription!;
    expect(resumed).toMatchObject({ status: 'active', periodsBilled: 2 });

    expect((await client.cancelSubscription({ tenant, id, atPeriodEnd: true })).subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
    expect(await grpcFailure(client.cancelSubscription({ tenant, id, atPeriodEnd: true }))).toMatchObject({ errorCode: 'subscription_cancel_scheduled' });
    expect((await call('reactivateSubscription')).subscription).toMatchObject({ id, status: 'active', cancelAtPeriodEnd: false });

    expect((await client.cancelSubscription({ tenant, id })).subscription).toMatchObject({ status: 'cancelled' });
    expect(await grpcFailure(client.cancelSubscription({ tenant, id }))).toMatchObject({ errorCode: 'subscription_cancelled' });
    const reactivated = (await call('reactivateSubscription')).subscription!;
    expect(reactivated).toMatchObject({ status: 'active', reactivatedFrom: id, customerId: subscription.customerId, quantity: 2, periodsBilled: 1 });
    expect(reactivated.id).not.toBe(id);
    expect(await grpcFailure(call('reactivateSubscription'))).toMatchObject({ errorCode: 'subscription_already_reactivated' });

    expect(await publicEventTypes(id)).toEqual([
      'subscription.created', 'subscription.paused', 'subscription.resumed', 'subscription.updated', 'subscription.updated', 'subscription.cancelled',
    ]);
    expect(await publicEventTypes(reactivated.id)).toEqual(['subscription.reactivated']);
    // A cancelled subscription has nothing left on the clock; the live one has its renewal.
    const pending = await query<{ subscription_id: string; kind: string }>("SELECT subscription_id, kind FROM billing_jobs WHERE subscription_id = ANY($1) AND status = 'pending' AND kind <> 'invoice'", [[id, reactivated.id]]);
    expect(pending).toEqual([{ subscription_id: reactivated.id, kind: 'renew' }]);
  });

  it('keeps tenants apart and lists with filters', async () => {
    const subscription = await newSubscription();
    expect(await grpcFailure(client.getSubscription({ tenant: { ...tenant, livemode: true }, id: subscription.id }))).toMatchObject({ code: grpc.status.NOT_FOUND, errorCode: 'resource_missing' });
    expect(await grpcFailure(client.cancelSubscription({ tenant: { accountId: 'acct_other', livemode: false }, id: subscription.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    const listed = await client.listSubscriptions({ tenant, customerId: subscription.customerId, status: 'active', page: { limit: 10 } });
    expect(listed.subscriptions.map((item) => item.id)).toEqual([subscription.id]);
    expect(await grpcFailure(client.listSubscriptions({ tenant, status: 'dormant' }))).toMatchObject({ param: 'status' });
  });

  it('ends a trial on time: trialing, then active with its first period billed', async () => {
    const subscription = await newSubscription({ trialDays: 14 });
    expect(subscription).toMatchObject({ status: 'trialing', periodsBilled: 0 });
    expect(Number(subscription.trialEnd) - Number(subscription.trialStart)).toBe(14 * 86_400);
    const extended = (await client.extendTrial({ tenant, id: subscription.id, trialEnd: subscription.trialEnd! + 86_400n })).subscription!;
    expect(extended).toMatchObject({ status: 'trialing', trialEnd: subscription.trialEnd! + 86_400n, currentPeriodEnd: subscription.trialEnd! + 86_400n });
    const fake = new Date(Number(extended.trialEnd) * 1000 + 1000);
    await drain(billingClock(() => fake), fake);
    const active = (await client.getSubscription({ tenant, id: subscription.id })).subscription!;
    expect(active).toMatchObject({ status: 'active', currentPeriodStart: extended.trialEnd, periodsBilled: 1 });
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created', 'subscription.activated']);
    expect(requests.filter((request) => request.subscriptionId === subscription.id).map((request) => request.periodStart)).toEqual([Number(extended.trialEnd)]);
  });
});

describe('the billing clock', () => {
  it('catches up three missed periods once each, in order, with three workers racing', async () => {
    const subscription = await newSubscription();
    await drainNow();
    // The service was "down" for three period ends: the fake time is a day past the third.
    const firstEnd = new Date(Number(subscription.currentPeriodEnd) * 1000);
    const fake = new Date(firstEnd.getTime() + 62 * DAY + DAY);
    const workers = [billingClock(() => fake), billingClock(() => fake), billingClock(() => fake)];
    await Promise.all(workers.map((worker) => worker.onApplicationBootstrap()));
    try {
      await eventually(async () => (await client.getSubscription({ tenant, id: subscription.id })).subscription!.periodsBilled === 4 && (await query("SELECT 1 FROM billing_jobs WHERE subscription_id = $1 AND kind = 'invoice' AND status = 'pending'", [subscription.id])).length === 0, 20_000, 'three renewals');
    } finally {
      await Promise.all(workers.map((worker) => worker.onModuleDestroy()));
    }
    const renewed = (await client.getSubscription({ tenant, id: subscription.id })).subscription!;
    expect(new Date(Number(renewed.currentPeriodStart) * 1000).getUTCMonth()).toBe((firstEnd.getUTCMonth() + 2) % 12);
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created', 'subscription.activated', 'subscription.activated', 'subscription.activated']);
    const mine = requests.filter((request) => request.subscriptionId === subscription.id);
    const starts = mine.map((request) => request.periodStart);
    // Each period requested once (no worker ran a step twice), and in period order.
    expect(starts).toEqual([...new Set(starts)].sort((a, b) => a - b));
    expect(starts).toHaveLength(4);
    expect(mine.slice(1).every((request) => request.billingReason === 'subscription_cycle' && request.total === 2000)).toBe(true);
    const renewals = await query<{ status: string; attempts: number }>("SELECT status, attempts FROM billing_jobs WHERE subscription_id = $1 AND kind = 'renew' ORDER BY run_at", [subscription.id]);
    expect(renewals).toEqual([{ status: 'done', attempts: 1 }, { status: 'done', attempts: 1 }, { status: 'done', attempts: 1 }, { status: 'pending', attempts: 0 }]);
  }, 60_000);

  it('a step whose worker died is run by another once its lease lapses, and only once', async () => {
    const subscription = await newSubscription();
    await drainNow();
    let now = new Date(Number(subscription.currentPeriodEnd) * 1000 + DAY);
    const clock = () => now;
    const dead = billingClock(clock);
    const survivor = billingClock(clock);
    // The first worker leases the renewal and is killed before running it.
    const leased = (await dead.claim(100, now)).filter((step: ClaimedStep) => step.subscription_id === subscription.id);
    expect(leased.map((step) => step.kind)).toEqual(['renew']);
    expect((await survivor.claim(100, now)).filter((step) => step.subscription_id === subscription.id)).toEqual([]);
    now = new Date(now.getTime() + 31_000);
    const taken = (await survivor.claim(100, now)).filter((step) => step.subscription_id === subscription.id);
    expect(taken.map((step) => step.step_key)).toEqual(leased.map((step) => step.step_key));
    await survivor.run(taken[0]);
    // The "dead" worker comes back and runs its stale lease: the locked re-check makes it a no-op.
    await dead.run(leased[0]);
    const after = (await client.getSubscription({ tenant, id: subscription.id })).subscription!;
    expect(after.periodsBilled).toBe(2);
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created', 'subscription.activated']);
    expect(await query("SELECT 1 FROM billing_jobs WHERE subscription_id = $1 AND kind = 'invoice'", [subscription.id])).toHaveLength(2);
  });

  it('bills a subscription\'s periods in order: a later period\'s invoice waits while an earlier one is refused', async () => {
    const subscription = await newSubscription();
    const firstStart = Number(subscription.currentPeriodStart);
    const secondStart = Number(subscription.currentPeriodEnd);
    const fake = new Date(secondStart * 1000 + DAY);
    const mine = (steps: ClaimedStep[]) => steps.filter((step) => step.subscription_id === subscription.id);
    const refuse = async () => Promise.reject(new DomainError('unavailable', 'service_unavailable', 'invoicing is down'));
    const down = billingClock(() => fake, { raise: refuse, remind: refuse });
    // The first period's invoice is refused (due again later); the renewal queues the second period's.
    const first = mine(await down.claim(100, fake));
    expect(first.map((step) => step.kind).sort()).toEqual(['invoice', 'renew']);
    for (const step of first) await down.run(step);
    const queued = await query<{ run_at: Date; status: string }>("SELECT run_at, status FROM billing_jobs WHERE subscription_id = $1 AND kind = 'invoice' ORDER BY run_at", [subscription.id]);
    expect(queued.map((step) => [Math.floor(step.run_at.getTime() / 1000), step.status])).toEqual([[firstStart, 'pending'], [secondStart, 'pending']]);
    // The second period's invoice is due, but an earlier one of its subscription is pending: not claimed.
    expect(mine(await down.claim(100, fake))).toEqual([]);
    // Invoicing answers again: the first period is billed, and only then the second.
    const [retry] = await query<{ due_at: Date }>("SELECT due_at FROM billing_jobs WHERE subscription_id = $1 AND kind = 'invoice' ORDER BY run_at LIMIT 1", [subscription.id]);
    const later = new Date(retry.due_at.getTime() + 1);
    const up = billingClock(() => later);
    for (let steps = mine(await up.claim(100, later)); steps.length > 0; steps = mine(await up.claim(100, later))) {
      expect(steps).toHaveLength(1);
      await up.run(steps[0]);
    }
    expect(requests.filter((request) => request.subscriptionId === subscription.id).map((request) => request.periodStart)).toEqual([firstStart, secondStart]);
  });

  it('keeps an invoice request pending while invoicing cannot answer, and sends the same request when it can', async () => {
    const subscription = await newSubscription({ trialDays: 1 });
    const fake = new Date(Number(subscription.trialEnd) * 1000 + 1000);
    const unavailable = async () => Promise.reject(new DomainError('unavailable', 'service_unavailable', 'UNIMPLEMENTED'));
    const unimplemented: BillingInvoicing = { raise: unavailable, remind: unavailable };
    const down = billingClock(() => fake, unimplemented);
    for (const step of (await down.claim(100, fake)).filter((claimed) => claimed.subscription_id === subscription.id)) await down.run(step);
    const invoiceSteps = (await down.claim(100, fake)).filter((claimed) => claimed.subscription_id === subscription.id);
    expect(invoiceSteps.map((step) => step.kind)).toEqual(['invoice']);
    await down.run(invoiceSteps[0]);
    const [pending] = await query<{ status: string; attempts: number; last_error: string; due_at: Date }>(
      "SELECT status, attempts, last_error, due_at FROM billing_jobs WHERE subscription_id = $1 AND kind = 'invoice'", [subscription.id]);
    expect(pending).toMatchObject({ status: 'pending', attempts: 1, last_error: 'service_unavailable: UNIMPLEMENTED' });
    expect(pending.due_at.getTime()).toBeGreaterThan(fake.getTime());
    const later = new Date(pending.due_at.getTime() + 1);
    const up = billingClock(() => later);
    for (const step of (await up.claim(100, later)).filter((claimed) => claimed.subscription_id === subscription.id)) await up.run(step);
    const [done] = await query<{ status: string; result: string }>("SELECT status, result FROM billing_jobs WHERE subscription_id = $1 AND kind = 'invoice'", [subscription.id]);
    expect(done.status).toBe('done');
    expect(done.result).toMatch(/^in_/);
  });
});

describe('test clocks', () => {
  it('runs a customer\'s renewals when its clock advances, in order, and is ready when done', async () => {
    const start = Date.UTC(2030, 0, 31, 12);
    const { testClock } = await client.createTestClock({ tenant, name: 'year one', frozenTime: BigInt(start / 1000) });
    expect(testClock).toMatchObject({ status: 'ready', name: 'year one' });
    const customer = await newCustomer({ testClockId: testClock!.id });
    expect(customer.testClockId).toBe(testClock!.id);
    const plan = await newPlan();
    const subscription = (await client.createSubscription({ tenant, customerId: customer.id, planId: plan.id, billingInterval: 'monthly', trialDays: 14 })).subscription!;
    expect(subscription).toMatchObject({ status: 'trialing', created: BigInt(start / 1000), testClockId: testClock!.id });
    // 14 days of trial, then periods anchored on Feb 14: Mar 14 and Apr 14 renewals fall before May 1.
    const advanced = await client.advanceTestClock({ tenant, id: testClock!.id, frozenTime: BigInt(Date.UTC(2030, 4, 1) / 1000) });
    expect(advanced.testClock!).toMatchObject({ frozenTime: BigInt(Date.UTC(2030, 4, 1) / 1000), status: 'advancing' });
    // A worker on real time, as the service runs one: the clock's moves are due now.
    const worker = billingClock(systemClock);
    await worker.onApplicationBootstrap();
    try {
      await eventually(async () => (await client.getTestClock({ tenant, id: testClock!.id })).testClock!.status === 'ready', 20_000, 'the clock to be ready');
    } finally {
      await worker.onModuleDestroy();
    }
    const renewed = (await client.getSubscription({ tenant, id: subscription.id })).subscription!;
    expect(renewed).toMatchObject({ status: 'active', periodsBilled: 3, currentPeriodStart: BigInt(Date.UTC(2030, 3, 14, 12) / 1000) });
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created', 'subscription.activated', 'subscription.activated', 'subscription.activated']);
    expect(requests.filter((request) => request.subscriptionId === subscription.id).map((request) => request.periodStart)).toEqual(
      [Date.UTC(2030, 1, 14, 12), Date.UTC(2030, 2, 14, 12), Date.UTC(2030, 3, 14, 12)].map((ms) => ms / 1000),
    );
    expect(await grpcFailure(client.advanceTestClock({ tenant, id: testClock!.id, frozenTime: BigInt(start / 1000) }))).toMatchObject({ param: 'frozen_time' });
  }, 40_000);

  it('exists only in the sandbox, and a customer needs a clock of its own app', async () => {
    expect(await grpcFailure(client.createTestClock({ tenant: { ...tenant, livemode: true }, frozenTime: 2_000_000_000n }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    const { testClock } = await client.createTestClock({ tenant, frozenTime: 2_000_000_000n });
    expect(await grpcFailure(client.getTestClock({ tenant: { accountId: 'acct_other', livemode: false }, id: testClock!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await grpcFailure(client.createCustomer({ tenant: { accountId: 'acct_other', livemode: false }, name: 'Eve', email: 'eve@example.com', testClockId: testClock!.id }))).toMatchObject({ param: 'test_clock', errorCode: 'resource_missing' });
    expect((await client.deleteTestClock({ tenant, id: testClock!.id })).testClock!.deletedAt).toBeDefined();
    expect(await grpcFailure(client.getTestClock({ tenant, id: testClock!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
  });
});

describe('dunning', () => {
  const DAY_S = 86_400;
  const jobs = () => new BillingJobs(() => new Date());
  const failedConsumer = () => new InvoicePaymentFailedConsumer(prisma, new SubscriptionsRepository(prisma, jobs()), new CustomersRepository(prisma), jobs(), undefined as never);
  const paidConsumer = () => new InvoicePaidConsumer(prisma, new SubscriptionsRepository(prisma, jobs()), jobs(), new SalesLinksRepository(prisma), () => new Date(), undefined as never);
  /** An invoice event of `invoiceId` on `subscriptionId`, as invoicing's outbox would carry it. */
  const failure = (subscriptionId: string, invoiceId: string, days: number[]) =>
    newInternalEvent(tenant, invoiceId, invoicingEventsV1.InvoicePaymentFailedSchema, { invoice: { id: invoiceId, subscriptionId, status: 'failed' }, paymentId: 'pay_1', failureCode: 'payment_declined', dunningScheduleDays: days }, new Date());
  /** A one-off invoice's failure: no subscription, the customer's. */
  const oneOffFailure = (customerId: string, invoiceId: string, days: number[]) =>
    newInternalEvent(tenant, invoiceId, invoicingEventsV1.InvoicePaymentFailedSchema, { invoice: { id: invoiceId, customerId, subscriptionId: '', status: 'failed' }, paymentId: 'pay_1', failureCode: 'payment_declined', dunningScheduleDays: days }, new Date());
  const oneOffPaid = (customerId: string, invoiceId: string) =>
    newInternalEvent(tenant, invoiceId, invoicingEventsV1.InvoicePaidSchema, { invoice: { id: invoiceId, customerId, subscriptionId: '', status: 'paid' }, paymentId: 'pay_2' }, new Date());
  const paid = (subscriptionId: string, invoiceId: string) =>
    newInternalEvent(tenant, invoiceId, invoicingEventsV1.InvoicePaidSchema, { invoice: { id: invoiceId, subscriptionId, status: 'paid' }, paymentId: 'pay_2' }, new Date());
  const remindersOf = (invoiceId: string) => reminders.filter((reminder) => reminder.invoice_id === invoiceId).map((reminder) => reminder.reminder_number);
  const steps = (invoiceId: string) =>
    query<{ step_key: string; status: string; run_at: Date }>("SELECT step_key, status, run_at FROM billing_jobs WHERE kind = 'dunning' AND payload->>'invoice_id' = $1 ORDER BY run_at", [invoiceId]);

  async function subscriptionOnClock(frozenTime: number) {
    const { testClock } = await client.createTestClock({ tenant, frozenTime: BigInt(frozenTime) });
    const customer = await newCustomer({ testClockId: testClock!.id });
    const subscription = (await client.createSubscription({ tenant, customerId: customer.id, planId: (await newPlan()).id, billingInterval: 'yearly' })).subscription!;
    return { clock: testClock!, subscription };
  }
  /** Advances the test clock and runs a real-time worker (the service runs none here) until the clock is ready. */
  async function advance(clockId: string, frozenTime: number) {
    await client.advanceTestClock({ tenant, id: clockId, frozenTime: BigInt(frozenTime) });
    const worker = billingClock(systemClock);
    await worker.onApplicationBootstrap();
    try {
      await eventually(async () => (await client.getTestClock({ tenant, id: clockId })).testClock!.status === 'ready', 20_000, 'the clock to be ready');
    } finally {
      await worker.onModuleDestroy();
    }
  }

  it('walks the schedule on the test clock: one reminder per day reached, then past_due after the final one; a redelivered failure queues nothing more', async () => {
    const start = Date.UTC(2031, 0, 10, 12) / 1000;
    const { clock, subscription } = await subscriptionOnClock(start);
    const invoiceId = `in_${randomUUID()}`;
    const event = failure(subscription.id, invoiceId, [3, 7, 14]);
    expect(await failedConsumer().handle(event)).toBe('processed');
    expect(await failedConsumer().handle(event)).toBe('duplicate');
    expect((await steps(invoiceId)).map((step) => [step.step_key, step.status, step.run_at.getTime() / 1000])).toEqual([
      [`dunning:${invoiceId}:1`, 'pending', start + 3 * DAY_S],
      [`dunning:${invoiceId}:2`, 'pending', start + 7 * DAY_S],
      [`dunning:${invoiceId}:3`, 'pending', start + 14 * DAY_S],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(remindersOf(invoiceId)).toEqual([]); // the frozen clock has reached none yet

    await advance(clock.id, start + 5 * DAY_S);
    expect(remindersOf(invoiceId)).toEqual([1]);
    expect((await client.getSubscription({ tenant, id: subscription.id })).subscription!.status).toBe('active');

    await advance(clock.id, start + 14 * DAY_S);
    expect(remindersOf(invoiceId)).toEqual([1, 2, 3]);
    expect(reminders.filter((reminder) => reminder.invoice_id === invoiceId).every((reminder) => reminder.reminder_count === 3)).toBe(true);
    const pastDue = (await client.getSubscription({ tenant, id: subscription.id })).subscription!;
    expect(pastDue.status).toBe('past_due');
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created', 'subscription.past_due']);

    // Paying brings it back (the InvoicePaid consumer), once.
    const paidEvent = paid(subscription.id, invoiceId);
    expect(await paidConsumer().handle(paidEvent)).toBe('processed');
    expect(await paidConsumer().handle(paidEvent)).toBe('duplicate');
    expect((await client.getSubscription({ tenant, id: subscription.id })).subscription!.status).toBe('active');
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created', 'subscription.past_due', 'subscription.activated']);
  }, 60_000);

  it('paying stops the reminders still pending: none goes out after it, and the subscription never falls past due', async () => {
    const start = Date.UTC(2031, 5, 1, 12) / 1000;
    const { clock, subscription } = await subscriptionOnClock(start);
    const invoiceId = `in_${randomUUID()}`;
    await failedConsumer().handle(failure(subscription.id, invoiceId, [3, 7, 14]));
    await advance(clock.id, start + 4 * DAY_S);
    expect(remindersOf(invoiceId)).toEqual([1]);
    await paidConsumer().handle(paid(subscription.id, invoiceId));
    expect((await steps(invoiceId)).map((step) => step.status)).toEqual(['done', 'cancelled', 'cancelled']);
    await advance(clock.id, start + 30 * DAY_S);
    expect(remindersOf(invoiceId)).toEqual([1]);
    expect((await client.getSubscription({ tenant, id: subscription.id })).subscription!.status).toBe('active');
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created']);
  }, 60_000);

  it('a final reminder invoicing did not send (the invoice was paid there first) leaves the subscription active', async () => {
    const start = Date.UTC(2032, 0, 1, 12) / 1000;
    const { clock, subscription } = await subscriptionOnClock(start);
    const invoiceId = `in_${randomUUID()}`;
    await failedConsumer().handle(failure(subscription.id, invoiceId, [2]));
    paidInvoices.add(invoiceId);
    await advance(clock.id, start + 3 * DAY_S);
    expect(remindersOf(invoiceId)).toEqual([1]);
    expect(await query('SELECT status, result FROM billing_jobs WHERE step_key = $1', [`dunning:${invoiceId}:1`])).toEqual([{ status: 'done', result: 'not_sent' }]);
    expect((await client.getSubscription({ tenant, id: subscription.id })).subscription!.status).toBe('active');
  }, 60_000);

  it('a one-off invoice is chased on its customer\'s test clock: every reminder goes out, the final one moves no subscription; paying stops the rest', async () => {
    const start = Date.UTC(2033, 0, 1, 12) / 1000;
    const { clock, subscription } = await subscriptionOnClock(start);
    const customerId = subscription.customerId;
    const walked = `in_${randomUUID()}`;
    expect(await failedConsumer().handle(oneOffFailure(customerId, walked, [1, 2]))).toBe('processed');
    expect((await steps(walked)).map((step) => [step.status, step.run_at.getTime() / 1000])).toEqual([['pending', start + DAY_S], ['pending', start + 2 * DAY_S]]);
    expect(await query('SELECT DISTINCT subscription_id, test_clock_id FROM billing_jobs WHERE payload->>\'invoice_id\' = $1', [walked])).toEqual([{ subscription_id: null, test_clock_id: clock.id }]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(remindersOf(walked)).toEqual([]); // the customer's frozen clock has reached none yet
    await advance(clock.id, start + 3 * DAY_S);
    expect(remindersOf(walked)).toEqual([1, 2]);
    expect((await steps(walked)).map((step) => step.status)).toEqual(['done', 'done']);
    // The customer's subscription has nothing to do with the one-off invoice: the final reminder leaves it active.
    expect((await client.getSubscription({ tenant, id: subscription.id })).subscription!.status).toBe('active');
    expect(await publicEventTypes(subscription.id)).toEqual(['subscription.created']);

    const stopped = `in_${randomUUID()}`;
    await failedConsumer().handle(oneOffFailure(customerId, stopped, [1, 5]));
    await advance(clock.id, start + 5 * DAY_S);
    expect(remindersOf(stopped)).toEqual([1]);
    expect(await paidConsumer().handle(oneOffPaid(customerId, stopped))).toBe('processed');
    expect((await steps(stopped)).map((step) => step.status)).toEqual(['done', 'cancelled']);
    await advance(clock.id, start + 10 * DAY_S);
    expect(remindersOf(stopped)).toEqual([1]);
  }, 60_000);

  it('a subscription change (cancel at period end, reactivate) leaves the reminders in place', async () => {
    const start = Date.UTC(2032, 6, 1, 12) / 1000;
    const { subscription } = await subscriptionOnClock(start);
    const invoiceId = `in_${randomUUID()}`;
    await failedConsumer().handle(failure(subscription.id, invoiceId, [3, 7]));
    await client.cancelSubscription({ tenant, id: subscription.id, atPeriodEnd: true });
    await client.reactivateSubscription({ tenant, id: subscription.id });
    expect((await steps(invoiceId)).map((step) => step.status)).toEqual(['pending', 'pending']);
  });
});
