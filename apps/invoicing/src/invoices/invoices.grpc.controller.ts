import { resolveLocale } from '@recur/i18n';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { create } from '@bufbuild/protobuf';
import { invoicingV1, moneyFromMessage, requireTenant, toMoneyMessage } from '@recur/contracts';
import { checkListPage, CLOCK, type Clock, type DomainError, hasPrefix, invalidArgument, isDomainError, newId, type TenantRef } from '@recur/kernel';
import { fromInt64, subtract } from '@recur/money';
import { CustomerDirectory } from '../customers/customer-directory.client';
import { checkReminder } from '../dunning/dunning-schedule';
import { Commands } from '../infrastructure/commands';
import type { SubscriptionInvoiceFields } from './invoice';
import { toInvoiceMessage, toLineMessage } from './invoice.mapper';
import { toTaxAmountMessage } from '../tax-rates/tax-rate.mapper';
import { renderInvoicePdf } from './invoice-pdf';
import { InvoicesService } from './invoices.service';
import { PrismaService } from '../infrastructure/prisma.service';
import { SellerProfilesRepository } from '../seller/seller-profiles.repository';

const fromUnixSeconds = (seconds: bigint, param: string): Date => {
  const value = fromInt64(seconds, param);
  if (value <= 0) throw invalidArgument(param, `${param} must be a positive unix time in seconds`);
  return new Date(value * 1000);
};
/** What settles an invoice: a payment at a provider (`pay_…`) or a prepaid wallet's debit (`wtx_…`). */
const checkPaymentId = (id: string): string => {
  if (!hasPrefix(id, 'pay') && !hasPrefix(id, 'wtx')) throw invalidArgument('payment_id', 'payment_id must be a payment id (pay_…) or a wallet transaction id (wtx_…)');
  return id;
};
const optionalTime = (seconds: bigint, param: string): Date | null => (seconds === 0n ? null : fromUnixSeconds(seconds, param));

/** The most periods one CreateSubscriptionInvoices call raises (its transaction holds their tenants' counters). */
const MAX_BATCH_INVOICES = 500;

function subscriptionInvoiceFields(request: invoicingV1.CreateSubscriptionInvoiceRequest): SubscriptionInvoiceFields {
  return {
    subscriptionId: request.subscriptionId,
    periodStart: fromUnixSeconds(request.periodStart, 'period_start'),
    periodEnd: fromUnixSeconds(request.periodEnd, 'period_end'),
    currency: request.currency,
    lines: request.lines.map((line, index) => ({
      kind: line.kind,
      description: line.description,
      quantity: fromInt64(line.quantity, `lines[${index}].quantity`),
      amount: moneyFromMessage(line.amount, `lines[${index}].amount`),
      periodStart: optionalTime(line.periodStart, `lines[${index}].period_start`),
      periodEnd: optionalTime(line.periodEnd, `lines[${index}].period_end`),
      taxRateIds: line.taxRateIds,
    })),
    discount: request.discount === undefined ? undefined : moneyFromMessage(request.discount, 'discount'),
    billingReason: request.billingReason,
    dueInDays: request.dueInDays,
    collectionMethod: request.collectionMethod,
    refundCredit: request.refundCredit,
  };
}

/** gRPC edge of the invoice use cases: decode, look the customer up, call, encode. No rules live here. */
@Controller()
export class InvoicesGrpcController {
  constructor(
    private readonly invoices: InvoicesService,
    private readonly customers: CustomerDirectory,
    private readonly commands: Commands,
    private readonly sellers: SellerProfilesRepository,
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  @GrpcMethod('InvoicingService', 'CreateInvoice')
  async createInvoice(request: invoicingV1.CreateInvoiceRequest): Promise<invoicingV1.CreateInvoiceResponse> {
    const tenant = requireTenant(request.tenant);
    const customer = await this.customers.lookup(tenant, request.customerId);
    return this.commands.run(tenant, request, invoicingV1.CreateInvoiceResponseSchema, async (tx) => ({
      invoice: toInvoiceMessage(
        await this.invoices.createOneOff(tx, tenant, customer, {
          currency: request.currency,
          description: request.description,
          amount: fromInt64(request.amount, 'amount'),
          lines: request.lines.map((line, index) => ({
            description: line.description,
            amount: fromInt64(line.amount, `lines[${index}].amount`),
            quantity: fromInt64(line.quantity, `lines[${index}].quantity`),
            taxRateIds: line.taxRateIds,
          })),
          dueDate: request.dueDate,
          status: request.status,
          metadata: request.metadata,
          billingReason: request.billingReason,
          collectionMethod: request.collectionMethod,
        }, request.sellerName),
      ),
    }));
  }

  @GrpcMethod('InvoicingService', 'CreateSubscriptionInvoice')
  async createSubscriptionInvoice(request: invoicingV1.CreateSubscriptionInvoiceRequest): Promise<invoicingV1.CreateSubscriptionInvoiceResponse> {
    const tenant = requireTenant(request.tenant);
    const customer = await this.customers.lookup(tenant, request.customerId);
    return this.commands.run(tenant, request, invoicingV1.CreateSubscriptionInvoiceResponseSchema, async (tx) => ({
      invoice: toInvoiceMessage(await this.invoices.createForSubscriptionPeriod(tx, tenant, customer, subscriptionInvoiceFields(request))),
    }));
  }

  /** The billing clock's batches: the customers asked in one call, every period raised in one transaction. */
  @GrpcMethod('InvoicingService', 'CreateSubscriptionInvoices')
  async createSubscriptionInvoices(request: invoicingV1.CreateSubscriptionInvoicesRequest): Promise<MessageInitShape<typeof invoicingV1.CreateSubscriptionInvoicesResponseSchema>> {
    if (request.invoices.length > MAX_BATCH_INVOICES) throw invalidArgument('invoices', `A batch carries at most ${MAX_BATCH_INVOICES} invoices`);
    const parsed = request.invoices.map((item): { tenant: TenantRef; fields: SubscriptionInvoiceFields; customerId: string } | { error: DomainError } => {
      try {
        return { tenant: requireTenant(item.tenant), fields: subscriptionInvoiceFields(item), customerId: item.customerId };
      } catch (error) {
        if (isDomainError(error)) return { error };
        throw error;
      }
    });
    const valid = parsed.flatMap((item) => ('error' in item ? [] : [item]));
    const customers = await this.customers.lookupAll(valid.map((item) => ({ tenant: item.tenant, id: item.customerId })));
    const outcomes = valid.length > 0 ? await this.invoices.createForSubscriptionPeriods(valid.map((item, index) => ({ ...item, customer: customers[index] }))) : [];
    let next = 0;
    return {
      results: parsed.map((item) => {
        const outcome = 'error' in item ? item : outcomes[next++];
        return 'error' in outcome ? { errorCode: outcome.error.code, errorMessage: outcome.error.message } : { invoice: toInvoiceMessage(outcome.invoice) };
      }),
    };
  }

  /** The upcoming-invoice preview's tax: the same rules and arithmetic as raising the invoice, nothing written. */
  @GrpcMethod('InvoicingService', 'PreviewInvoiceTax')
  async previewInvoiceTax(request: invoicingV1.PreviewInvoiceTaxRequest): Promise<MessageInitShape<typeof invoicingV1.PreviewInvoiceTaxResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const customer = await this.customers.lookup(tenant, request.customerId);
    const fields = subscriptionInvoiceFields(create(invoicingV1.CreateSubscriptionInvoiceRequestSchema, { currency: request.currency, lines: request.lines, discount: request.discount, periodStart: 1n, periodEnd: 2n }));
    const taxed = await this.invoices.previewTax(tenant, customer, fields);
    return {
      lines: taxed.lines.map(toLineMessage),
      subtotal: toMoneyMessage(taxed.subtotal),
      totalTaxAmounts: taxed.totalTaxAmounts.map(toTaxAmountMessage),
      tax: toMoneyMessage(taxed.tax),
      total: toMoneyMessage(taxed.total),
      totalExcludingTax: toMoneyMessage(subtract(taxed.total, taxed.tax)),
      customerTaxExempt: taxed.customerTaxExempt,
      startingBalance: toMoneyMessage(taxed.startingBalance),
      endingBalance: toMoneyMessage(taxed.endingBalance),
      amountDue: toMoneyMessage(taxed.amountDue),
    };
  }

  @GrpcMethod('InvoicingService', 'GetInvoice')
  async getInvoice(request: invoicingV1.GetInvoiceRequest): Promise<MessageInitShape<typeof invoicingV1.GetInvoiceResponseSchema>> {
    return { invoice: toInvoiceMessage(await this.invoices.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('InvoicingService', 'GetInvoiceForPayment')
  async getInvoiceForPayment(request: invoicingV1.GetInvoiceForPaymentRequest): Promise<MessageInitShape<typeof invoicingV1.GetInvoiceForPaymentResponseSchema>> {
    const invoice = await this.invoices.getForPayment(request.paymentToken);
    return { tenant: invoice.tenant, invoice: toInvoiceMessage(invoice) };
  }

  @GrpcMethod('InvoicingService', 'ListInvoices')
  async listInvoices(request: invoicingV1.ListInvoicesRequest): Promise<MessageInitShape<typeof invoicingV1.ListInvoicesResponseSchema>> {
    const page = checkListPage(request.page);
    const { invoices, page: info } = await this.invoices.list(requireTenant(request.tenant), page, {
      customerId: request.customerId,
      status: request.status,
      subscriptionId: request.subscriptionId,
    });
    return { invoices: invoices.map(toInvoiceMessage), page: info };
  }

  @GrpcMethod('InvoicingService', 'FinalizeInvoice')
  async finalizeInvoice(request: invoicingV1.FinalizeInvoiceRequest): Promise<invoicingV1.FinalizeInvoiceResponse> {
    const tenant = requireTenant(request.tenant);
    // The customer is asked again: finalization records them as they are now.
    const customer = await this.customers.lookup(tenant, (await this.invoices.get(tenant, request.id)).customer.id);
    return this.commands.run(tenant, request, invoicingV1.FinalizeInvoiceResponseSchema, async (tx) => ({
      invoice: toInvoiceMessage(await this.invoices.finalize(tx, tenant, request.id, customer, request.sellerName)),
    }));
  }

  @GrpcMethod('InvoicingService', 'ResendInvoice')
  async resendInvoice(request: invoicingV1.ResendInvoiceRequest): Promise<invoicingV1.ResendInvoiceResponse> {
    const tenant = requireTenant(request.tenant);
    // Without a request id every call is its own send.
    const sendKey = request.requestId || newId('req');
    return this.commands.run(tenant, request, invoicingV1.ResendInvoiceResponseSchema, async (tx) => {
      const { invoice, mailId } = await this.invoices.resend(tx, tenant, request.id, request.sellerName, sendKey);
      return { invoice: toInvoiceMessage(invoice), mailId };
    });
  }

  @GrpcMethod('InvoicingService', 'VoidInvoice')
  async voidInvoice(request: invoicingV1.VoidInvoiceRequest): Promise<invoicingV1.VoidInvoiceResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, invoicingV1.VoidInvoiceResponseSchema, async (tx) => ({
      invoice: toInvoiceMessage(await this.invoices.void(tx, tenant, request.id)),
    }));
  }

  /** Idempotent by payment id: the payment id is the command's request id, whatever the caller sent. */
  @GrpcMethod('InvoicingService', 'PayInvoice')
  async payInvoice(request: invoicingV1.PayInvoiceRequest): Promise<invoicingV1.PayInvoiceResponse> {
    const tenant = requireTenant(request.tenant);
    const paymentId = checkPaymentId(request.paymentId);
    return this.commands.run(tenant, { requestId: paymentId }, invoicingV1.PayInvoiceResponseSchema, async (tx) => ({
      invoice: toInvoiceMessage(
        await this.invoices.pay(tx, tenant, request.id, { paymentId, amount: moneyFromMessage(request.amount), paidAt: fromUnixSeconds(request.paidAt, 'paid_at') }),
      ),
    }));
  }

  /** Idempotent by payment id, as PayInvoice. */
  @GrpcMethod('InvoicingService', 'FailInvoicePayment')
  async failInvoicePayment(request: invoicingV1.FailInvoicePaymentRequest): Promise<invoicingV1.FailInvoicePaymentResponse> {
    const tenant = requireTenant(request.tenant);
    const paymentId = checkPaymentId(request.paymentId);
    // The failure's time in the customer's own time (a test clock's), asked before the transaction:
    // an automatic charge's retries are planned in it, and the reminders count from it, however late
    // subscription reads the event (a clock advanced meanwhile must not push them later).
    const ownNow = await this.customers.ownTime(tenant, (await this.invoices.get(tenant, request.id)).customer.id, this.now());
    const failure = { paymentId, failureCode: request.failureCode || 'payment_failed', automatic: request.automatic };
    return this.commands.run(tenant, { requestId: paymentId }, invoicingV1.FailInvoicePaymentResponseSchema, async (tx) => ({
      invoice: toInvoiceMessage(await this.invoices.failPayment(tx, tenant, request.id, failure, ownNow)),
    }));
  }

  /**
   * Idempotent by invoice and reminder number: `reminder:<n>` is the command's request id
   * whatever the caller sent, so each reminder is e-mailed and announced once.
   */
  @GrpcMethod('InvoicingService', 'SendDunningReminder')
  async sendDunningReminder(request: invoicingV1.SendDunningReminderRequest): Promise<invoicingV1.SendDunningReminderResponse> {
    const tenant = requireTenant(request.tenant);
    const reminder = checkReminder(request.reminderNumber, request.reminderCount);
    return this.commands.run(tenant, { requestId: `reminder:${request.id}:${reminder.number}` }, invoicingV1.SendDunningReminderResponseSchema, async (tx) => {
      const { invoice, sent } = await this.invoices.sendDunningReminder(tx, tenant, request.id, reminder.number, reminder.count);
      return { invoice: toInvoiceMessage(invoice), sent };
    });
  }

  @GrpcMethod('InvoicingService', 'RenderInvoicePdf')
  async renderInvoicePdf(request: invoicingV1.RenderInvoicePdfRequest): Promise<MessageInitShape<typeof invoicingV1.RenderInvoicePdfResponseSchema>> {
    const invoice = await this.invoices.get(requireTenant(request.tenant), request.id);
    const seller = await this.sellers.find(this.prisma, invoice.tenant.accountId);
    const locale = resolveLocale(await this.customers.preferredLocale(invoice.tenant, invoice.customer.id), seller.defaultLocale);
    return { pdf: await renderInvoicePdf(invoice, { sellerName: request.sellerName, seller, locale }), filename: `${invoice.number ?? `draft-${invoice.id}`}.pdf` };
  }
}
