import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, newId, type TenantRef, unixSeconds } from '@recur/kernel';
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

/** A step exists, and runs, once: `<kind>:<subscription>:<time of the step, unix seconds>`. */
export const stepKey = (kind: BillingJobKind, subscriptionId: string, at: Date): string => `${kind}:${subscriptionId}:${unixSeconds(at)}`;

/** The invoice request a job of kind `invoice` sends to invoicing (JSON in its payload). */
export interface InvoicePayload {
  customer_id: string;
  period_start: number;
  period_end: number;
  currency: string;
  billing_reason: string;
  /** `period_start`/`period_end` (unix seconds) only on a line of its own period: usage, billed in arrears. */
  lines: { kind: string; description: string; quantity: number; amount: number; period_start?: number; period_end?: number }[];
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
    lines: invoice.price.lines.map((line) => ({
      kind: invoiceLineKind(line),
      description: line.description,
      quantity: line.quantity,
      amount: line.amount,
      ...(line.period ? { period_start: line.period.start, period_end: line.period.end } : {}),
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

  /** Makes the subscription's pending lifecycle step the one its state calls for (or none). */
  async syncLifecycleStep(tx: Tx, subscription: Subscription): Promise<void> {
    const step = nextLifecycleStep(subscription);
    const key = step ? stepKey(step.kind, subscription.id, step.runAt) : '';
    const now = this.now();
    await tx.$executeRaw`
      UPDATE billing_jobs SET status = 'cancelled', lease_until = NULL, updated_at = ${now}
      WHERE subscription_id = ${subscription.id} AND kind NOT IN ('invoice', 'dunning') AND status = 'pending' AND step_key <> ${key}`;
    if (step) await this.insert(tx, subscriptionOwner(subscription), step.kind, key, step.runAt, {});
  }

  /** Queues the period's invoice request; a period is requested once (its step key). */
  async queueInvoice(tx: Tx, subscription: Subscription, invoice: PeriodInvoice): Promise<void> {
    await this.insert(tx, subscriptionOwner(subscription), 'invoice', stepKey('invoice', subscription.id, invoice.periodStart), invoice.periodStart, toInvoicePayload(subscription, invoice));
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
    for (const [index, days] of scheduleDays.entries()) {
      const payload: DunningPayload = { invoice_id: invoiceId, reminder_number: index + 1, reminder_count: scheduleDays.length };
      await this.insert(tx, owner, 'dunning', dunningStepKey(invoiceId, index + 1), new Date(failedAt.getTime() + days * DAY_MS), payload);
    }
  }

  /** Stops the reminders of an invoice still pending (it was paid). */
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

  private async insert(tx: Tx, owner: StepOwner, kind: BillingJobKind, key: string, runAt: Date, payload: object): Promise<void> {
    const now = this.now();
    let dueAt: Date | null = runAt;
    if (owner.testClockId) {
      const clocks = await tx.$queryRaw<{ frozen_time: Date; deleted_at: Date | null }[]>`
        SELECT frozen_time, deleted_at FROM test_clocks WHERE id = ${owner.testClockId} FOR SHARE`;
      const clock = clocks[0];
      dueAt = clock && !clock.deleted_at && clock.frozen_time.getTime() >= runAt.getTime() ? now : null;
    }
    // A cancelled step of the same key comes back (a pause undone before its time); a done one never runs again.
    await tx.$executeRaw`
      INSERT INTO billing_jobs (id, account_id, livemode, subscription_id, kind, step_key, status, run_at, due_at, test_clock_id, payload, created_at, updated_at)
      VALUES (${newId('bjob')}, ${owner.tenant.accountId}, ${owner.tenant.livemode}, ${owner.subscriptionId}, ${kind}, ${key}, 'pending',
              ${runAt}, ${dueAt}, ${owner.testClockId}, ${JSON.stringify(payload)}::jsonb, ${now}, ${now})
      ON CONFLICT (step_key) DO UPDATE SET status = 'pending', due_at = EXCLUDED.due_at, lease_until = NULL, updated_at = EXCLUDED.updated_at
      WHERE billing_jobs.status = 'cancelled'`;
    // Wake the workers for a step due now; one due later is found by their next look (nextDueAt, the poll).
    if (dueAt && dueAt.getTime() <= now.getTime()) await tx.$executeRaw`SELECT pg_notify(${BILLING_JOBS_CHANNEL}, '')`;
  }
}
