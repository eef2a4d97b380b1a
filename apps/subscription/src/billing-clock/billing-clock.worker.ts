import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { type DueRowsTable, JobWorker, nextDueAtSql } from '@recur/jobs';
import { type Clock, isDomainError, notFound } from '@recur/kernel';
import { claimDueRows, type DueRowsClaim, PgTransactions } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import { fallPastDue, LIFECYCLE_MOVES, nextLifecycleStep, type Subscription, type SubscriptionChange, usagePeriodToBill } from '../subscriptions/subscription';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { BILLING_JOBS_CHANNEL, type BillingJobKind, BillingJobs, type DunningPayload, type InvoicePayload, isPaymentRetry, type PaymentRetryPayload, stepKey } from './billing-jobs.repository';
import type { BillingInvoicing, PeriodInvoiceOutcome } from './invoicing.client';
import type { BillingCollection } from './payments.client';
import { type StepUsage, usageOfSteps } from './steps-usage';
import type { BillingUsage } from './usage-metering.client';

/** A claimed step of the billing clock. */
export interface ClaimedStep {
  id: string;
  kind: BillingJobKind;
  step_key: string;
  account_id: string;
  livemode: boolean;
  /** Null for a one-off invoice's reminder (its customer's time, no subscription). */
  subscription_id: string | null;
  run_at: Date;
  attempts: number;
  payload: unknown;
}

/** An invoice request waits while an earlier period's request of its subscription is pending. */
const NO_EARLIER_INVOICE_PENDING = `NOT EXISTS (
      SELECT 1 FROM billing_jobs earlier WHERE earlier.subscription_id = billing_jobs.subscription_id
        AND earlier.kind = 'invoice' AND earlier.status = 'pending' AND earlier.run_at < billing_jobs.run_at)`;

/**
 * The billing clock's rows: due at `due_at`, leased until `lease_until`. An invoice waits for
 * the earlier periods' invoices of its subscription, so periods are billed in order.
 */
export const BILLING_ROWS: DueRowsTable = {
  table: 'billing_jobs',
  dueAt: 'due_at',
  leaseUntil: 'lease_until',
  pending: `status = 'pending' AND (kind <> 'invoice' OR ${NO_EARLIER_INVOICE_PENDING})`,
};

/**
 * BILLING_ROWS split by kind, for the worker's claims: each over its own partial index
 * (migration `billing_jobs_pending_by_kind`), so invoice requests are found beside a backlog of
 * renewals due earlier without walking it.
 */
export const INVOICE_ROWS: DueRowsTable = { ...BILLING_ROWS, pending: `status = 'pending' AND kind = 'invoice' AND ${NO_EARLIER_INVOICE_PENDING}` };
export const OTHER_STEP_ROWS: DueRowsTable = { ...BILLING_ROWS, pending: `status = 'pending' AND kind <> 'invoice'` };

/** What a claim of due steps answers. */
const CLAIMED_STEPS = 'SELECT c.id, c.kind, c.step_key, c.account_id, c.livemode, c.subscription_id, c.run_at, c.attempts, c.payload FROM claimed c';

export interface BillingClockOptions {
  /** How long a claimed step belongs to its worker; past it (the worker died) another claims it. */
  leaseMs: number;
  /** Steps run together: lifecycle steps in one transaction, invoice requests in one call to invoicing. */
  batchSize: number;
  /** Batches run at once; 0 runs no worker in this process (claim and run stay callable). */
  concurrency: number;
  pollMs: number;
  /** The wait before invoice attempt n+1: 1 s doubling, at most 5 minutes. */
  retryDelayMs: (attempts: number) => number;
}

export const DEFAULT_BILLING_CLOCK_OPTIONS: BillingClockOptions = {
  leaseMs: 30_000,
  batchSize: 100,
  concurrency: 4,
  pollMs: 1_000,
  retryDelayMs: (attempts) => Math.min(1_000 * 2 ** Math.max(0, attempts - 1), 300_000),
};

/**
 * Test only (docs/operations/configuration.md): `RECUR_FAULT_CLOCK_KILL_AFTER_INVOICE=<n>` makes the process
 * kill itself with SIGKILL once invoicing has raised n of its invoice requests (counting a batch's
 * items), before their steps are marked done, so crash tests can prove such requests are sent
 * again and raise one invoice each.
 */
export const FAULT_KILL_AFTER_INVOICE = 'RECUR_FAULT_CLOCK_KILL_AFTER_INVOICE';

function killAfterInvoiceFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const n = Number(env[FAULT_KILL_AFTER_INVOICE]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

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
  private readonly worker: JobWorker<ClaimedStep[]>;
  /** The lifecycle batches' transactions: plain `pg` on Prisma's own pool (a fraction of the ORM's CPU per statement). */
  private readonly transactions: PgTransactions;
  private readonly options: BillingClockOptions;
  private readonly log: (message: string, fields?: Record<string, unknown>) => void;
  private readonly killAfterInvoices = killAfterInvoiceFromEnv(process.env);
  private readonly usage: BillingUsage | undefined;
  private readonly collection: BillingCollection | undefined;
  /** Queues the reminders of a retry that found nothing to charge. */
  private readonly jobs: BillingJobs;
  private readonly claimDueSteps: DueRowsClaim<ClaimedStep>;
  private readonly claimDueInvoices: DueRowsClaim<ClaimedStep>;
  private readonly claimDueOtherSteps: DueRowsClaim<ClaimedStep>;
  private invoicesAnswered = 0;
  /** The worker's invoice batches in flight: claimBatches keeps them to about half its concurrency. */
  private invoiceBatchesRunning = 0;

  /** Built by the module's factory (and by tests, with their own clock and invoicer). */
  constructor(
    private readonly prisma: PrismaService,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly invoicer: BillingInvoicing,
    private readonly now: Clock,
    options: Partial<BillingClockOptions> & {
      databaseUrl?: string;
      log?: (message: string, fields?: Record<string, unknown>) => void;
      /** Where the usage of closed periods is measured; without it, metered components bill nothing. */
      usage?: BillingUsage;
      /** Where smart retries are pushed (payments); without it, a retry step waits, retried like an outage. */
      collection?: BillingCollection;
    } = {},
  ) {
    this.options = { ...DEFAULT_BILLING_CLOCK_OPTIONS, ...options };
    const { databaseUrl } = options;
    this.usage = options.usage;
    this.collection = options.collection;
    this.jobs = new BillingJobs(now);
    this.log = options.log ?? (() => undefined);
    const log = this.log;
    this.transactions = new PgTransactions(prisma.pool, (error) => log('billing clock: wake-up after commit failed; workers will poll', { error: error.message }));
    this.claimDueSteps = claimDueRows(prisma.pool, BILLING_ROWS, CLAIMED_STEPS);
    this.claimDueInvoices = claimDueRows(prisma.pool, INVOICE_ROWS, CLAIMED_STEPS);
    this.claimDueOtherSteps = claimDueRows(prisma.pool, OTHER_STEP_ROWS, CLAIMED_STEPS);
    this.worker = new JobWorker<ClaimedStep[]>({
      name: 'billing clock',
      clock: now,
      concurrency: this.options.concurrency,
      pollMs: this.options.pollMs,
      wakeUp: databaseUrl ? { databaseUrl, channel: BILLING_JOBS_CHANNEL } : undefined,
      claim: (slots, at) => this.claimBatches(slots, at),
      run: (batch) => this.runBatch(batch),
      nextDueAt: async () => (await this.prisma.$queryRawUnsafe<{ next_due_at: Date | null }[]>(nextDueAtSql(BILLING_ROWS)))[0]?.next_due_at ?? null,
      log,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.concurrency > 0) await this.worker.start();
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
    return this.claimDueSteps(limit, at, this.options.leaseMs);
  }

  /**
   * Leases up to `slots` batches for the worker. Invoice requests take up to half the worker's
   * concurrency (counting those running) and lifecycle steps and reminders the rest, each kind's
   * spare slots going to the other: so invoices are raised while a backlog of renewals is still
   * being renewed, in another process (invoicing), rather than all after it (docs/performance.md).
   */
  async claimBatches(slots: number, at: Date): Promise<ClaimedStep[][]> {
    const { batchSize, concurrency, leaseMs } = this.options;
    const claimRows = async (claim: DueRowsClaim<ClaimedStep>, batchCount: number) => (batchCount > 0 ? claim(batchCount * batchSize, at, leaseMs) : []);
    const invoiceShare = Math.min(slots, Math.max(0, Math.ceil(concurrency / 2) - this.invoiceBatchesRunning));
    const invoices = await claimRows(this.claimDueInvoices, invoiceShare);
    const others = await claimRows(this.claimDueOtherSteps, slots - Math.ceil(invoices.length / batchSize));
    const spare = slots - Math.ceil(invoices.length / batchSize) - Math.ceil(others.length / batchSize);
    const moreInvoices = invoices.length === invoiceShare * batchSize ? await claimRows(this.claimDueInvoices, spare) : [];
    return batches([...invoices, ...moreInvoices, ...others], batchSize);
  }

  /** Runs one claimed step and records its outcome. */
  run(step: ClaimedStep): Promise<void> {
    return this.runBatch([step]);
  }

  /** Runs claimed steps of one kind together (see batches) and records their outcomes. */
  async runBatch(steps: ClaimedStep[]): Promise<void> {
    const invoices = steps.filter((step) => step.kind === 'invoice');
    const reminders = steps.filter((step) => step.kind === 'dunning');
    const lifecycle = steps.filter((step) => step.kind !== 'invoice' && step.kind !== 'dunning');
    if (invoices.length > 0) {
      this.invoiceBatchesRunning++;
      try {
        await this.raiseInvoices(invoices);
      } finally {
        this.invoiceBatchesRunning--;
      }
    }
    for (const reminder of reminders) await (isPaymentRetry(reminder.payload) ? this.retryPayment(reminder) : this.sendReminder(reminder));
    if (lifecycle.length > 0) await this.runLifecycleSteps(lifecycle);
  }

  /**
   * The steps in one transaction (one commit for the batch) of a fixed number of statements
   * whatever its size: mark the steps done, lock and read their subscriptions, then write every
   * change at once (SubscriptionsRepository.updateAll). If it fails (one step's error, a deadlock
   * with an API call), each step alone, so one step cannot hold back the others.
   */
  private async runLifecycleSteps(steps: ClaimedStep[]): Promise<void> {
    try {
      // Outside the transaction: one call to usage-metering for the batch, no lock held meanwhile.
      const usage = this.usage ? await usageOfSteps(this.prisma, this.usage, steps) : new Map<string, StepUsage>();
      await this.transactions.transaction(async (tx) => {
        // Locks the steps and marks those still pending done, in one statement; a step that is
        // no longer pending ran already (our lease lapsed and another worker took it): skipped.
        const pending = new Set((await tx.query<{ id: string }>(
          `UPDATE billing_jobs SET status = 'done', lease_until = NULL, attempts = attempts + 1, updated_at = $2
           WHERE id = ANY($1::text[]) AND status = 'pending' RETURNING id`,
          [steps.map((step) => step.id), this.now()],
        )).map((row) => row.id));
        const due = steps.filter((step) => pending.has(step.id));
        if (due.length === 0) return;
        // Lifecycle steps always belong to a subscription; only reminders may not.
        const subscriptions = await this.subscriptions.lockAll(tx, due.map((step) => ({ tenant: { accountId: step.account_id, livemode: step.livemode }, id: step.subscription_id! })));
        const changes = due.flatMap((step) => {
          const change = this.lifecycleMove(step, subscriptions.get(step.subscription_id!), usage.get(step.id));
          return change ? [change] : [];
        });
        await this.subscriptions.updateAll(tx, changes);
      });
    } catch (error) {
      if (steps.length === 1) throw error;
      this.log('billing clock: batch failed; running its steps one by one', { steps: steps.length, error: (error as Error).message });
      let firstFailure: unknown;
      for (const step of steps) await this.runLifecycleSteps([step]).catch((failure: unknown) => (firstFailure ??= failure));
      if (firstFailure !== undefined) throw firstFailure;
    }
  }

  /** One lifecycle step, already marked done: the subscription's move, if it still calls for this step. */
  private lifecycleMove(step: ClaimedStep, subscription: Subscription | undefined, usage: StepUsage | undefined): SubscriptionChange | undefined {
    if (!subscription) throw notFound('subscription', step.subscription_id ?? '');
    const expected = nextLifecycleStep(subscription);
    // A step the subscription no longer calls for (a change raced it) is done without effect.
    if (!expected || stepKey(expected.kind, subscription.id, expected.runAt) !== step.step_key) return undefined;
    // On a test clock the move happens at its own time; on real time, when it runs.
    const now = subscription.testClockId ? step.run_at : this.now();
    const toBill = this.usage ? usagePeriodToBill(subscription) : null;
    if (toBill && usage?.periodStart.getTime() !== toBill.period.start.getTime()) {
      // The subscription changed between the measure and this lock: measured again when the step reruns.
      throw new Error(`billing clock: usage of ${subscription.id} was not measured for its period ${toBill.period.start.toISOString()}`);
    }
    return LIFECYCLE_MOVES[step.kind as Exclude<BillingJobKind, 'invoice' | 'dunning'>](subscription, step.run_at, now, usage?.lines ?? []);
  }

  /** One call to invoicing for the batch; each step is done with its invoice, or due again later. */
  private async raiseInvoices(steps: ClaimedStep[]): Promise<void> {
    let outcomes: PeriodInvoiceOutcome[];
    try {
      outcomes = await this.invoicer.raise(steps.map((step) => ({
        tenant: { accountId: step.account_id, livemode: step.livemode },
        subscriptionId: step.subscription_id!,
        requestId: step.step_key,
        invoice: step.payload as InvoicePayload,
      })));
    } catch (error) {
      outcomes = steps.map(() => ({ error: error as Error }));
    }
    const done = steps.flatMap((step, index) => {
      const outcome = outcomes[index];
      return 'invoiceId' in outcome ? [{ id: step.id, invoiceId: outcome.invoiceId }] : [];
    });
    this.invoicesAnswered += done.length;
    if (this.killAfterInvoices !== undefined && this.invoicesAnswered >= this.killAfterInvoices) process.kill(process.pid, 'SIGKILL');
    const now = this.now();
    if (done.length > 0) {
      await this.prisma.$executeRaw`
        UPDATE billing_jobs SET status = 'done', result = raised.invoice_id, lease_until = NULL, attempts = attempts + 1, last_error = NULL, updated_at = ${now}
        FROM unnest(${done.map((step) => step.id)}::text[], ${done.map((step) => step.invoiceId)}::text[]) AS raised(id, invoice_id)
        WHERE billing_jobs.id = raised.id AND billing_jobs.status = 'pending'`;
    }
    for (const [index, step] of steps.entries()) {
      const outcome = outcomes[index];
      if (!('invoiceId' in outcome)) await this.retryLater(step, outcome.error);
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
      // The final reminder of a one-off invoice moves nothing: its invoice.dunning_retry (final: true) is all.
      if (!sent || reminder.reminder_number !== reminder.reminder_count || !step.subscription_id) return;
      const subscription = await this.subscriptions.getForUpdate(tx, tenant, step.subscription_id);
      const change = fallPastDue(subscription, reminder.invoice_id, subscription.testClockId ? step.run_at : this.now());
      if (change.events.length > 0) await this.subscriptions.update(tx, change);
    }, { maxWait: 10_000, timeout: 20_000 });
  }

  /**
   * A smart retry (docs/api/dunning.md#smart-retries): asks payments to push the attempt
   * (idempotent by the step's key, and by `collect:<invoice>:<attempt>` at the provider), then
   * marks the step done under its lock. The push's outcome comes back as a payment or a failure
   * of the invoice (InvoicePaid, InvoicePaymentFailed). An invoice paid or voided meanwhile is
   * refused by payments' one-collection lock (`not_owed`): nothing pushed. A customer left with no
   * default method has nothing to charge: the retries end and the reminders start from here.
   */
  private async retryPayment(step: ClaimedStep): Promise<void> {
    const tenant = { accountId: step.account_id, livemode: step.livemode };
    const retry = step.payload as PaymentRetryPayload;
    let answer: Awaited<ReturnType<BillingCollection['retry']>>;
    try {
      if (!this.collection) throw new Error('no payments service to push the retry to');
      answer = await this.collection.retry(tenant, retry.invoice_id, retry.payment_attempt, step.step_key);
    } catch (error) {
      await this.retryLater(step, error);
      return;
    }
    await this.prisma.$transaction(async (tx) => {
      const [job] = await tx.$queryRaw<{ status: string; test_clock_id: string | null }[]>`SELECT status, test_clock_id FROM billing_jobs WHERE id = ${step.id} FOR UPDATE`;
      if (job?.status !== 'pending') return;
      const result = answer.reason ? `${answer.outcome}:${answer.reason}` : answer.outcome;
      await tx.$executeRaw`
        UPDATE billing_jobs SET status = 'done', result = ${result}, lease_until = NULL, attempts = attempts + 1, last_error = NULL, updated_at = ${this.now()}
        WHERE id = ${step.id}`;
      if (answer.outcome === 'pushed') return;
      // Nothing was pushed: the later retries would find the same (a void invoice stays void).
      await this.jobs.cancelPaymentRetries(tx, retry.invoice_id);
      if (answer.outcome === 'not_owed') return;
      const owner = { tenant, subscriptionId: step.subscription_id, testClockId: job.test_clock_id };
      await this.jobs.queueDunning(tx, owner, retry.invoice_id, retry.dunning_days, job.test_clock_id ? step.run_at : this.now());
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

/**
 * Claimed steps in batches of at most `size`, each of one kind (invoice requests travel
 * together to invoicing; lifecycle steps share a transaction), in the order their moments come
 * (then by step key): the claim's RETURNING gives no order, and a clock advanced past two
 * reminders of one invoice must send the first first.
 */
export function batches(steps: ClaimedStep[], size: number): ClaimedStep[][] {
  const result: ClaimedStep[][] = [];
  const inTurn = [...steps].sort((a, b) => a.run_at.getTime() - b.run_at.getTime() || (a.step_key < b.step_key ? -1 : a.step_key > b.step_key ? 1 : 0));
  for (const group of [inTurn.filter((step) => step.kind === 'invoice'), inTurn.filter((step) => step.kind !== 'invoice')]) {
    for (let i = 0; i < group.length; i += size) result.push(group.slice(i, i + size));
  }
  return result;
}
