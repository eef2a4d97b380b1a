import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { claimDueRowsSql, claimParams, type DueRowsTable, JobWorker, nextDueAtSql } from '@recur/jobs';
import { type Clock, isDomainError } from '@recur/kernel';
import { PrismaService } from '../infrastructure/prisma.service';
import { endTrial, fallPastDue, nextLifecycleStep, renew, resume, type Subscription, type SubscriptionChange } from '../subscriptions/subscription';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { BILLING_JOBS_CHANNEL, type BillingJobKind, type DunningPayload, type InvoicePayload, stepKey } from './billing-jobs.repository';
import type { BillingInvoicing } from './invoicing.client';

/** A claimed step of the billing clock. */
export interface ClaimedStep {
  id: string;
  kind: BillingJobKind;
  step_key: string;
  account_id: string;
  livemode: boolean;
  subscription_id: string;
  run_at: Date;
  attempts: number;
  payload: unknown;
}

/**
 * The billing clock's rows: due at `due_at`, leased until `lease_until`. An invoice waits for
 * the earlier periods' invoices of its subscription, so periods are billed in order.
 */
export const BILLING_ROWS: DueRowsTable = {
  table: 'billing_jobs',
  dueAt: 'due_at',
  leaseUntil: 'lease_until',
  pending: `status = 'pending' AND (kind <> 'invoice' OR NOT EXISTS (
      SELECT 1 FROM billing_jobs earlier WHERE earlier.subscription_id = billing_jobs.subscription_id
        AND earlier.kind = 'invoice' AND earlier.status = 'pending' AND earlier.run_at < billing_jobs.run_at))`,
};

const CLAIM_DUE_STEPS = `
  WITH ${claimDueRowsSql(BILLING_ROWS)}
  SELECT c.id, c.kind, c.step_key, c.account_id, c.livemode, c.subscription_id, c.run_at, c.attempts, c.payload FROM claimed c`;

export interface BillingClockOptions {
  /** How long a claimed step belongs to its worker; past it (the worker died) another claims it. */
  leaseMs: number;
  concurrency: number;
  pollMs: number;
  /** The wait before invoice attempt n+1: 1 s doubling, at most 5 minutes. */
  retryDelayMs: (attempts: number) => number;
}

export const DEFAULT_BILLING_CLOCK_OPTIONS: BillingClockOptions = {
  leaseMs: 30_000,
  concurrency: 8,
  pollMs: 1_000,
  retryDelayMs: (attempts) => Math.min(1_000 * 2 ** Math.max(0, attempts - 1), 300_000),
};

type LifecycleKind = Exclude<BillingJobKind, 'invoice' | 'dunning'>;

const LIFECYCLE_RULES: Record<LifecycleKind, (subscription: Subscription, at: Date, now: Date) => SubscriptionChange> = {
  end_trial: endTrial,
  renew,
  resume,
};

/**
 * The billing clock: a JobWorker (@recur/jobs) over `billing_jobs`. A lifecycle step (trial
 * end, renewal, scheduled resume) runs in one transaction that re-checks the step under lock,
 * marks it done and saves the subscription's change with its events, its period's invoice
 * request and its next step — so a step whose worker died mid-way left nothing and runs again
 * when its lease lapses, and a step runs once however many replicas race for it. The invoice
 * request is its own step: it calls invoicing (idempotent by subscription + period start) until
 * invoicing answers; a refusal or an outage (UNIMPLEMENTED, UNAVAILABLE) keeps it pending.
 */
export class BillingClock implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly worker: JobWorker<ClaimedStep>;
  private readonly options: BillingClockOptions;
  private readonly log: (message: string, fields?: Record<string, unknown>) => void;

  /** Built by the module's factory (and by tests, with their own clock and invoicer). */
  constructor(
    private readonly prisma: PrismaService,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly invoicer: BillingInvoicing,
    private readonly now: Clock,
    options: Partial<BillingClockOptions> & { databaseUrl?: string; log?: (message: string, fields?: Record<string, unknown>) => void } = {},
  ) {
    this.options = { ...DEFAULT_BILLING_CLOCK_OPTIONS, ...options };
    const { databaseUrl } = options;
    this.log = options.log ?? (() => undefined);
    const log = this.log;
    this.worker = new JobWorker<ClaimedStep>({
      name: 'billing clock',
      clock: now,
      concurrency: this.options.concurrency,
      pollMs: this.options.pollMs,
      wakeUp: databaseUrl ? { databaseUrl, channel: BILLING_JOBS_CHANNEL } : undefined,
      claim: (limit, at) => this.claim(limit, at),
      run: (step) => this.run(step),
      nextDueAt: async () => (await this.prisma.$queryRawUnsafe<{ next_due_at: Date | null }[]>(nextDueAtSql(BILLING_ROWS)))[0]?.next_due_at ?? null,
      log,
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.worker.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.worker.stop();
  }

  /** Looks for due steps now. */
  wake(): void {
    this.worker.wake();
  }

  /** Leases up to `limit` steps due at `at` (the engine's clock). */
  claim(limit: number, at: Date): Promise<ClaimedStep[]> {
    return this.prisma.$queryRawUnsafe<ClaimedStep[]>(CLAIM_DUE_STEPS, ...claimParams(at, this.options.leaseMs, limit));
  }

  /** Runs one claimed step and records its outcome. */
  run(step: ClaimedStep): Promise<void> {
    if (step.kind === 'invoice') return this.raiseInvoice(step);
    if (step.kind === 'dunning') return this.sendReminder(step);
    return this.runLifecycleStep(step);
  }

  private async runLifecycleStep(step: ClaimedStep): Promise<void> {
    const tenant = { accountId: step.account_id, livemode: step.livemode };
    await this.prisma.$transaction(async (tx) => {
      const [job] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM billing_jobs WHERE id = ${step.id} FOR UPDATE`;
      // Our lease lapsed and another worker ran it: nothing left to do.
      if (job?.status !== 'pending') return;
      const subscription = await this.subscriptions.getForUpdate(tx, tenant, step.subscription_id);
      await tx.$executeRaw`UPDATE billing_jobs SET status = 'done', lease_until = NULL, attempts = attempts + 1, updated_at = ${this.now()} WHERE id = ${step.id}`;
      const expected = nextLifecycleStep(subscription);
      // A step the subscription no longer calls for (a change raced it) is done without effect.
      if (!expected || stepKey(expected.kind, subscription.id, expected.runAt) !== step.step_key) return;
      // On a test clock the move happens at its own time; on real time, when it runs.
      const now = subscription.testClockId ? step.run_at : this.now();
      const change = LIFECYCLE_RULES[step.kind as LifecycleKind](subscription, step.run_at, now);
      await this.subscriptions.update(tx, change);
    }, { maxWait: 10_000, timeout: 20_000 });
  }

  private async raiseInvoice(step: ClaimedStep): Promise<void> {
    const tenant = { accountId: step.account_id, livemode: step.livemode };
    try {
      const invoiceId = await this.invoicer.raise(tenant, step.subscription_id, step.step_key, step.payload as InvoicePayload);
      await this.prisma.$executeRaw`
        UPDATE billing_jobs SET status = 'done', result = ${invoiceId}, lease_until = NULL, attempts = attempts + 1, last_error = NULL, updated_at = ${this.now()}
        WHERE id = ${step.id} AND status = 'pending'`;
    } catch (error) {
      await this.retryLater(step, error);
    }
  }

  /**
   * Asks invoicing to send the reminder (idempotent by invoice + reminder number, so a repeat
   * after a lost answer or a dead worker sends nothing new), then, in one transaction that
   * re-checks the step under lock, marks it done and — when it was the final reminder and it
   * went out (the invoice still unpaid) — moves the subscription to past_due. A payment
   * cancels the pending reminders under the same row lock (InvoicePaidConsumer), so a reminder
   * cancelled meanwhile moves nothing.
   */
  private async sendReminder(step: ClaimedStep): Promise<void> {
    const tenant = { accountId: step.account_id, livemode: step.livemode };
    const reminder = step.payload as DunningPayload;
    let sent: boolean;
    try {
      sent = await this.invoicer.remind(tenant, reminder);
    } catch (error) {
      await this.retryLater(step, error);
      return;
    }
    await this.prisma.$transaction(async (tx) => {
      const [job] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM billing_jobs WHERE id = ${step.id} FOR UPDATE`;
      if (job?.status !== 'pending') return;
      await tx.$executeRaw`
        UPDATE billing_jobs SET status = 'done', result = ${sent ? 'sent' : 'not_sent'}, lease_until = NULL, attempts = attempts + 1, last_error = NULL, updated_at = ${this.now()}
        WHERE id = ${step.id}`;
      if (!sent || reminder.reminder_number !== reminder.reminder_count) return;
      const subscription = await this.subscriptions.getForUpdate(tx, tenant, step.subscription_id);
      const change = fallPastDue(subscription, reminder.invoice_id, subscription.testClockId ? step.run_at : this.now());
      if (change.events.length > 0) await this.subscriptions.update(tx, change);
    }, { maxWait: 10_000, timeout: 20_000 });
  }

  /** Invoicing did not answer (an outage, UNIMPLEMENTED, a refusal): the step stays pending and is tried again later. */
  private async retryLater(step: ClaimedStep, error: unknown): Promise<void> {
    const attempts = step.attempts + 1;
    const now = this.now();
    const message = isDomainError(error) ? `${error.code}: ${error.message}` : (error as Error).message;
    this.log(`billing clock: ${step.kind} request failed; will retry`, { step: step.step_key, attempts, error: message });
    await this.prisma.$executeRaw`
      UPDATE billing_jobs SET attempts = ${attempts}, last_error = ${message}, lease_until = NULL,
             due_at = ${new Date(now.getTime() + this.options.retryDelayMs(attempts))}, updated_at = ${now}
      WHERE id = ${step.id} AND status = 'pending'`;
  }
}
