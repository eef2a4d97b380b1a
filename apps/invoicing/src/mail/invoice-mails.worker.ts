import { resolveLocale } from '@recur/i18n';
import { CustomerDirectory } from '../customers/customer-directory.client';
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { JobWorker } from '@recur/jobs';
import { CLOCK, type Clock } from '@recur/kernel';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { INVOICING_CONFIG, type InvoicingConfig } from '../invoicing-config';
import { renderInvoicePdf, sellerNameOf } from '../invoices/invoice-pdf';
import { InvoicesRepository } from '../invoices/invoices.repository';
import { PrismaService } from '../infrastructure/prisma.service';
import { SellerProfilesRepository } from '../seller/seller-profiles.repository';
import { composeInvoiceMail } from './invoice-mail';
import { type ClaimedMail, INVOICE_MAILS_CHANNEL, InvoiceMailsRepository, type MailOutcome } from './invoice-mails.repository';
import { MAIL_SCHEDULE } from './mail-schedule';
import { type SendResult, SmtpSender } from './smtp-sender';

/** How long a claimed mail stays leased: the SMTP timeouts (10 s + 10 s + 30 s) with a margin. */
const LEASE_MS = 90_000;
const IDLE_POLL_MS = 1_000;

/**
 * Sends queued invoice e-mails through SMTP. A JobWorker claims due mails with a lease (replicas
 * share the work; a mail whose worker died is claimed again when its lease lapses), renders the
 * invoice's PDF as the invoice stands, and records the outcome: sent, due again on
 * MAIL_SCHEDULE, or failed. Delivery is at least once: a worker that dies after the server
 * accepted a mail and before recording it sends it again (with the same Message-ID).
 */
@Injectable()
export class InvoiceMailsWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly worker: JobWorker<ClaimedMail>;
  private readonly smtp: SmtpSender;

  constructor(
    private readonly mails: InvoiceMailsRepository,
    private readonly invoices: InvoicesRepository,
    private readonly sellers: SellerProfilesRepository,
    private readonly prisma: PrismaService,
    private readonly customers: CustomerDirectory,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
    @Inject(INVOICING_CONFIG) config: InvoicingConfig,
    @Inject(CLOCK) private readonly now: Clock,
  ) {
    this.smtp = new SmtpSender(config.smtpUrl, config.mailFrom);
    this.worker = new JobWorker<ClaimedMail>({
      name: 'invoice mails',
      clock: now,
      concurrency: 4,
      wakeUp: { databaseUrl: runtime.config.databaseUrl, channel: INVOICE_MAILS_CHANNEL },
      pollMs: IDLE_POLL_MS,
      claim: (limit, at) => this.mails.claim(limit, at, LEASE_MS),
      run: (mail) => this.attempt(mail),
      nextDueAt: () => this.mails.nextDueAt(),
      log: (message, fields) => runtime.logger.warn(message, fields),
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.worker.start();
  }

  /** Attempts in flight finish (bounded by the SMTP timeouts) so their outcome is recorded. */
  async onModuleDestroy(): Promise<void> {
    await this.worker.stop();
    this.smtp.close();
  }

  private async attempt(mail: ClaimedMail): Promise<void> {
    const invoice = await this.invoices.get(mail.tenant, mail.invoiceId);
    if (invoice.status === 'void') {
      await this.mails.record(mail, { status: 'canceled', error: 'the invoice was voided before the mail left' });
      return;
    }
    // A reminder asks for a payment: once the invoice is paid (or refunded) it is not sent.
    if (mail.kind === 'reminder' && invoice.status !== 'failed') {
      await this.mails.record(mail, { status: 'canceled', error: `the invoice was ${invoice.status} before the reminder left` });
      return;
    }
    // The seller as it is now (renewals and reminders are queued with no account name).
    const seller = await this.sellers.find(this.prisma, invoice.tenant.accountId);
    // The customer's language as it is now, else the account's (docs/localization.md#which-language).
    const locale = resolveLocale(await this.customers.preferredLocale(invoice.tenant, invoice.customer.id), seller.defaultLocale);
    const context = { sellerName: mail.sellerName, seller, locale };
    const composed = composeInvoiceMail(invoice, mail, sellerNameOf(context), context.seller, locale);
    const pdf = await renderInvoicePdf(invoice, context);
    const result = await this.smtp.send({
      messageId: mail.messageId,
      to: mail.recipient,
      subject: composed.subject,
      text: composed.text,
      attachments: [{ filename: `${invoice.number ?? invoice.id}.pdf`, content: pdf, contentType: 'application/pdf' }],
    });
    await this.mails.record(mail, this.outcome(mail, result));
  }

  private outcome(mail: ClaimedMail, result: SendResult): MailOutcome {
    if (result.ok) return { status: 'sent' };
    const nextAttemptAt = result.permanent ? null : MAIL_SCHEDULE.nextAttemptAt(mail.attemptCount + 1, this.now());
    this.runtime.logger.warn(`invoice mail ${mail.id} attempt ${mail.attemptCount + 1} failed${nextAttemptAt ? '; will retry' : '; giving up'}`, { error: result.error });
    return nextAttemptAt ? { status: 'pending', nextAttemptAt, error: result.error } : { status: 'failed', error: result.error };
  }
}
