import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, type creditNoteV1, fromGrpcError, invoicingV1, moneyFromMessage, type ServiceClient, toMoneyMessage, toTenantMessage } from '@recur/contracts';
import * as grpc from '@grpc/grpc-js';
import { DomainError, invalidArgument, type TenantRef, unixSeconds } from '@recur/kernel';
import type { Money } from '@recur/money';
import type { PayableInvoice, Payment } from '../payments/payment';
import type { Refund, RefundableInvoice } from '../refunds/refund';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../payments-config';

const INVOICING_TIMEOUT_MS = 5_000;

/** What payments tells invoicing when a payment settles; idempotent by payment id on invoicing's side. */
export interface SettlementRecorder {
  /** Records the payment's outcome on its invoice; a refusal of the move (already paid, void…) is an answer too. */
  apply(payment: Payment): Promise<'applied' | { refused: string }>;
}

/** The invoicing service as payments uses it: the invoice to pay, and the settlement moves. */
@Injectable()
export class InvoicingClient implements SettlementRecorder, OnModuleDestroy {
  private readonly client: ServiceClient<typeof invoicingV1.InvoicingService>;

  constructor(@Inject(PAYMENTS_CONFIG) config: PaymentsConfig) {
    this.client = createServiceClient(invoicingV1.InvoicingService, config.invoicingGrpcAddr);
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  /** The invoice as payments needs it; an invoice unknown in the tenant is a bad `invoice_id`. */
  async payableInvoice(tenant: TenantRef, id: string): Promise<PayableInvoice & RefundableInvoice & { customerId: string }> {
    try {
      const { invoice } = await this.client.getInvoice({ tenant: toTenantMessage(tenant), id }, { timeoutMs: INVOICING_TIMEOUT_MS });
      return {
        id: invoice!.id, number: invoice!.number, status: invoice!.status, amountDue: moneyFromMessage(invoice!.amountDue, 'amount_due'), billingReason: invoice!.billingReason,
        customerId: invoice!.customerId,
        amountRefunded: invoice!.amountRefunded ? moneyFromMessage(invoice!.amountRefunded, 'amount_refunded') : undefined,
        total: moneyFromMessage(invoice!.total, 'total'),
        amountCredited: invoice!.amountCredited ? moneyFromMessage(invoice!.amountCredited, 'amount_credited') : undefined,
      };
    } catch (failure) {
      const error = fromGrpcError(failure);
      if (error.kind === 'not_found') throw invalidArgument('invoice_id', `No such invoice: '${id}'`, 'resource_missing');
      throw error;
    }
  }

  async apply(payment: Payment): Promise<'applied' | { refused: string }> {
    const tenant = toTenantMessage(payment.tenant);
    try {
      if (payment.status === 'succeeded') {
        await this.client.payInvoice(
          { tenant, id: payment.invoiceId, paymentId: payment.id, amount: toMoneyMessage(payment.amount), paidAt: BigInt(unixSeconds(payment.settledAt!)), requestId: payment.id },
          { timeoutMs: INVOICING_TIMEOUT_MS },
        );
      } else {
        await this.client.failInvoicePayment(
          // A push had nobody at a page: an automatic charge's attempt, which its retry schedule counts.
          { tenant, id: payment.invoiceId, paymentId: payment.id, failureCode: payment.failureCode ?? 'payment_failed', automatic: payment.channel === 'push', requestId: payment.id },
          { timeoutMs: INVOICING_TIMEOUT_MS },
        );
      }
      return 'applied';
    } catch (failure) {
      const error = fromGrpcError(failure);
      // The invoice moved on (paid by another payment, voided): nothing to retry. The refund of a
      // payment that succeeded on an invoice that can no longer take it is the refunds capability's.
      if (error.kind === 'failed_precondition') return { refused: error.code };
      throw error;
    }
  }

  /**
   * Issues a credit note that moves no money (the caller holds the invoice's lock and counts the
   * refunds under way). An invoicing release without IssueCreditNote (UNIMPLEMENTED, during a
   * rolling upgrade) answers `credit_notes_unavailable` (503): docs/api/credit-notes.md#upgrades.
   */
  async issueCreditNote(tenant: TenantRef, invoiceId: string, credit: { amount: bigint | undefined; reason: string; memo: string; metadata: Record<string, string>; requestId: string }, refundsUnderWay: Money | null): Promise<creditNoteV1.CreditNote> {
    try {
      const { creditNote } = await this.client.issueCreditNote(
        {
          tenant: toTenantMessage(tenant), id: invoiceId, reason: credit.reason, memo: credit.memo, metadata: credit.metadata, requestId: credit.requestId,
          ...(credit.amount === undefined ? {} : { amount: credit.amount }), ...(refundsUnderWay ? { refundsUnderWay: toMoneyMessage(refundsUnderWay) } : {}),
        },
        { timeoutMs: INVOICING_TIMEOUT_MS },
      );
      return creditNote!;
    } catch (failure) {
      if ((failure as grpc.ServiceError).code === grpc.status.UNIMPLEMENTED) throw creditNotesUnavailable();
      const error = fromGrpcError(failure);
      if (error.kind === 'not_found') throw invalidArgument('invoice', `No such invoice: '${invoiceId}'`, 'resource_missing');
      throw error;
    }
  }

  /**
   * Takes a final invoice's credit out of the customer's balance for its refund, at most `max`
   * (docs/api/subscriptions.md#refunding-the-credit); one reservation per invoice, a repeat
   * answers it. An invoicing release without it (UNIMPLEMENTED, during a rolling upgrade)
   * reserves nothing: the credit stays in the balance, as without `refund`.
   */
  async reserveCreditRefund(tenant: TenantRef, creditInvoiceId: string, max: Money): Promise<Money> {
    try {
      const { reserved } = await this.client.reserveCreditRefund({ tenant: toTenantMessage(tenant), invoiceId: creditInvoiceId, maxAmount: toMoneyMessage(max) }, { timeoutMs: INVOICING_TIMEOUT_MS });
      return moneyFromMessage(reserved, 'reserved');
    } catch (failure) {
      if ((failure as grpc.ServiceError).code === grpc.status.UNIMPLEMENTED) return { amountMinor: 0, currency: max.currency };
      throw fromGrpcError(failure);
    }
  }

  /** The refund of a reserved credit settled at `refunded` (0: failed): invoicing gives the rest back to the balance (idempotent). */
  async settleCreditRefund(tenant: TenantRef, creditInvoiceId: string, refunded: Money): Promise<void> {
    await this.client.settleCreditRefund(
      { tenant: toTenantMessage(tenant), invoiceId: creditInvoiceId, refunded: toMoneyMessage(refunded) },
      { timeoutMs: INVOICING_TIMEOUT_MS },
    ).catch((failure: unknown) => {
      throw fromGrpcError(failure);
    });
  }

  /** Records a refund done at the provider: the credit note (idempotent by its id); a refusal of the move is an answer. */
  async recordRefund(refund: Refund): Promise<{ creditNote: creditNoteV1.CreditNote } | { refused: string }> {
    try {
      const { creditNote } = await this.client.recordRefund(
        { tenant: toTenantMessage(refund.tenant), id: refund.invoiceId, creditNoteId: refund.id, paymentId: refund.paymentId, amount: toMoneyMessage(refund.amount), reason: refund.reason },
        { timeoutMs: INVOICING_TIMEOUT_MS },
      );
      return { creditNote: creditNote! };
    } catch (failure) {
      const error = fromGrpcError(failure);
      if (error.kind === 'failed_precondition' || error.kind === 'invalid_argument') return { refused: error.code };
      throw error;
    }
  }
}

/** Credit notes without money need an invoicing release that issues them (docs/api/credit-notes.md#upgrades). */
export const creditNotesUnavailable = (): DomainError =>
  new DomainError('unavailable', 'credit_notes_unavailable', 'Credit notes that move no money are not available until every billing service is upgraded; retry later.');
