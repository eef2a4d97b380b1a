import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, fromGrpcError, invoicingV1, type ServiceClient, toTenantMessage } from '@recur/contracts';
import type { TenantRef } from '@recur/kernel';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig } from '../subscription-config';

const INVOICING_TIMEOUT_MS = 5_000;

/** What a one_time sale bills: one line of the offer's amount. */
export interface SaleInvoice {
  tenant: TenantRef;
  customerId: string;
  checkoutId: string;
  salesLinkId: string;
  description: string;
  amount: number;
  currency: string;
}

/**
 * The one invoicing call a one_time sale makes: an open one-off invoice with billing_reason
 * `sales_link` (so `invoice.created` says sales link), finalized with its payment_url. Its
 * request id is the sale's, so a repeat of the sale answers the same invoice.
 */
@Injectable()
export class SalesLinkInvoicing implements OnModuleDestroy {
  private readonly client: ServiceClient<typeof invoicingV1.InvoicingService>;

  constructor(@Inject(SUBSCRIPTION_CONFIG) config: SubscriptionConfig) {
    this.client = createServiceClient(invoicingV1.InvoicingService, config.invoicingAddress);
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  /** The sale's invoice id, raised once per checkout. */
  async raiseSaleInvoice(sale: SaleInvoice): Promise<string> {
    try {
      const { invoice } = await this.client.createInvoice(
        {
          tenant: toTenantMessage(sale.tenant),
          customerId: sale.customerId,
          currency: sale.currency,
          amount: BigInt(sale.amount),
          description: sale.description,
          status: 'open',
          billingReason: 'sales_link',
          metadata: { sales_link_id: sale.salesLinkId, checkout_id: sale.checkoutId },
          // As the billing clock's invoices: the e-mail names no seller.
          sellerName: '',
          requestId: `sales-link-invoice:${sale.checkoutId}`,
        },
        { timeoutMs: INVOICING_TIMEOUT_MS },
      );
      return invoice!.id;
    } catch (failure) {
      throw fromGrpcError(failure);
    }
  }
}
