import { Inject, Injectable } from '@nestjs/common';
import { type DueRowsTable, nextDueAtSql } from '@recur/jobs';
import { CLOCK, type Clock, newId, type TenantRef } from '@recur/kernel';
import { claimDueRows, type DueRowsClaim, insertRowsStatement, notifyOnCommit, type OpenTransaction, statementsOf } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Invoice } from '../invoices/invoice';
import { assertSendable, type InvoiceMailKind, InvoiceMailer, type InvoiceMailRequest, sendKeyOf } from './invoice-mail';

/** NOTIFY channel: the commit that queued a mail wakes the sender at once. */
export const INVOICE_MAILS_CHANNEL = 'recur_invoice_mails';

/** Pending mails are due-time rows: due at `next_attempt_at`, leased until `lease_until`. */
export const INVOICE_MAIL_ROWS: DueRowsTable = { table: 'invoice_mails', dueAt: 'next_attempt_at', leaseUntil: 'lease_until', pending: "status = 'pending'" };

/** A claimed mail, as the sender needs it. */
export interface ClaimedMail {
  id: string;
  tenant: TenantRef;
  invoiceId: string;
  kind: InvoiceMailKind;
  reminderNumber: number | null;
  recipient: string;
  sellerName: string;
  messageId: string;
  attemptCount: number;
}

interface ClaimedRow {
  id: string;
  account_id: string;
  livemode: boolean;
  invoice_id: string;
  kind: InvoiceMailKind;
  reminder_number: number | null;
  recipient: string;
  seller_name: string;
  message_id: string;
  attempt_count: number;
}

/** What became of one attempt: sent, to be tried again at a time, or given up. */
export type MailOutcome = { status: 'sent' } | { status: 'pending'; nextAttemptAt: Date; error: string } | { status: 'failed' | 'canceled'; error: string };

/**
 * The invoice e-mails in invoicing's database: the durable side of InvoiceMailer. Queueing
 * writes a row (in the caller's transaction); the sender claims due rows with a lease and
 * records each attempt's outcome here.
 */
@Injectable()
export class InvoiceMailsRepository extends InvoiceMailer<OpenTransaction> {
  private readonly claimDueMails: DueRowsClaim<ClaimedRow>;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
  ) {
    super();
    this.claimDueMails = claimDueRows(
      prisma.pool,
      INVOICE_MAIL_ROWS,
      'SELECT id, account_id, livemode, invoice_id, kind, reminder_number, recipient, seller_name, message_id, attempt_count FROM claimed',
    );
  }

  async queue(tx: OpenTransaction, invoice: Invoice, request: InvoiceMailRequest): Promise<string> {
    return (await this.insert(tx, [invoice], request))[0];
  }

  async queueAll(tx: OpenTransaction, invoices: readonly Invoice[], request: InvoiceMailRequest): Promise<void> {
    await this.insert(tx, invoices, request);
  }

  /** One row per invoice and send, in one statement: a repeated queueing (a retried command) finds the first and answers its id. */
  private async insert(tx: OpenTransaction, invoices: readonly Invoice[], request: InvoiceMailRequest): Promise<string[]> {
    if (invoices.length === 0) return [];
    invoices.forEach(assertSendable);
    const now = this.now();
    const sendKey = sendKeyOf(request);
    const rows = invoices.map((invoice) => {
      const id = newId('mail');
      return {
        id,
        accountId: invoice.tenant.accountId,
        livemode: invoice.tenant.livemode,
        invoiceId: invoice.id,
        kind: request.kind,
        reminderNumber: request.kind === 'reminder' ? request.reminderNumber : null,
        sendKey,
        recipient: invoice.customer.email,
        sellerName: request.sellerName,
        messageId: `<${id}@recur.invoicing>`,
        status: 'pending',
        attemptCount: 0,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      };
    });
    const { sql, values } = insertRowsStatement('invoice_mails', rows, 'ON CONFLICT (invoice_id, send_key) DO UPDATE SET send_key = EXCLUDED.send_key RETURNING id');
    const inserted = await statementsOf(tx).query<{ id: string }>(sql, values);
    await notifyOnCommit(tx, INVOICE_MAILS_CHANNEL);
    return inserted.map((row) => row.id);
  }

  /** Leases up to `limit` due mails until `now + leaseMs`. */
  async claim(limit: number, now: Date, leaseMs: number): Promise<ClaimedMail[]> {
    const rows = await this.claimDueMails(limit, now, leaseMs);
    return rows.map((row) => ({
      id: row.id,
      tenant: { accountId: row.account_id, livemode: row.livemode },
      invoiceId: row.invoice_id,
      kind: row.kind,
      reminderNumber: row.reminder_number,
      recipient: row.recipient,
      sellerName: row.seller_name,
      messageId: row.message_id,
      attemptCount: row.attempt_count,
    }));
  }

  async nextDueAt(): Promise<Date | null> {
    return (await this.prisma.$queryRawUnsafe<{ next_due_at: Date | null }[]>(nextDueAtSql(INVOICE_MAIL_ROWS)))[0]?.next_due_at ?? null;
  }

  /**
   * Records attempt `attemptCount + 1` of `mail`. Only if the row still stands where this
   * worker claimed it: when the lease lapsed and another worker recorded the attempt first,
   * its outcome stays.
   */
  async record(mail: ClaimedMail, outcome: MailOutcome): Promise<void> {
    const now = this.now();
    await this.prisma.$executeRaw`
      UPDATE invoice_mails SET status = ${outcome.status}, attempt_count = ${mail.attemptCount + 1},
             next_attempt_at = ${outcome.status === 'pending' ? outcome.nextAttemptAt : null}, lease_until = NULL,
             last_error = ${outcome.status === 'sent' ? null : outcome.error}, sent_at = ${outcome.status === 'sent' ? now : null}, updated_at = ${now}
      WHERE id = ${mail.id} AND status = 'pending' AND attempt_count = ${mail.attemptCount}`;
  }
}
