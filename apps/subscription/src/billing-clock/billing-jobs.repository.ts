import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, newId, type TenantRef, unixSeconds } from '@recur/kernel';
import { insertRowsStatement, notifyOnCommit, type OpenTransaction, statementsOf } from '@recur/persistence';
import type { Customer } from '../customers/customer';
import type { Prisma } from '../generated/prisma/client';
import { invoiceLineKind, type LifecycleStep, nextLifecycleStep, type PeriodInvoice, type Subscription } from '../subscriptions/subscription';

type Tx = Prisma.TransactionClient;

/** NOTIFY channel: a commit that queued a due step wakes the billing clock's workers. */
export const BILLING_JOBS_CHANNEL = 'billing_jobs';

/** Lifecycle steps (one pending per subscription), a period's `invoice`, and `dunning` reminders of a failed invoice. */
export type BillingJobKind = LifecycleStep['kind'] | 'invoice' | 'dunning';

/** A reminder is sent once: `dunning:<invoice>:<reminder number>` (an invoice fails once: only an open one can). */
export const dunningStepKey = (invoiceId: string, reminderNumber: number): string => `dunning:${invoiceId}:${reminderNumber}`;

/** What a `dunning` step asks invoicing to send (JSON in its payload). */
export interface DunningPayload {
  invoice_id: string;
  reminder_number: number;
  reminder_count: number;
}

/**
 * A smart retry is a `dunning` step too (retries and reminders are one schedule):
 * `payment_retry:<invoice>:<attempt>`, asking payments to push attempt `payment_attempt`.
 * `dunning_days` are the reminders' schedule, for when there is nothing to push (no method).
 */
export const paymentRetryStepKey = (invoiceId: string, attempt: number): string => `payment_retry:${invoiceId}:${attempt}`;

export interface PaymentRetryPayload {
  invoice_id: string;
  payment_attempt: number;
  dunning_days: number[];
}

export const isPaymentRetry = (payload: unknown): payload is PaymentRetryPayload =>
  typeof payload === 'object' && payload !== null && 'payment_attempt' in payload;

const DAY_MS = 86_400_000;

/**
 * Whose time a step runs on: a subscription's (its test clock, if any), or — for the reminders
 * of a one-off invoice, which has no subscription — its customer's.
 */
export interface StepOwner {
  tenant: TenantRef;
  subscriptionId: string | null;
  testClockId: string | null;
}

export const subscriptionOwner = (subscription: Subscription): StepOwner => ({ tenant: subscription.tenant, subscriptionId: subscription.id, testClockId: subscription.testClockId });
export const customerOwner = (customer: Customer): StepOwner => ({ tenant: customer.tenant, subscriptionId: null, testClockId: customer.testClockId });

/** A step to write: its owner, kind, key, time (the owner's own) and payload. */
interface NewStep {
  owner: StepOwner;
  kind: BillingJobKind;
  key: string;
  runAt: Date;
  payload: object;
}

/** A step exists, and runs, once: `<kind>:<subscription>:<time of the step, unix seconds>`. */
export const stepKey = (kind: BillingJobKind, subscriptionId: string, at: Date): string => `${kind}:${subscriptionId}:${unixSeconds(at)}`;

/**
 * A subscription's final invoice is requested once: `final_invoice:<subscription>:<its period start>`
 * (an `invoice` step whose key is not the period invoice's, as invoicing keys the two apart).
 */
export const finalInvoiceStepKey = (subscriptionId: string, periodStart: Date): string => `final_invoice:${subscriptionId}:${unixSeconds(periodStart)}`;

/** The invoice request a job of kind `invoice` sends to invoicing (JSON in its payload). */
export interface InvoicePayload {
  customer_id: string;
  period_start: number;
  period_end: number;
  currency: string;
  billing_reason: string;
  /** The subscription's collection method; absent in requests written before it existed (send_invoice). */
  collection_method?: string;
  /** A final invoice's credit is refunded to the period invoice's payer (`refund: true` on a cancellation); absent: kept as balance. */
  refund_credit?: true;
  /** `period_start`/`period_end` (unix seconds) only on a line of its own period: usage, billed in arrears. */
  /** `tax_rate_ids` only on a line whose plan, add-on or proration names rates (absent in requests written before). */
  lines: { kind: string; description: string; quantity: number; amount: number; period_start?: number; period_end?: number; tax_rate_ids?: string[] }[];
  subtotal: number;
  discount: number;
  total: number;
}

export function toInvoicePayload(subscription: Subscription, invoice: PeriodInvoice): InvoicePayload {
  const periodStart = unixSeconds(invoice.periodStart);
  const periodEnd = unixSeconds(invoice.periodEnd);
  return {
    customer_id: subscription.customerId,
    period_start: periodStart,
    period_end: periodEnd,
    currency: invoice.price.currency,
    billing_reason: invoice.billingReason,
    collection_method: subscription.collectionMethod,
    ...(invoice.refundCredit ? { refund_credit: true as const } : {}),
    lines: invoice.price.lines.map((line) => ({
      kind: invoiceLineKind(line),
      description: line.description,
      quantity: line.quantity,
      amount: line.amount,
      ...(line.period ? { period_start: line.period.start, period_end: line.period.end } : {}),
      ...(line.taxRateIds ? { tax_rate_ids: line.taxRateIds } : {}),
    })),
    subtotal: invoice.price.subtotal,
    discount: invoice.price.discount,
    total: invoice.price.total,
  };
}

/**
 * Writes the billing clock's due-time rows in the caller's transaction, beside the change
 * that needs them. A row's `run_at` is the step's time in the subscription's own time; its
 * `due_at` (what the jobs engine claims by, in real time) is run_at on real time, and for a
 * customer on a test clock it is set only once the clock has reached run_at (now, or when
 * AdvanceTestClock moves the clock past it). The clock row is locked FOR SHARE while
 * deciding, so an advance and a new step cannot miss each other.
 */
@Injectable()
export class BillingJobs {
  constructor(@Inject(CLOCK) private readonly now: Clock) {}

  /**
   * For each saved subscription, in a fixed number of statements whatever their count: its
   * period's invoice request when a period began (a period is requested once: its step key),
   * and the lifecycle step its state calls for as its one pending step (any other cancelled).
   * A batch of the billing clock and a single command save through here alike.
   */
  async syncSteps(tx: OpenTransaction, saved: readonly { subscription: Subscription; invoice?: PeriodInvoice; finalInvoice?: PeriodInvoice }[]): Promise<void> {
    if (saved.length === 0) return;
    const now = this.now();
    const steps: NewStep[] = [];
    const lifecycle = saved.map(({ subscription, invoice, finalInvoice }) => {
      if (invoice) {
        steps.push({ owner: subscriptionOwner(subscription), kind: 'invoice', key: stepKey('invoice', subscription.id, invoice.periodStart), runAt: invoice.periodStart, payload: toInvoicePayload(subscription, invoice) });
      }
      if (finalInvoice) {
        // Run at the end (after the period's own invoice, which the claim makes it wait for).
        steps.push({ owner: subscriptionOwner(subscription), kind: 'invoice', key: finalInvoiceStepKey(subscription.id, finalInvoice.periodStart), runAt: subscription.endedAt ?? finalInvoice.periodEnd, payload: toInvoicePayload(subscription, finalInvoice) });
      }
      const step = nextLifecycleStep(subscription);
      const key = step ? stepKey(step.kind, subscription.id, step.runAt) : '';
      if (step) steps.push({ owner: subscriptionOwner(subscription), kind: step.kind, key, runAt: step.runAt, payload: {} });
      return { subscription_id: subscription.id, step_key: key };
    });
    await statementsOf(tx).execute(
      `UPDATE billing_jobs AS job SET status = 'cancelled', lease_until = NULL, updated_at = $2::timestamptz
       FROM jsonb_to_recordset($1::jsonb) AS next(subscription_id text, step_key text)
       WHERE job.subscription_id = next.subscription_id AND job.kind NOT IN ('invoice', 'dunning') AND job.status = 'pending' AND job.step_key <> next.step_key`,
      [JSON.stringify(lifecycle), now.toISOString()],
    );
    await this.insert(tx, steps);
  }

  /**
   * Stops everything still pending for the subscription except invoices of periods already
   * begun and the reminders of invoices already failed (those are still owed).
   */
  async cancelLifecycle(tx: Tx, subscriptionId: string): Promise<void> {
    await tx.$executeRaw`
      UPDATE billing_jobs SET status = 'cancelled', lease_until = NULL, updated_at = ${this.now()}
      WHERE subscription_id = ${subscriptionId} AND kind NOT IN ('invoice', 'dunning') AND status = 'pending'`;
  }

  /**
   * Queues the reminders of a failed invoice of `owner` (its subscription, or the customer of a
   * one-off invoice): reminder n at `failedAt` + `scheduleDays[n-1]` days, in the owner's own
   * time (`failedAt` is its test clock's frozen time when it has one), so advancing a test
   * clock walks them. Queued once per reminder (its step key), however often the failure is delivered.
   */
  async queueDunning(tx: Tx, owner: StepOwner, invoiceId: string, scheduleDays: readonly number[], failedAt: Date): Promise<void> {
    await this.insert(tx, scheduleDays.map((days, index): NewStep => {
      const payload: DunningPayload = { invoice_id: invoiceId, reminder_number: index + 1, reminder_count: scheduleDays.length };
      return { owner, kind: 'dunning', key: dunningStepKey(invoiceId, index + 1), runAt: new Date(failedAt.getTime() + days * DAY_MS), payload };
    }));
  }

  /**
   * Queues the smart retries of a failed automatic charge: attempt `firstAttempt` at
   * `retryAt[0]`, and so on, at times already in the owner's own time (invoicing planned them).
   * Queued once per attempt (its step key), however often the failure is delivered.
   */
  async queuePaymentRetries(tx: Tx, owner: StepOwner, invoiceId: string, retryAt: readonly Date[], firstAttempt: number, dunningDays: readonly number[]): Promise<void> {
    await this.insert(tx, retryAt.map((runAt, index): NewStep => {
      const payload: PaymentRetryPayload = { invoice_id: invoiceId, payment_attempt: firstAttempt + index, dunning_days: [...dunningDays] };
      return { owner, kind: 'dunning', key: paymentRetryStepKey(invoiceId, firstAttempt + index), runAt, payload };
    }));
  }

  /** Stops the smart retries of an invoice still pending (a failure that will not pass, or nothing left to charge). */
  async cancelPaymentRetries(tx: Tx, invoiceId: string): Promise<number> {
    return tx.$executeRaw`
      UPDATE billing_jobs SET status = 'cancelled', lease_until = NULL, updated_at = ${this.now()}
      WHERE kind = 'dunning' AND status = 'pending' AND payload->>'invoice_id' = ${invoiceId} AND payload ? 'payment_attempt'`;
  }

  /** Stops the reminders and smart retries of an invoice still pending (it was paid). */
  async cancelDunning(tx: Tx, invoiceId: string): Promise<number> {
    return tx.$executeRaw`
      UPDATE billing_jobs SET status = 'cancelled', lease_until = NULL, updated_at = ${this.now()}
      WHERE kind = 'dunning' AND status = 'pending' AND payload->>'invoice_id' = ${invoiceId}`;
  }

  /** A subscription's (or a customer's) own time now: its test clock's frozen time, or the service clock. */
  async timeOf(tx: Tx, owner: { testClockId: string | null }): Promise<Date> {
    if (!owner.testClockId) return this.now();
    const [clock] = await tx.$queryRaw<{ frozen_time: Date }[]>`SELECT frozen_time FROM test_clocks WHERE id = ${owner.testClockId}`;
    return clock?.frozen_time ?? this.now();
  }

  /**
   * Writes the steps in one statement. A cancelled step of the same key comes back (a pause
   * undone before its time); a done one never runs again. On a test clock a step is due once the
   * clock has reached its time: the clocks are read FOR SHARE (one statement for the batch).
   */
  private async insert(tx: OpenTransaction, steps: readonly NewStep[]): Promise<void> {
    if (steps.length === 0) return;
    const now = this.now();
    const clockIds = [...new Set(steps.flatMap(({ owner }) => (owner.testClockId ? [owner.testClockId] : [])))].sort();
    const clocks = new Map(
      clockIds.length === 0
        ? []
        : (await statementsOf(tx).query<{ id: string; frozen_time: Date; deleted_at: Date | null }>(
            'SELECT id, frozen_time, deleted_at FROM test_clocks WHERE id = ANY($1::text[]) ORDER BY id FOR SHARE',
            [clockIds],
          )).map((clock) => [clock.id, clock]),
    );
    const dueAtOf = ({ owner, runAt }: NewStep): Date | null => {
      if (!owner.testClockId) return runAt;
      const clock = clocks.get(owner.testClockId);
      return clock && !clock.deleted_at && new Date(clock.frozen_time).getTime() >= runAt.getTime() ? now : null;
    };
    const rows = steps.map((step) => ({
      id: newId('bjob'),
      accountId: step.owner.tenant.accountId,
      livemode: step.owner.tenant.livemode,
      subscriptionId: step.owner.subscriptionId,
      kind: step.kind,
      stepKey: step.key,
      status: 'pending',
      runAt: step.runAt,
      dueAt: dueAtOf(step),
      testClockId: step.owner.testClockId,
      payload: step.payload,
      createdAt: now,
      updatedAt: now,
    }));
    const { sql, values } = insertRowsStatement('billing_jobs', rows, `
      ON CONFLICT (step_key) DO UPDATE SET status = 'pending', due_at = EXCLUDED.due_at, lease_until = NULL, updated_at = EXCLUDED.updated_at
      WHERE billing_jobs.status = 'cancelled'`);
    await statementsOf(tx).execute(sql, values);
    // Wake the workers for a step due now; one due later is found by their next look (nextDueAt, the poll).
    if (rows.some((row) => row.dueAt && row.dueAt.getTime() <= now.getTime())) await notifyOnCommit(tx, BILLING_JOBS_CHANNEL);
  }
}
