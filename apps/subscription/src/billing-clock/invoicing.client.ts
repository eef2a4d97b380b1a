import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, invoicingV1, type ServiceClient, toMoneyMessage, toTenantMessage } from '@recur/contracts';
import type { TenantRef } from '@recur/kernel';
import { money } from '@recur/money';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig } from '../subscription-config';
import type { DunningPayload, InvoicePayload } from './billing-jobs.repository';

const INVOICING_TIMEOUT_MS = 5_000;

/** What the billing clock asks of the invoicing service. */
export interface BillingInvoicing {
  /** Raises one period's invoice (idempotent by subscription + period start); answers its id. */
  raise(tenant: TenantRef, subscriptionId: string, requestId: string, invoice: InvoicePayload): Promise<string>;
  /** Sends one dunning reminder (idempotent by invoice + reminder number); answers whether it went out (false: the invoice was no longer failed). */
  remind(tenant: TenantRef, reminder: DunningPayload): Promise<boolean>;
}

/** The billing clock's calls to invoicing: `CreateSubscriptionInvoice` and `SendDunningReminder`. */
@Injectable()
export class InvoicingClient implements BillingInvoicing, OnModuleDestroy {
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
        periodStart: BigInt(invoice.period_start),
        periodEnd: BigInt(invoice.period_end),
      })),
      discount: toMoneyMessage(money(invoice.discount, currency)),
      billingReason: invoice.billing_reason,
      dueInDays: 0,
      requestId,
    }, { timeoutMs: INVOICING_TIMEOUT_MS });
    return raised?.id ?? '';
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
