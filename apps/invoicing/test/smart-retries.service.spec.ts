import * as grpc from '@grpc/grpc-js';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { invoicingEventsV1, invoicingV1, subscriptionV1 } from '@recur/contracts';
import { decodeInternalEvent, decodePublicEvent } from '@recur/messaging';
import { grpcFailure, queryDatabase, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { randomBytes } from 'node:crypto';
import { checkPaymentRetrySchedule, DEFAULT_PAYMENT_RETRY_SCHEDULE, paymentRetryTimes } from '../src/dunning/payment-retry-schedule';

/**
 * Smart retries in invoicing (docs/api/dunning.md#smart-retries): the arithmetic of the retry
 * days (calendar days in the schedule's time zone, at its hour), and through gRPC on a real
 * PostgreSQL what each failure of a `charge_automatically` charge plans and announces — planned
 * in the customer's test-clock time, counted as Stripe counts (`attempt_count`), the next attempt
 * named (`next_payment_attempt`), and none for a failure no retry would pass.
 */
jest.setTimeout(40_000);

const at = (iso: string) => new Date(iso);
const isoTimes = (times: Date[]) => times.map((time) => time.toISOString());

describe('paymentRetryTimes', () => {
  it('the default: +1, +3 and +5 calendar days after the first failure, at 09:00 UTC', () => {
    expect(DEFAULT_PAYMENT_RETRY_SCHEDULE).toEqual({ days: [1, 3, 5], hour: 9, timeZone: 'UTC' });
    expect(isoTimes(paymentRetryTimes(at('2031-01-01T23:59:59Z'), DEFAULT_PAYMENT_RETRY_SCHEDULE))).toEqual([
      '2031-01-02T09:00:00.000Z', '2031-01-04T09:00:00.000Z', '2031-01-06T09:00:00.000Z',
    ]);
    // Across a month's and a year's end.
    expect(isoTimes(paymentRetryTimes(at('2031-12-30T10:00:00Z'), { days: [1, 2, 30], hour: 0, timeZone: 'UTC' }))).toEqual([
      '2031-12-31T00:00:00.000Z', '2032-01-01T00:00:00.000Z', '2032-01-29T00:00:00.000Z',
    ]);
  });

  it('counts days on the time zone\'s calendar and runs at its local hour', () => {
    // 22:30 UTC is already the next day in Lusaka (UTC+2): day 1 is the day after that.
    expect(isoTimes(paymentRetryTimes(at('2031-01-01T22:30:00Z'), { days: [1, 3], hour: 9, timeZone: 'Africa/Lusaka' }))).toEqual([
      '2031-01-03T07:00:00.000Z', '2031-01-05T07:00:00.000Z',
    ]);
    // Berlin moves from UTC+1 to UTC+2 on 30 March 2031: 09:00 local is 08:00 UTC before, 07:00 UTC after.
    expect(isoTimes(paymentRetryTimes(at('2031-03-28T12:00:00Z'), { days: [1, 2], hour: 9, timeZone: 'Europe/Berlin' }))).toEqual([
      '2031-03-29T08:00:00.000Z', '2031-03-30T07:00:00.000Z',
    ]);
    // Back to UTC+1 on 26 October 2031 at 01:00 UTC: 01:00 local that day is still summer time, 23:00 UTC the day before.
    expect(isoTimes(paymentRetryTimes(at('2031-10-25T12:00:00Z'), { days: [1, 2], hour: 1, timeZone: 'Europe/Berlin' }))).toEqual([
      '2031-10-25T23:00:00.000Z', '2031-10-27T00:00:00.000Z',
    ]);
    // No retry days: nothing planned.
    expect(paymentRetryTimes(at('2031-01-01T00:00:00Z'), { days: [], hour: 9, timeZone: 'UTC' })).toEqual([]);
  });

  it('checkPaymentRetrySchedule refuses more than 5 retries, days outside 1–30 or not increasing, an hour outside 0–23, an unknown zone', () => {
    expect(checkPaymentRetrySchedule({ days: [], hour: 0, timeZone: 'UTC' })).toEqual({ days: [], hour: 0, timeZone: 'UTC' });
    expect(checkPaymentRetrySchedule({ days: [2, 30], hour: 23, timeZone: 'Africa/Lusaka' }).days).toEqual([2, 30]);
    const refusals: [number[], number, string, string][] = [
      [[1, 2, 3, 4, 5, 6], 9, 'UTC', 'payment_retries.days_after_failure'],
      [[0], 9, 'UTC', 'payment_retries.days_after_failure'],
      [[31], 9, 'UTC', 'payment_retries.days_after_failure'],
      [[3, 3], 9, 'UTC', 'payment_retries.days_after_failure'],
      [[1.5], 9, 'UTC', 'payment_retries.days_after_failure'],
      [[1], 24, 'UTC', 'payment_retries.hour'],
      [[1], -1, 'UTC', 'payment_retries.hour'],
      [[1], 9, 'Mars/Olympus_Mons', 'payment_retries.time_zone'],
      [[1], 9, '', 'payment_retries.time_zone'],
    ];
    for (const [days, hour, timeZone, param] of refusals) {
      expect(() => checkPaymentRetrySchedule({ days, hour, timeZone })).toThrow(expect.objectContaining({ param }));
    }
  });
});

let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;

beforeAll(async () => {
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, {
    CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9', BILLING_CLOCK_CONCURRENCY: '0',
  });
  invoicing = await startServiceUnderTest('invoicing', invoicingV1.InvoicingService, {
    SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress, SMTP_URL: 'smtp://127.0.0.1:9', INVOICE_MAIL_ON_FINALIZE: 'false', DUNNING_SCHEDULE_DAYS: '3,7,14',
  });
}, 120_000);

afterAll(async () => {
  await invoicing?.stop();
  await subscription?.stop();
});

const newTenant = () => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode: false });
const paymentId = () => `pay_${randomBytes(12).toString('hex')}`;
/** 1 March 2031, 14:00 UTC: the test clock's time, far from the real one. */
const FROZEN = Date.UTC(2031, 2, 1, 14) / 1000;
const seconds = (iso: string) => Date.parse(iso) / 1000;

async function chargedInvoice(tenant: ReturnType<typeof newTenant>, collectionMethod = 'charge_automatically') {
  const { testClock } = await subscription.client.createTestClock({ tenant, frozenTime: BigInt(FROZEN), name: 'retries' });
  const { customer } = await subscription.client.createCustomer({ tenant, name: 'Mwila', email: `mwila-${randomBytes(4).toString('hex')}@example.com`, testClockId: testClock!.id });
  const { invoice } = await invoicing.client.createInvoice({ tenant, customerId: customer!.id, amount: 4_200n, currency: 'zmw', description: 'Solar lease', status: 'open', collectionMethod });
  return invoice!;
}

const fail = (tenant: ReturnType<typeof newTenant>, id: string, failureCode: string, automatic: boolean) =>
  invoicing.client.failInvoicePayment({ tenant, id, paymentId: paymentId(), failureCode, automatic, requestId: '' });

/** Each InvoicePaymentFailed of the invoice, in order: what the billing clock is told to run. */
async function failuresCarried(invoiceId: string) {
  const rows = await queryDatabase<{ payload: object }>(invoicing.databaseUrl,
    "SELECT payload FROM outbox_events WHERE key = $1 AND type = 'recur.invoicing.v1.InvoicePaymentFailed' ORDER BY seq", [invoiceId]);
  return rows.map((row) => {
    const failed = anyUnpack(decodeInternalEvent(JSON.stringify(row.payload)).payload!, invoicingEventsV1.InvoicePaymentFailedSchema)!;
    return { attemptCount: failed.attemptCount, retryAt: failed.paymentRetryAt.map(Number), dunning: failed.dunningScheduleDays, failedAt: Number(failed.failedAt) };
  });
}

/** Each invoice.payment_failed webhook of the invoice: the additive fields, Stripe's names. */
async function publicFailures(invoiceId: string) {
  const rows = await queryDatabase<{ payload: object }>(invoicing.databaseUrl,
    "SELECT payload FROM outbox_events WHERE key = $1 AND type = 'invoice.payment_failed' ORDER BY seq", [invoiceId]);
  return rows.map((row) => {
    const data = decodePublicEvent(JSON.stringify(row.payload)).data as unknown as { failure_code: string; attempt_count: number; next_payment_attempt: number | null };
    return { failure_code: data.failure_code, attempt_count: data.attempt_count, next_payment_attempt: data.next_payment_attempt };
  });
}

describe('FailInvoicePayment of a charge_automatically invoice', () => {
  it('plans the retries in the customer\'s test-clock time at the first failure, counts each retry\'s failure, and hands over to dunning after the last', async () => {
    const tenant = newTenant();
    const invoice = await chargedInvoice(tenant);
    const planned = [seconds('2031-03-02T09:00:00Z'), seconds('2031-03-04T09:00:00Z'), seconds('2031-03-06T09:00:00Z')];
    await fail(tenant, invoice.id, 'insufficient_funds', true);
    await fail(tenant, invoice.id, 'payment_not_approved', true);
    await fail(tenant, invoice.id, 'insufficient_balance', true);
    const last = await fail(tenant, invoice.id, 'insufficient_funds', true);
    expect(last.invoice).toMatchObject({ status: 'failed' });
    expect(await failuresCarried(invoice.id)).toEqual([
      { attemptCount: 1, retryAt: planned, dunning: [3, 7, 14], failedAt: FROZEN },
      { attemptCount: 2, retryAt: planned.slice(1), dunning: [3, 7, 14], failedAt: FROZEN },
      { attemptCount: 3, retryAt: planned.slice(2), dunning: [3, 7, 14], failedAt: FROZEN },
      // No retry left: the reminders start, counted from the failure's time on the customer's clock.
      { attemptCount: 4, retryAt: [], dunning: [3, 7, 14], failedAt: FROZEN },
    ]);
    expect(await publicFailures(invoice.id)).toEqual([
      { failure_code: 'insufficient_funds', attempt_count: 1, next_payment_attempt: planned[0] },
      { failure_code: 'payment_not_approved', attempt_count: 2, next_payment_attempt: planned[1] },
      { failure_code: 'insufficient_balance', attempt_count: 3, next_payment_attempt: planned[2] },
      { failure_code: 'insufficient_funds', attempt_count: 4, next_payment_attempt: null },
    ]);
  });

  it('plans no retry for a number that does not exist or a provider refusal, and stops the plan when a retry meets one', async () => {
    const tenant = newTenant();
    const unknownNumber = await chargedInvoice(tenant);
    await fail(tenant, unknownNumber.id, 'payer_not_found', true);
    expect(await failuresCarried(unknownNumber.id)).toEqual([{ attemptCount: 1, retryAt: [], dunning: [3, 7, 14], failedAt: FROZEN }]);
    expect(await publicFailures(unknownNumber.id)).toEqual([{ failure_code: 'payer_not_found', attempt_count: 1, next_payment_attempt: null }]);

    const refusedLater = await chargedInvoice(tenant);
    await fail(tenant, refusedLater.id, 'insufficient_funds', true);
    await fail(tenant, refusedLater.id, 'deposits_not_allowed', true);
    expect((await failuresCarried(refusedLater.id)).map(({ attemptCount, retryAt }) => [attemptCount, retryAt.length])).toEqual([[1, 3], [2, 0]]);
  });

  it('leaves a payer\'s failure at a page and a sent invoice\'s failure to dunning as before: no retry, and a failed invoice fails again only by a retry', async () => {
    const tenant = newTenant();
    const charged = await chargedInvoice(tenant);
    await fail(tenant, charged.id, 'insufficient_funds', false);
    // A payer's failure at a page carries its time on the customer's clock too: the reminders count
    // from it, not from whenever subscription reads the event.
    expect(await failuresCarried(charged.id)).toEqual([{ attemptCount: 1, retryAt: [], dunning: [3, 7, 14], failedAt: FROZEN }]);
    expect(await grpcFailure(fail(tenant, charged.id, 'insufficient_funds', false))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    // A push after a page failure has no retry plan to count in: refused as before.
    expect(await grpcFailure(fail(tenant, charged.id, 'insufficient_funds', true))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION });

    const sent = await chargedInvoice(tenant, 'send_invoice');
    await fail(tenant, sent.id, 'insufficient_funds', true);
    expect(await failuresCarried(sent.id)).toEqual([{ attemptCount: 1, retryAt: [], dunning: [3, 7, 14], failedAt: FROZEN }]);
  });

  it('follows the app\'s own retry schedule (SetDunningSchedule payment_retries), its days, hour and time zone; [] retries nothing', async () => {
    const tenant = newTenant();
    expect((await invoicing.client.getDunningSchedule({ tenant })).schedule?.paymentRetries).toMatchObject({ daysAfterFailure: [1, 3, 5], hour: 9, timeZone: 'UTC', default: true });
    const { schedule } = await invoicing.client.setDunningSchedule({ tenant, paymentRetries: { daysAfterFailure: [2, 4], hour: 18, timeZone: 'Africa/Lusaka' }, requestId: '' });
    // Only the retries changed: the reminders stay the service's default.
    expect(schedule).toMatchObject({ daysAfterFailure: [3, 7, 14], default: false, paymentRetries: { daysAfterFailure: [2, 4], hour: 18, timeZone: 'Africa/Lusaka', default: false } });
    const invoice = await chargedInvoice(tenant);
    await fail(tenant, invoice.id, 'insufficient_funds', true);
    // 14:00 UTC is 16:00 in Lusaka: 3 and 5 March at 18:00 there, 16:00 UTC.
    expect((await failuresCarried(invoice.id))[0].retryAt).toEqual([seconds('2031-03-03T16:00:00Z'), seconds('2031-03-05T16:00:00Z')]);

    // Reminders set alone keep the retries; an empty list turns them off.
    await invoicing.client.setDunningSchedule({ tenant, daysAfterFailure: [2], requestId: '' });
    expect((await invoicing.client.getDunningSchedule({ tenant })).schedule).toMatchObject({ daysAfterFailure: [2], paymentRetries: { daysAfterFailure: [2, 4] } });
    await invoicing.client.setDunningSchedule({ tenant, paymentRetries: { daysAfterFailure: [], hour: 9, timeZone: 'UTC' }, requestId: '' });
    const none = await chargedInvoice(tenant);
    await fail(tenant, none.id, 'insufficient_funds', true);
    expect(await failuresCarried(none.id)).toEqual([{ attemptCount: 1, retryAt: [], dunning: [2], failedAt: FROZEN }]);
    expect(await grpcFailure(invoicing.client.setDunningSchedule({ tenant, paymentRetries: { daysAfterFailure: [1], hour: 9, timeZone: 'Nowhere/Else' }, requestId: '' })))
      .toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'payment_retries.time_zone' });
  });
});
