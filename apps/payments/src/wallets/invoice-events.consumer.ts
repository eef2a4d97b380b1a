import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createRegistry } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { invoicingEventsV1, moneyFromMessage } from '@recur/contracts';
import { claimInboxEvent, consumerGroup, type EventOutcome, type InternalEvent, internalEventHandler, internalEventsTopic } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import type { TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';
import { WalletsService } from './wallets.service';

type Tx = Prisma.TransactionClient;

/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'payments.wallets';
const HANDLES = createRegistry(invoicingEventsV1.InvoiceFinalizedSchema, invoicingEventsV1.InvoicePaidSchema, invoicingEventsV1.InvoicePaymentFailedSchema);

/**
 * The billing reasons of the invoices a wallet pays first: a subscription's own invoices and
 * one-off invoices (`manual`). Never `top_up` (a top-up invoice paid by its own wallet would
 * credit back what it debited: money out of nothing), nor `sales_link` (a checkout's payer is at
 * the page, paying now).
 */
export const WALLET_PAID_BILLING_REASONS: readonly string[] = ['subscription_create', 'subscription_cycle', 'subscription_update', 'subscription_final', 'manual'];

/**
 * Reads invoicing's events for wallets, each once (the inbox claim commits with the change):
 * - InvoiceFinalized of a subscription or one-off invoice: the customer's wallet pays it when it covers it;
 * - InvoicePaid of a top-up invoice: the wallet is credited (wallet.topped_up);
 * - InvoicePaymentFailed of an automatic top-up's invoice: that top-up is no longer in flight.
 */
@Injectable()
export class WalletInvoiceEventsConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly wallets: WalletsService,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    await this.runtime.bus.subscribe(consumerGroup(CONSUMER), [internalEventsTopic('invoicing')], internalEventHandler(this.runtime.name, HANDLES, (event) => this.handle(event), { warn }));
  }

  /**
   * Most of invoicing's events ask nothing of a wallet (an invoice of a customer without one, an
   * invoice that is not a top-up paid or failed): those are acknowledged without a transaction or
   * an inbox row, as nothing is done that a redelivery could do twice. A wallet created after its
   * customer's invoice was finalized does not pay that invoice, with or without this first look.
   */
  async handle(event: InternalEvent): Promise<EventOutcome> {
    if (!event.payload || !event.tenant) return 'refused';
    const tenant = { accountId: event.tenant.accountId, livemode: event.tenant.livemode };
    const work = await this.workFor(tenant, event.payload);
    if (!work) return 'processed';
    return this.wallets.transaction(async (tx) => {
      if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return 'duplicate';
      await work(tx);
      return 'processed';
    });
  }

  /** What the event asks of a wallet, in the consumer's transaction; undefined when nothing. */
  private async workFor(tenant: TenantRef, payload: NonNullable<InternalEvent['payload']>): Promise<((tx: Tx) => Promise<unknown>) | undefined> {
    if (payload.typeUrl.endsWith(invoicingEventsV1.InvoiceFinalizedSchema.typeName)) {
      const invoice = anyUnpack(payload, invoicingEventsV1.InvoiceFinalizedSchema)?.invoice;
      if (!invoice || !WALLET_PAID_BILLING_REASONS.includes(invoice.billingReason)) return undefined;
      const amountDue = moneyFromMessage(invoice.amountDue, 'amount_due');
      if (amountDue.amountMinor <= 0 || !(await this.wallets.customerHasWallet(tenant, invoice.customerId, amountDue.currency))) return undefined;
      return (tx) => this.wallets.payInvoice(tx, tenant, { id: invoice.id, customerId: invoice.customerId, currency: amountDue.currency, amountDue: amountDue.amountMinor });
    }
    if (payload.typeUrl.endsWith(invoicingEventsV1.InvoicePaidSchema.typeName)) {
      const invoice = anyUnpack(payload, invoicingEventsV1.InvoicePaidSchema)?.invoice;
      return invoice?.billingReason === 'top_up' ? (tx) => this.wallets.creditTopUp(tx, tenant, invoice.id) : undefined;
    }
    const invoice = anyUnpack(payload, invoicingEventsV1.InvoicePaymentFailedSchema)?.invoice;
    return invoice?.billingReason === 'top_up' ? (tx) => this.wallets.failTopUp(tx, tenant, invoice.id) : undefined;
  }
}
