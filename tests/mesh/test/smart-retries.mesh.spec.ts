import { randomBytes } from 'node:crypto';
import { queryDatabase } from '@recur/testing';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { providerPaymentIdFor } from '../../../apps/payments/src/payments/payment';
import { api, eventually, type Mesh, meshForFile } from './mesh';

/**
 * Smart retries (docs/api/dunning.md#smart-retries), tried as a new user would through `/v1`
 * and test clocks, every service its own process on Kafka: a subscription charged automatically
 * whose number is short of funds is pushed again on the documented days (+1, +3, +5 days at
 * 09:00 UTC), each a new push keyed `collect:<invoice>:<attempt>`, then paid once the failure
 * stops — or dunned after the last retry; a number that does not exist goes straight to dunning;
 * an invoice voided between retries is never pushed again.
 */
let mesh: Mesh;
let call: ReturnType<typeof api>;

meshForFile('Kabwe Water', (started) => ({ mesh, call } = started));

const DAY = 86_400;
/** 1 January 2031, 06:00 UTC: the retries fall on 2, 4 and 6 January at 09:00 UTC. */
const START = Date.UTC(2031, 0, 1, 6) / 1000;
const at = (day: number, hour: number) => Date.UTC(2031, 0, day, hour) / 1000;

async function customerOnClock(phone: string) {
  const clock = (await call('POST', '/v1/test-clocks', { frozen_time: START, name: 'smart retries' })).body.id as string;
  const email = `kabwe-${randomBytes(4).toString('hex')}@example.com`;
  const customer = (await call('POST', '/v1/customers', { name: 'Bwalya Mulenga', email, test_clock: clock })).body.id as string;
  expect((await call('POST', `/v1/customers/${customer}/payment-methods`, { phone_number: phone, provider: 'MTN_MOMO_ZMB', consent: true })).status).toBe(201);
  return { clock, customer, email };
}

async function chargedSubscription(customer: string) {
  const plan = (await call('POST', '/v1/plans', { name: 'Borehole service', pricing_model: 'flat_rate', amount_monthly: 6_000, currency: 'zmw' })).body;
  const subscription = await call('POST', '/v1/subscriptions', { customer, plan: plan.id, billing_interval: 'monthly', collection_method: 'charge_automatically' });
  expect(subscription.status).toBe(201);
  const invoice = await eventually(async () => (await call('GET', `/v1/invoices?subscription=${subscription.body.id}`)).body.data?.[0], 30_000, 'the first invoice');
  return { subscription: subscription.body.id as string, invoice: invoice.id as string };
}

const chargedInvoice = async (customer: string) =>
  (await call('POST', '/v1/invoices', { customer, amount: 3_300, currency: 'zmw', description: 'Water, January', status: 'open', collection_method: 'charge_automatically' })).body.id as string;

async function advance(clock: string, frozenTime: number) {
  expect((await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: frozenTime })).status).toBe(200);
  await eventually(async () => (await call('GET', `/v1/test-clocks/${clock}`)).body.status === 'ready', 60_000, 'the clock ready');
}

/** The invoice's payments, oldest first, once `count` of them are settled (not pending). */
const settledPayments = (invoice: string, count: number) =>
  eventually(async () => {
    const list = (await call('GET', `/v1/payments?invoice=${invoice}`)).body.data as { id: string; status: string; failure_code: string | null; phone_number: string }[];
    return list.length === count && list.every((payment) => payment.status !== 'pending') ? [...list].reverse() : undefined;
  }, 60_000, `${count} settled payment(s) of ${invoice}`);

/** invoice.payment_failed events of the invoice (the events API), in attempt order, once `count` are there. */
const failures = (invoice: string, count: number) =>
  eventually(async () => {
    const list = (await call('GET', `/v1/events?type=invoice.payment_failed&resource=${invoice}`)).body.data as { data: { attempt_count: number; next_payment_attempt: number | null; failure_code: string } }[];
    if (list.length !== count) return undefined;
    return list.map(({ data }) => ({ attempt_count: data.attempt_count, next_payment_attempt: data.next_payment_attempt, failure_code: data.failure_code }))
      .sort((a, b) => a.attempt_count - b.attempt_count);
  }, 60_000, `${count} invoice.payment_failed event(s) of ${invoice}`);

const reminderSubjects = (email: string) =>
  mesh.mail.messages().filter((mail) => mail.envelope.to.includes(email) && mail.parsed.subject?.startsWith('Reminder')).map((mail) => mail.parsed.subject);

/** The provider ids payments used for the invoice's pushes: each automatic attempt's key fixes one. */
const providerIds = async (invoice: string) =>
  (await queryDatabase<{ provider_payment_id: string }>(mesh.databaseUrls.payments, 'SELECT provider_payment_id FROM payments WHERE invoice_id = $1 ORDER BY created_at', [invoice]))
    .map((row) => row.provider_payment_id);

describe('smart retries of a charge_automatically invoice', () => {
  it('a number short of funds is pushed again on +1 and +3 days at 09:00 UTC (collect:<invoice>:<attempt>), then paid once the failure stops; no reminder goes out', async () => {
    const { clock, customer, email } = await customerOnClock(SANDBOX_MAGIC_NUMBERS.fail);
    const { subscription, invoice } = await chargedSubscription(customer);
    await settledPayments(invoice, 1);
    expect(await failures(invoice, 1)).toEqual([{ attempt_count: 1, next_payment_attempt: at(2, 9), failure_code: 'insufficient_funds' }]);

    // An hour before the first retry's time nothing is pushed.
    await advance(clock, at(2, 8));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await call('GET', `/v1/payments?invoice=${invoice}`)).body.data).toHaveLength(1);

    await advance(clock, at(2, 9));
    expect((await settledPayments(invoice, 2)).map((payment) => [payment.status, payment.failure_code])).toEqual([['failed', 'insufficient_funds'], ['failed', 'insufficient_funds']]);
    expect((await failures(invoice, 2))[1]).toEqual({ attempt_count: 2, next_payment_attempt: at(4, 9), failure_code: 'insufficient_funds' });
    expect((await call('GET', `/v1/invoices/${invoice}`)).body.status).toBe('failed');

    // The payer tops up: in the sandbox, a number that succeeds becomes the default.
    expect((await call('POST', `/v1/customers/${customer}/payment-methods`, { phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB', consent: true, set_default: true })).status).toBe(201);
    await advance(clock, at(4, 9));
    const paid = await settledPayments(invoice, 3);
    expect(paid.map((payment) => [payment.status, payment.phone_number])).toEqual([
      ['failed', SANDBOX_MAGIC_NUMBERS.fail], ['failed', SANDBOX_MAGIC_NUMBERS.fail], ['succeeded', SANDBOX_MAGIC_NUMBERS.succeed],
    ]);
    await eventually(async () => (await call('GET', `/v1/invoices/${invoice}`)).body.status === 'paid', 30_000, 'the invoice paid');
    expect(await providerIds(invoice)).toEqual([providerPaymentIdFor(`collect:${invoice}`), providerPaymentIdFor(`collect:${invoice}:2`), providerPaymentIdFor(`collect:${invoice}:3`)]);

    // The last retry is not pushed, and no reminder ever went out.
    await advance(clock, at(7, 0));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await call('GET', `/v1/payments?invoice=${invoice}`)).body.data).toHaveLength(3);
    expect(reminderSubjects(email)).toEqual([]);
    expect((await call('GET', `/v1/events?type=invoice.dunning_retry&resource=${invoice}`)).body.data).toEqual([]);
    expect((await call('GET', `/v1/subscriptions/${subscription}`)).body.status).toBe('active');
  });

  it('after the last retry the invoice is dunned as before: reminders from that failure (attempt_count 4, no next attempt), then past_due', async () => {
    const { clock, customer, email } = await customerOnClock(SANDBOX_MAGIC_NUMBERS.fail);
    const { subscription, invoice } = await chargedSubscription(customer);
    await settledPayments(invoice, 1);
    await failures(invoice, 1);
    for (const [count, day] of [[2, 2], [3, 4], [4, 6]]) {
      await advance(clock, at(day, 9));
      await settledPayments(invoice, count);
      // Invoicing has taken the failure (at the clock's time) before the clock moves on.
      await failures(invoice, count);
    }
    expect(await failures(invoice, 4)).toEqual([
      { attempt_count: 1, next_payment_attempt: at(2, 9), failure_code: 'insufficient_funds' },
      { attempt_count: 2, next_payment_attempt: at(4, 9), failure_code: 'insufficient_funds' },
      { attempt_count: 3, next_payment_attempt: at(6, 9), failure_code: 'insufficient_funds' },
      { attempt_count: 4, next_payment_attempt: null, failure_code: 'insufficient_funds' },
    ]);
    expect(reminderSubjects(email)).toEqual([]);

    // The reminders run 3, 7 and 14 days after the last failure (6 January, 09:00).
    await advance(clock, at(9, 8));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(reminderSubjects(email)).toEqual([]);
    await advance(clock, at(20, 9));
    await eventually(async () => reminderSubjects(email).length === 3, 60_000, 'three reminder mails');
    const reminders = (await eventually(async () => {
      const list = (await call('GET', `/v1/events?type=invoice.dunning_retry&resource=${invoice}`)).body.data;
      return list.length === 3 ? list : undefined;
    }, 30_000, 'three dunning_retry events')) as { data: { reminder: number; final: boolean; attempt_count: number; next_payment_attempt: null } }[];
    expect(reminders.map(({ data }) => [data.reminder, data.final, data.attempt_count, data.next_payment_attempt]).sort()).toEqual([[1, false, 4, null], [2, false, 4, null], [3, true, 4, null]]);
    await eventually(async () => (await call('GET', `/v1/subscriptions/${subscription}`)).body.status === 'past_due', 30_000, 'the subscription past_due');
    expect((await call('GET', `/v1/payments?invoice=${invoice}`)).body.data).toHaveLength(4);
  });

  it('a number that does not exist is not retried: straight to dunning with the payment link', async () => {
    const { clock, customer, email } = await customerOnClock(SANDBOX_MAGIC_NUMBERS.not_found);
    const invoice = await chargedInvoice(customer);
    expect((await settledPayments(invoice, 1)).map((payment) => payment.failure_code)).toEqual(['payer_not_found']);
    expect(await failures(invoice, 1)).toEqual([{ attempt_count: 1, next_payment_attempt: null, failure_code: 'payer_not_found' }]);
    await advance(clock, START + 5 * DAY);
    await eventually(async () => reminderSubjects(email).length === 1, 30_000, 'the first reminder mail');
    const [reminder] = mesh.mail.messages().filter((mail) => mail.envelope.to.includes(email) && mail.parsed.subject?.startsWith('Reminder'));
    expect(reminder.parsed.text).toContain((await call('GET', `/v1/invoices/${invoice}`)).body.payment_url);
    expect((await call('GET', `/v1/payments?invoice=${invoice}`)).body.data).toHaveLength(1);
  });

  it('an invoice voided between retries is never pushed again: the one-collection lock refuses the retry', async () => {
    const { clock, customer } = await customerOnClock(SANDBOX_MAGIC_NUMBERS.no_answer);
    const invoice = await chargedInvoice(customer);
    expect((await settledPayments(invoice, 1)).map((payment) => payment.failure_code)).toEqual(['payment_not_approved']);
    expect(await failures(invoice, 1)).toEqual([{ attempt_count: 1, next_payment_attempt: at(2, 9), failure_code: 'payment_not_approved' }]);
    expect((await call('POST', `/v1/invoices/${invoice}/void`)).body.status).toBe('void');
    await advance(clock, at(7, 0));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await call('GET', `/v1/payments?invoice=${invoice}`)).body.data).toHaveLength(1);
    // The first retry ran and payments refused it (nothing pushed); the later ones were stopped.
    const steps = await queryDatabase<{ step_key: string; status: string; result: string | null }>(mesh.databaseUrls.subscription,
      "SELECT step_key, status, result FROM billing_jobs WHERE payload->>'invoice_id' = $1 ORDER BY step_key", [invoice]);
    expect(steps.map(({ step_key, status, result }) => [step_key, status, result])).toEqual([
      [`payment_retry:${invoice}:2`, 'done', 'not_owed:invoice_void'],
      [`payment_retry:${invoice}:3`, 'cancelled', null],
      [`payment_retry:${invoice}:4`, 'cancelled', null],
    ]);
  });

  it('a customer who detached the method between retries has nothing to charge: the retries stop and the reminders start from then', async () => {
    const { clock, customer, email } = await customerOnClock(SANDBOX_MAGIC_NUMBERS.fail);
    const invoice = await chargedInvoice(customer);
    await settledPayments(invoice, 1);
    const [method] = (await call('GET', `/v1/customers/${customer}/payment-methods`)).body.data;
    expect((await call('DELETE', `/v1/customers/${customer}/payment-methods/${method.id}`)).status).toBeLessThan(300);
    await advance(clock, at(2, 9));
    // The first reminder: 3 days after the retry that found nothing to charge (2 January, 09:00).
    await advance(clock, at(5, 8));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(reminderSubjects(email)).toEqual([]);
    await advance(clock, at(5, 9));
    await eventually(async () => reminderSubjects(email).length === 1, 30_000, 'the first reminder mail');
    expect((await call('GET', `/v1/payments?invoice=${invoice}`)).body.data).toHaveLength(1);
    const steps = await queryDatabase<{ step_key: string; status: string; result: string | null }>(mesh.databaseUrls.subscription,
      "SELECT step_key, status, result FROM billing_jobs WHERE payload->>'invoice_id' = $1 AND step_key LIKE 'payment_retry:%' ORDER BY step_key", [invoice]);
    expect(steps.map(({ step_key, status, result }) => [step_key, status, result])).toEqual([
      [`payment_retry:${invoice}:2`, 'done', 'no_payment_method'],
      [`payment_retry:${invoice}:3`, 'cancelled', null],
      [`payment_retry:${invoice}:4`, 'cancelled', null],
    ]);
  });
});
