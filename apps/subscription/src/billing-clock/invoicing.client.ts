import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, invoicingV1, type ServiceClient, toMoneyMessage, toTenantMessage } from '@recur/contracts';
import type { TenantRef } from '@recur/kernel';
import { money } from '@recur/money';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig } from '../subscription-config';
import type { InvoicePayload } from './billing-jobs.repository';

const INVOICING_TIMEOUT_MS = 5_000;

/** Raises one period's invoice in the invoicing service (idempotent by subscription + period start). */
export interface PeriodInvoicer {
  raise(tenant: TenantRef, subscriptionId: string, requestId: string, invoice: InvoicePayload): Promise<string>;
}

/** The one call the billing clock makes to invoicing: `InvoicingService.CreateSubscriptionInvoice`. */
@Injectable()
export class InvoicingClient implements PeriodInvoicer, OnModuleDestroy {
  private readonly client: ServiceClient<typeof invoicingV1.InvoicingService>;

  constructor(@Inject(SUBSCRIPTION_CONFIG) config: SubscriptionConfig) {
    this.client = createServiceClient(invoicingV1.InvoicingService, config.invoicingAddress);
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  async raise(tenant: TenantRef, subscriptionId: string, requestId: string, invoice: InvoicePayload): Promise<string> {
    const { currency } = invoice;
    const { invoice: raised } = await this.client.createSubscriptionInvoice({
      tenant: toTenantMessage(tenant),
      subscriptionId,
      customerId: invoice.customer_id,
      periodStart: BigInt(invoice.period_start),
      periodEnd: BigInt(invoice.period_end),
      currency,
      lines: invoice.lines.map((line) => ({
        kind: line.kind,
        description: line.description,
        quantity: BigInt(line.quantity),
        amount: toMoneyMessage(money(line.amount, currency)),
        // A proration covers part of an earlier period, which its description names.
        ...(line.kind === 'proration' ? {} : { periodStart: BigInt(invoice.period_start), periodEnd: BigInt(invoice.period_end) }),
      })),
      discount: toMoneyMessage(money(invoice.discount, currency)),
      billingReason: invoice.billing_reason,
      dueInDays: 0,
      requestId,
    }, { timeoutMs: INVOICING_TIMEOUT_MS });
    return raised?.id ?? '';
  }
}
