// Jest (CommonJS) cannot load Nest 12's ESM; the clock's classes only need its decorators to be inert here.
jest.mock('@nestjs/common', () => ({ Injectable: () => () => undefined, Inject: () => () => undefined }));
import { catalogV1, subscriptionV1 } from '@recur/contracts';
import { type Clock } from '@recur/kernel';
import { type ServiceUnderTest, startServiceUnderTest } from '@recur/testing';
import { BillingClock, type ClaimedStep } from '../src/billing-clock/billing-clock.worker';
import { BillingJobs } from '../src/billing-clock/billing-jobs.repository';
import type { BillingInvoicing } from '../src/billing-clock/invoicing.client';
import { PrismaService } from '../src/infrastructure/prisma.service';
import { SubscriptionsRepository } from '../src/subscriptions/subscriptions.repository';

/**
 * The billing clock worker's claims, on the subscription service's own database (its clock worker
 * off, BILLING_CLOCK_CONCURRENCY=0): invoice requests are claimed beside a backlog of renewals due
 * before them, not after it. Invoicing is played by an invoicer that raises one invoice per request.
 */
jest.setTimeout(60_000);

const tenant = { accountId: 'acct_claims', livemode: false };
const DAY = 86_400_000;
let catalog: ServiceUnderTest<typeof catalogV1.CatalogService>;
let service: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let prisma: PrismaService;

beforeAll(async () => {
  catalog = await startServiceUnderTest('catalog', catalogV1.CatalogService);
  service = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, {
    CATALOG_GRPC_ADDR: catalog.grpcAddress,
    INVOICING_GRPC_ADDR: '127.0.0.1:1',
    USAGE_METERING_GRPC_ADDR: '127.0.0.1:1',
    PAYMENTS_GRPC_ADDR: '127.0.0.1:1',
    BILLING_CLOCK_CONCURRENCY: '0',
  });
  prisma = new PrismaService(service.databaseUrl);
}, 120_000);

afterAll(async () => {
  await prisma?.$disconnect();
  await service?.stop();
  await catalog?.stop();
});

let invoiceNumber = 0;
const invoicer: BillingInvoicing = {
  raise: async (batch) => batch.map(() => ({ invoiceId: `in_${++invoiceNumber}` })),
  remind: async () => true,
};

/** A BillingClock on the service's database (its worker not started): one step a batch, two batches at once. */
const billingClock = (clock: Clock) =>
  new BillingClock(prisma, new SubscriptionsRepository(prisma, new BillingJobs(clock)), invoicer, clock, { pollMs: 20, leaseMs: 30_000, batchSize: 1, concurrency: 2 });

const kinds = (batches: ClaimedStep[][]) => batches.map((batch) => batch.map((step) => step.kind));

it('claims a due invoice request beside the renewals due before it, in a batch of its own', async () => {
  const { plan } = await catalog.client.createPlan({ tenant, name: 'Team', pricingModel: 'flat_rate', amountMonthly: 1000n, billingIntervals: [] });
  for (let i = 0; i < 3; i++) {
    const { customer } = await service.client.createCustomer({ tenant, name: 'Ada', email: 'ada@example.com' });
    await service.client.createSubscription({ tenant, customerId: customer!.id, planId: plan!.id, billingInterval: 'monthly', quantity: 1 });
  }
  // Each sale's first invoice, now: only the three renewals stay pending, due at their period end.
  const now = new Date();
  const current = billingClock(() => now);
  for (let batches = await current.claimBatches(2, now); batches.length > 0; batches = await current.claimBatches(2, now)) {
    for (const batch of batches) await current.runBatch(batch);
  }
  // A month and a day later: the three renewals are due. One runs, queueing its invoice request, due then.
  const later = new Date(now.getTime() + 32 * DAY);
  const clock = billingClock(() => later);
  const first = await clock.claimBatches(1, later);
  expect(kinds(first)).toEqual([['renew']]);
  await clock.runBatch(first[0]);
  // Two slots: the invoice request (due last) takes one, a renewal the other.
  expect(kinds(await clock.claimBatches(2, later))).toEqual([['invoice'], ['renew']]);
});
