import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createRegistry } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { invoicingEventsV1, type invoiceV1, moneyFromMessage } from '@recur/contracts';
import { isDomainError, type TenantRef } from '@recur/kernel';
import { claimInboxEvent, consumerGroup, type EventOutcome, type InternalEvent, internalEventHandler, internalEventsTopic } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { PaymentMethodsRepository } from '../payment-methods/payment-methods.repository';
import { WALLET_PAID_BILLING_REASONS } from '../wallets/invoice-events.consumer';
import { WalletsService } from '../wallets/wallets.service';
import { RefundsService } from '../refunds/refunds.service';
import { PaymentsService } from './payments.service';

type Tx = Prisma.TransactionClient;

/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'payments.collection';
const HANDLES = createRegistry(invoicingEventsV1.InvoiceFinalizedSchema, invoicingEventsV1.InvoiceVoidedSchema, invoicingEventsV1.InvoicePaidSchema);

/**
 * Collection as invoicing's events call for it, each event once (the inbox claim commits with
 * the change):
 * - InvoiceFinalized of a `charge_automatically` invoice: the customer's wallet pays it when it
 *   covers it (as the wallet consumer would: one debit at most), else a payment prompt is pushed
 *   to the customer's default payment method; with no default method the invoice stays open for
 *   its payment link, which the finalization e-mail carries.
 * - InvoiceFinalized of a final invoice raised with `refund: true` whose total is below 0: its
 *   credit is refunded through the period invoice's payment (RefundsService.refundCredit).
 * - InvoiceVoided or InvoicePaid: the invoice stopped owing money; its pending payments are
 *   canceled where their provider allows it, so a payer page opened earlier refuses Approve.
 */
@Injectable()
export class InvoiceCollectionConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly payments: PaymentsService,
    private readonly wallets: WalletsService,
    private readonly methods: PaymentMethodsRepository,
    private readonly refunds: RefundsService,
    private readonly prisma: PrismaService,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    await this.runtime.bus.subscribe(consumerGroup(CONSUMER), [internalEventsTopic('invoicing')], internalEventHandler(this.runtime.name, HANDLES, (event) => this.handle(event), { warn }));
  }

  handle(event: InternalEvent): Promise<EventOutcome> {
    if (!event.payload || !event.tenant) return Promise.resolve('refused');
    const tenant = { accountId: event.tenant.accountId, livemode: event.tenant.livemode };
    const payload = event.payload;
    const finalized = payload.typeUrl.endsWith(invoicingEventsV1.InvoiceFinalizedSchema.typeName);
    const voided = payload.typeUrl.endsWith(invoicingEventsV1.InvoiceVoidedSchema.typeName);
    const invoice = finalized
      ? anyUnpack(payload, invoicingEventsV1.InvoiceFinalizedSchema)?.invoice
      : voided ? anyUnpack(payload, invoicingEventsV1.InvoiceVoidedSchema)?.invoice : anyUnpack(payload, invoicingEventsV1.InvoicePaidSchema)?.invoice;
    if (!invoice) return Promise.resolve('refused');
    const creditToRefund = finalized && invoice.creditRefundInvoiceId !== '' && (invoice.total?.amountMinor ?? 0n) < 0n;
    // Most finalized invoices are sent, not charged: nothing to record for them.
    if (finalized && invoice.collectionMethod !== 'charge_automatically' && !creditToRefund) return Promise.resolve('processed');
    return this.prisma.$transaction(async (tx) => {
      if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return 'duplicate';
      if (creditToRefund) await this.refundCredit(tx, tenant, invoice);
      else if (finalized) await this.chargeAutomatically(tx, tenant, invoice);
      else await this.payments.cancelPendingOfInvoice(tx, tenant, invoice.id, voided ? 'invoice_void' : 'invoice_paid');
      return 'processed';
    }, { maxWait: 10_000, timeout: 15_000 });
  }

  /** A final invoice's credit, raised with `refund: true`: refunded through the period invoice's payment (RefundsService.refundCredit). */
  private async refundCredit(tx: Tx, tenant: TenantRef, invoice: invoiceV1.Invoice): Promise<void> {
    const total = moneyFromMessage(invoice.total, 'total');
    const refund = await this.refunds.refundCredit(tx, tenant, { invoiceId: invoice.id, periodInvoiceId: invoice.creditRefundInvoiceId, amount: { amountMinor: -total.amountMinor, currency: total.currency } });
    if (!refund) this.runtime.logger.warn(`credit of invoice ${invoice.id} stays in the balance: invoice ${invoice.creditRefundInvoiceId} holds no payment left to refund it through`);
  }

  private async chargeAutomatically(tx: Tx, tenant: TenantRef, invoice: invoiceV1.Invoice): Promise<void> {
    const amountDue = moneyFromMessage(invoice.amountDue, 'amount_due');
    if (amountDue.amountMinor <= 0) return;
    if (WALLET_PAID_BILLING_REASONS.includes(invoice.billingReason)) {
      const byWallet = await this.wallets.payInvoice(tx, tenant, { id: invoice.id, customerId: invoice.customerId, currency: amountDue.currency, amountDue: amountDue.amountMinor });
      if (byWallet === 'paid' || byWallet === 'already_paid' || byWallet === 'collecting') return;
    }
    const method = await this.methods.findDefault(tenant, invoice.customerId, tx);
    if (!method) {
      this.runtime.logger.warn(`automatic collection: customer ${invoice.customerId} has no default payment method; invoice ${invoice.id} waits for its payment link`);
      return;
    }
    try {
      // The key fixes the provider's id: a redelivery after a crash asks for the same deposit, never a second one.
      await this.payments.initiatePush(
        tx, tenant, { id: invoice.id, number: invoice.number, status: invoice.status, amountDue }, { phoneNumber: method.phoneNumber, provider: method.provider }, `collect:${invoice.id}`,
      );
    } catch (error) {
      // Collected meanwhile (paid by another way): nothing to push. An outage throws on, and the event comes again.
      if (!isDomainError(error) || error.kind !== 'failed_precondition') throw error;
      this.runtime.logger.warn(`automatic collection of invoice ${invoice.id} not started: ${error.code}`);
    }
  }
}
