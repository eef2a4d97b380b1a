import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, fromGrpcError, invoicingV1, type ServiceClient, toMoneyMessage, toTenantMessage } from '@recur/contracts';
import { type TenantRef, unixSeconds } from '@recur/kernel';
import { money } from '@recur/money';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../payments-config';
import type { Wallet } from './wallet';

const INVOICING_TIMEOUT_MS = 5_000;

/** The top-up invoice as wallets need it. */
export interface TopUpInvoice {
  id: string;
  number: string;
  status: string;
  paymentUrl: string;
}

/**
 * The two invoicing calls wallets make: raise a top-up invoice, and pay an invoice from a
 * wallet. Both are idempotent on invoicing's side (request id; payment id), so a retry never
 * raises a second invoice or pays twice.
 */
@Injectable()
export class WalletInvoicing implements OnModuleDestroy {
  private readonly client: ServiceClient<typeof invoicingV1.InvoicingService>;

  constructor(@Inject(PAYMENTS_CONFIG) config: PaymentsConfig) {
    this.client = createServiceClient(invoicingV1.InvoicingService, config.invoicingGrpcAddr);
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  /** An open one-off invoice of `amount` with billing_reason `top_up`, raised once per `requestId`. */
  async raiseTopUpInvoice(wallet: Wallet, topUpId: string, amount: number, sellerName: string, requestId: string, automatic: boolean): Promise<TopUpInvoice> {
    try {
      const { invoice } = await this.client.createInvoice(
        {
          tenant: toTenantMessage(wallet.tenant),
          customerId: wallet.customerId,
          currency: wallet.currency,
          amount: BigInt(amount),
          description: automatic ? 'Prepaid wallet top-up (auto recharge)' : 'Prepaid wallet top-up',
          status: 'open',
          billingReason: 'top_up',
          metadata: { wallet_id: wallet.id, top_up_id: topUpId },
          sellerName,
          requestId,
        },
        { timeoutMs: INVOICING_TIMEOUT_MS },
      );
      return { id: invoice!.id, number: invoice!.number, status: invoice!.status, paymentUrl: invoice!.paymentUrl };
    } catch (failure) {
      throw fromGrpcError(failure);
    }
  }

  /**
   * Marks the invoice paid by the wallet debit `transactionId` (PayInvoice, idempotent by it).
   * A refusal of the move (paid meanwhile, voided) is an answer: the wallet is not debited.
   */
  async payFromWallet(tenant: TenantRef, invoiceId: string, transactionId: string, amount: number, currency: string, paidAt: Date): Promise<'paid' | { refused: string }> {
    try {
      await this.client.payInvoice(
        { tenant: toTenantMessage(tenant), id: invoiceId, paymentId: transactionId, amount: toMoneyMessage(money(amount, currency)), paidAt: BigInt(unixSeconds(paidAt)), requestId: transactionId },
        { timeoutMs: INVOICING_TIMEOUT_MS },
      );
      return 'paid';
    } catch (failure) {
      const error = fromGrpcError(failure);
      if (error.kind === 'failed_precondition' || error.kind === 'invalid_argument') return { refused: error.code };
      throw error;
    }
  }
}
