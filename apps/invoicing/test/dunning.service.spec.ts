import * as grpc from '@grpc/grpc-js';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { invoicingEventsV1, invoicingV1, subscriptionV1 } from '@recur/contracts';
import { type MailCatcher, startMailCatcher } from '@recur/local-infra';
import { decodeInternalEvent, decodePublicEvent } from '@recur/messaging';
import { eventually, grpcFailure, queryDatabase, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { randomBytes } from 'node:crypto';

/**
 * Dunning in invoicing, through gRPC on a real PostgreSQL and a real SMTP conversation (the
 * mail catcher): the schedule a failure carries (the service default, an account's own row),
 * SendDunningReminder once per reminder, and nothing for an invoice paid meanwhile.
 */
jest.setTimeout(40_000);

let mailCatcher: MailCatcher;
let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;

beforeAll(async () => {
  mailCatcher = await startMailCatcher();
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
  invoicing = await startServiceUnderTest('invoicing', invoicingV1.InvoicingService, {
    SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress,
    SMTP_URL: mailCatcher.url,
    INVOICE_MAIL_ON_FINALIZE: 'false',
    DUNNING_SCHEDULE_DAYS: '2,5,9,20',
  });
}, 120_000);

afterAll(async () => {
  await invoicing?.stop();
  await subscription?.stop();
  await mailCatcher?.stop();
});

const newTenant = () => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode: false });
const usd = (amount: number) => ({ amountMinor: BigInt(amount), currency: 'usd' });
const paymentId = () => `pay_${randomBytes(12).toString('hex')}`;
const mailsTo = (address: string) => mailCatcher.messages().filter((mail) => mail.envelope.to.includes(address));

async function failedInvoice(tenant: ReturnType<typeof newTenant>) {
  const email = `late-${randomBytes(4).toString('hex')}@example.com`;
  const { customer } = await subscription.client.createCustomer({ tenant, name: 'Ada', email });
  const { invoice } = await invoicing.client.createInvoice({ tenant, customerId: customer!.id, amount: 4_200n, description: 'Work', status: 'open' });
  await invoicing.client.failInvoicePayment({ tenant, id: invoice!.id, paymentId: paymentId(), failureCode: 'insufficient_funds', requestId: '' });
  return { invoice: invoice!, email };
}

/** The schedule InvoicePaymentFailed carried for `invoiceId`. */
async function scheduleCarried(invoiceId: string): Promise<number[]> {
  const [row] = await queryDatabase<{ payload: object }>(invoicing.databaseUrl,
    "SELECT payload FROM outbox_events WHERE key = $1 AND type = 'recur.invoicing.v1.InvoicePaymentFailed'", [invoiceId]);
  const envelope = decodeInternalEvent(JSON.stringify(row.payload));
  return anyUnpack(envelope.payload!, invoicingEventsV1.InvoicePaymentFailedSchema)!.dunningScheduleDays;
}

const dunningEvents = async (invoiceId: string) =>
  (await queryDatabase<{ payload: object }>(invoicing.databaseUrl, "SELECT payload FROM outbox_events WHERE key = $1 AND type = 'invoice.dunning_retry' ORDER BY seq", [invoiceId]))
    .map((row) => decodePublicEvent(JSON.stringify(row.payload)).data as unknown as { reminder: number; reminder_count: number; final: boolean; object: { status: string } });

describe('dunning schedule', () => {
  it('a failure carries the service default (DUNNING_SCHEDULE_DAYS), or the account\'s own row', async () => {
    const tenant = newTenant();
    expect(await scheduleCarried((await failedInvoice(tenant)).invoice.id)).toEqual([2, 5, 9, 20]);
    await queryDatabase(invoicing.databaseUrl, 'INSERT INTO dunning_schedules (account_id, livemode, days, updated_at) VALUES ($1, false, $2, now())', [tenant.accountId, [1, 4]]);
    expect(await scheduleCarried((await failedInvoice(tenant)).invoice.id)).toEqual([1, 4]);
    // The row is the account's sandbox app only: its live app and other accounts keep the default.
    expect(await scheduleCarried((await failedInvoice(newTenant())).invoice.id)).toEqual([2, 5, 9, 20]);
  });
});

describe('GetDunningSchedule and SetDunningSchedule', () => {
  it('answer the default until the app sets its own; a set schedule is what later failures carry, per app', async () => {
    const tenant = newTenant();
    expect((await invoicing.client.getDunningSchedule({ tenant })).schedule).toMatchObject({ daysAfterFailure: [2, 5, 9, 20], default: true, updated: 0n });
    const { schedule } = await invoicing.client.setDunningSchedule({ tenant, daysAfterFailure: [1, 10, 90], requestId: '' });
    expect(schedule).toMatchObject({ daysAfterFailure: [1, 10, 90], default: false });
    expect(schedule!.updated).toBeGreaterThan(0n);
    expect((await invoicing.client.getDunningSchedule({ tenant })).schedule).toEqual(schedule);
    expect(await scheduleCarried((await failedInvoice(tenant)).invoice.id)).toEqual([1, 10, 90]);
    // Set again: replaced. The account's live app keeps the default.
    await invoicing.client.setDunningSchedule({ tenant, daysAfterFailure: [4], requestId: '' });
    expect(await scheduleCarried((await failedInvoice(tenant)).invoice.id)).toEqual([4]);
    expect((await invoicing.client.getDunningSchedule({ tenant: { ...tenant, livemode: true } })).schedule).toMatchObject({ default: true });
  });

  it('refuse a schedule that is not 1 to 10 whole days from 1 to 90, strictly increasing, and store nothing', async () => {
    const tenant = newTenant();
    for (const bad of [[], [0], [91], [3, 3], [7, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]) {
      expect(await grpcFailure(invoicing.client.setDunningSchedule({ tenant, daysAfterFailure: bad, requestId: '' }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'days_after_failure' });
    }
    expect((await invoicing.client.getDunningSchedule({ tenant })).schedule).toMatchObject({ default: true });
    expect(await queryDatabase(invoicing.databaseUrl, 'SELECT 1 FROM dunning_schedules WHERE account_id = $1', [tenant.accountId])).toEqual([]);
  });
});

describe('SendDunningReminder', () => {
  it('e-mails a failed invoice\'s reminder with the payment link and announces it, once per reminder', async () => {
    const tenant = newTenant();
    const { invoice, email } = await failedInvoice(tenant);
    const first = await invoicing.client.sendDunningReminder({ tenant, id: invoice.id, reminderNumber: 1, reminderCount: 3, requestId: 'step-a' });
    expect(first).toMatchObject({ sent: true, invoice: { status: 'failed' } });
    // A repeat (the billing clock's worker died before recording the answer), whatever its request id.
    expect((await invoicing.client.sendDunningReminder({ tenant, id: invoice.id, reminderNumber: 1, reminderCount: 3, requestId: 'step-b' })).sent).toBe(true);
    await invoicing.client.sendDunningReminder({ tenant, id: invoice.id, reminderNumber: 3, reminderCount: 3, requestId: '' });

    const mails = await eventually(async () => mailsTo(email).length >= 2 && mailsTo(email), 15_000, 'two reminder mails');
    expect(mails.map((mail) => mail.parsed.subject).sort()).toEqual([`Reminder 1: invoice ${invoice.number} is due`, `Reminder 3: invoice ${invoice.number} is due`]);
    expect(mails[0].parsed.text).toContain(invoice.paymentUrl);
    expect((await dunningEvents(invoice.id)).map(({ reminder, reminder_count, final, object }) => ({ reminder, reminder_count, final, status: object.status }))).toEqual([
      { reminder: 1, reminder_count: 3, final: false, status: 'failed' },
      { reminder: 3, reminder_count: 3, final: true, status: 'failed' },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(mailsTo(email)).toHaveLength(2);
  });

  it('sends nothing for an invoice paid before its reminder (sent: false): no mail, no event', async () => {
    const tenant = newTenant();
    const { invoice, email } = await failedInvoice(tenant);
    await invoicing.client.payInvoice({ tenant, id: invoice.id, paymentId: paymentId(), amount: usd(4_200), paidAt: BigInt(Math.floor(Date.now() / 1000)), requestId: '' });
    const answer = await invoicing.client.sendDunningReminder({ tenant, id: invoice.id, reminderNumber: 2, reminderCount: 3, requestId: '' });
    expect(answer).toMatchObject({ sent: false, invoice: { status: 'paid' } });
    expect(await dunningEvents(invoice.id)).toEqual([]);
    expect(await queryDatabase(invoicing.databaseUrl, "SELECT 1 FROM invoice_mails WHERE invoice_id = $1 AND kind = 'reminder'", [invoice.id])).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(mailsTo(email)).toEqual([]);
  });

  it('cancels a reminder mail still waiting (SMTP refusing) once the invoice is paid: it is never sent', async () => {
    const tenant = newTenant();
    const { invoice, email } = await failedInvoice(tenant);
    const mailRow = async () => (await queryDatabase<{ status: string; attempt_count: number; last_error: string | null }>(invoicing.databaseUrl,
      "SELECT status, attempt_count, last_error FROM invoice_mails WHERE invoice_id = $1 AND kind = 'reminder'", [invoice.id]))[0];
    mailCatcher.refuse(451);
    try {
      await invoicing.client.sendDunningReminder({ tenant, id: invoice.id, reminderNumber: 1, reminderCount: 3, requestId: '' });
      await eventually(async () => ((await mailRow())?.attempt_count ?? 0) >= 1, 15_000, 'a refused attempt');
      await invoicing.client.payInvoice({ tenant, id: invoice.id, paymentId: paymentId(), amount: usd(4_200), paidAt: BigInt(Math.floor(Date.now() / 1000)), requestId: '' });
    } finally {
      mailCatcher.refuse(null);
    }
    await eventually(async () => (await mailRow()).status === 'canceled', 15_000, 'the reminder canceled');
    expect((await mailRow()).last_error).toBe('the invoice was paid before the reminder left');
    expect(mailsTo(email)).toEqual([]);
  });

  it('refuses reminder numbers outside 1 ≤ n ≤ count ≤ 10, and an unknown invoice', async () => {
    const tenant = newTenant();
    const { invoice } = await failedInvoice(tenant);
    expect(await grpcFailure(invoicing.client.sendDunningReminder({ tenant, id: invoice.id, reminderNumber: 4, reminderCount: 3 }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'reminder_number' });
    expect(await grpcFailure(invoicing.client.sendDunningReminder({ tenant, id: invoice.id, reminderNumber: 1, reminderCount: 11 }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'reminder_count' });
    expect(await grpcFailure(invoicing.client.sendDunningReminder({ tenant, id: 'in_nope', reminderNumber: 1, reminderCount: 1 }))).toMatchObject({ code: grpc.status.NOT_FOUND });
  });
});
