import type { MessageInitShape } from '@bufbuild/protobuf';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, invoicingV1, type ServiceClient, toMoneyMessage, toTenantMessage } from '@recur/contracts';
import { DomainError, type TenantRef } from '@recur/kernel';
import { money } from '@recur/money';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig } from '../subscription-config';
import { invoiceLinePeriod } from '../subscriptions/subscription';
import type { DunningPayload, InvoicePayload } from './billing-jobs.repository';

/** A batch of a few dozen periods may wait for its tenants' invoice counters on a busy invoicing. */
const INVOICING_TIMEOUT_MS = 20_000;

/** One period's invoice request: its tenant, subscription, request id (the step key) and priced invoice. */
export interface PeriodInvoiceRequest {
  tenant: TenantRef;
  subscriptionId: string;
  requestId: string;
  invoice: InvoicePayload;
}

/** The invoice raised for a period, or why invoicing refused that period. */
export type PeriodInvoiceOutcome = { invoiceId: string } | { error: Error };

/** An invoice not raised yet, as the upcoming-invoice preview prices it. */
export interface PreviewedInvoice {
  currency: string;
  lines: { kind: string; description: string; quantity: number; amount: number; period: { start: number; end: number } | null; taxRateIds: string[] }[];
  discount: number;
}

/** What the billing clock asks of the invoicing service. */
export interface BillingInvoicing {
  /** Raises periods' invoices (each idempotent by subscription + period start): one outcome per request, in order; throws when the whole call failed (invoicing unreachable). */
  raise(requests: PeriodInvoiceRequest[]): Promise<PeriodInvoiceOutcome[]>;
  /** Sends one dunning reminder (idempotent by invoice + reminder number); answers whether it went out (false: the invoice was no longer failed). */
  remind(tenant: TenantRef, reminder: DunningPayload): Promise<boolean>;
}

/** The billing clock's call to invoicing: `InvoicingService.CreateSubscriptionInvoices`, a batch per call. */
@Injectable()
export class InvoicingClient implements BillingInvoicing, OnModuleDestroy {
  private readonly client: ServiceClient<typeof invoicingV1.InvoicingService>;

  constructor(@Inject(SUBSCRIPTION_CONFIG) config: SubscriptionConfig) {
    this.client = createServiceClient(invoicingV1.InvoicingService, config.invoicingAddress);
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  async raise(requests: PeriodInvoiceRequest[]): Promise<PeriodInvoiceOutcome[]> {
    const { results } = await this.client.createSubscriptionInvoices({ invoices: requests.map(toRequestMessage) }, { timeoutMs: INVOICING_TIMEOUT_MS });
    return requests.map((request, index) => {
      const result = results[index];
      if (result?.invoice) return { invoiceId: result.invoice.id };
      return { error: new DomainError('failed_precondition', result?.errorCode || 'internal', result?.errorMessage || `invoicing answered no result for ${request.requestId}`) };
    });
  }

  /** The upcoming invoice's lines taxed as invoicing will tax them when it raises the invoice (PreviewInvoiceTax). */
  async previewTax(tenant: TenantRef, customerId: string, invoice: PreviewedInvoice): Promise<invoicingV1.PreviewInvoiceTaxResponse> {
    return this.client.previewInvoiceTax({
      tenant: toTenantMessage(tenant),
      customerId,
      currency: invoice.currency,
      lines: invoice.lines.map((line) => ({
        kind: line.kind,
        description: line.description,
        quantity: BigInt(line.quantity),
        amount: toMoneyMessage(money(line.amount, invoice.currency)),
        ...(line.period ? { periodStart: BigInt(line.period.start), periodEnd: BigInt(line.period.end) } : {}),
        taxRateIds: line.taxRateIds,
      })),
      discount: toMoneyMessage(money(invoice.discount, invoice.currency)),
    }, { timeoutMs: INVOICING_TIMEOUT_MS });
  }

  async remind(tenant: TenantRef, reminder: DunningPayload): Promise<boolean> {
    const { sent } = await this.client.sendDunningReminder({
      tenant: toTenantMessage(tenant),
      id: reminder.invoice_id,
      reminderNumber: reminder.reminder_number,
      reminderCount: reminder.reminder_count,
    }, { timeoutMs: INVOICING_TIMEOUT_MS });
    return sent;
  }
}

function toRequestMessage({ tenant, subscriptionId, requestId, invoice }: PeriodInvoiceRequest): MessageInitShape<typeof invoicingV1.CreateSubscriptionInvoiceRequestSchema> {
  const { currency } = invoice;
  return {
    tenant: toTenantMessage(tenant),
    subscriptionId,
    customerId: invoice.customer_id,
    periodStart: BigInt(invoice.period_start),
    periodEnd: BigInt(invoice.period_end),
    currency,
    lines: invoice.lines.map((line) => {
      const own = line.period_start !== undefined && line.period_end !== undefined ? { start: line.period_start, end: line.period_end } : undefined;
      const period = invoiceLinePeriod(line.kind, own, { start: invoice.period_start, end: invoice.period_end });
      return {
        kind: line.kind,
        description: line.description,
        quantity: BigInt(line.quantity),
        amount: toMoneyMessage(money(line.amount, currency)),
        ...(period ? { periodStart: BigInt(period.start), periodEnd: BigInt(period.end) } : {}),
        taxRateIds: line.tax_rate_ids ?? [],
      };
    }),
    discount: toMoneyMessage(money(invoice.discount, currency)),
    billingReason: invoice.billing_reason,
    collectionMethod: invoice.collection_method ?? '',
    refundCredit: invoice.refund_credit ?? false,
    dueInDays: 0,
    requestId,
  };
}
