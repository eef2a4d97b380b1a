import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { paymentsV1, requireTenant } from '@recur/contracts';
import { failedPrecondition } from '@recur/kernel';
import { InvoicingClient } from '../invoices/invoicing.client';
import { toRefundMessage } from './refund.mapper';
import { RefundsRepository } from './refunds.repository';
import { RefundsService } from './refunds.service';

/** gRPC edge of refunds: read the invoice, keep the refund, carry it to its credit note. No rules live here. */
@Controller()
export class RefundsGrpcController {
  constructor(
    private readonly refunds: RefundsService,
    private readonly repository: RefundsRepository,
    private readonly invoicing: InvoicingClient,
  ) {}

  /**
   * Not a recorded command: the refund row is the record. A repeat with the same request id
   * resumes that refund (after an outage: UNAVAILABLE, and the worker finishes it meanwhile).
   */
  @GrpcMethod('PaymentsService', 'RefundInvoice')
  async refundInvoice(request: paymentsV1.RefundInvoiceRequest): Promise<MessageInitShape<typeof paymentsV1.RefundInvoiceResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const invoice = await this.invoicing.payableInvoice(tenant, request.invoiceId);
    const refund = await this.refunds.begin(tenant, invoice, request.reason, request.requestId, request.amount, () => this.invoicing.payableInvoice(tenant, request.invoiceId));
    const outcome = await this.refunds.complete(refund.id);
    if ('refused' in outcome) throw failedPrecondition('refund_failed', `The refund was refused: ${outcome.refused}`);
    // Accepted by the provider, not yet completed: no credit note until it is (callback or status check).
    if (!('creditNote' in outcome)) return { refund: toRefundMessage(outcome.refund) };
    return { creditNote: outcome.creditNote, refund: toRefundMessage(outcome.refund) };
  }

  /** Idempotent by request id (invoicing records the command's answer). */
  @GrpcMethod('PaymentsService', 'CreditInvoice')
  async creditInvoice(request: paymentsV1.CreditInvoiceRequest): Promise<MessageInitShape<typeof paymentsV1.CreditInvoiceResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const creditNote = await this.refunds.credit(tenant, request.invoiceId, { amount: request.amount, reason: request.reason, memo: request.memo, metadata: request.metadata, requestId: request.requestId });
    return { creditNote };
  }

  @GrpcMethod('PaymentsService', 'HandleProviderRefundCallback')
  async handleProviderRefundCallback(request: paymentsV1.HandleProviderRefundCallbackRequest): Promise<MessageInitShape<typeof paymentsV1.HandleProviderRefundCallbackResponseSchema>> {
    const { outcome, refundId } = await this.refunds.handleCallback(request.provider, {
      method: request.method,
      authority: request.authority,
      path: request.path,
      headers: request.headers,
      body: request.body,
    });
    return { outcome, refundId };
  }

  @GrpcMethod('PaymentsService', 'GetRefund')
  async getRefund(request: paymentsV1.GetRefundRequest): Promise<MessageInitShape<typeof paymentsV1.GetRefundResponseSchema>> {
    return { refund: toRefundMessage(await this.repository.getInTenant(requireTenant(request.tenant), request.id)) };
  }
}
