import type { MessageInitShape } from '@bufbuild/protobuf';
import { type paymentsV1, toMoneyMessage } from '@recur/contracts';
import { unixSeconds } from '@recur/kernel';
import type { Refund } from './refund';

/** A refund on the wire (`recur.payments.v1.Refund`). */
export function toRefundMessage(refund: Refund): MessageInitShape<typeof paymentsV1.RefundSchema> {
  return {
    id: refund.id,
    invoiceId: refund.invoiceId,
    paymentId: refund.paymentId,
    amount: toMoneyMessage(refund.amount),
    reason: refund.reason,
    status: refund.status,
    failureCode: refund.failureCode ?? '',
    failureMessage: refund.failureMessage ?? '',
    created: BigInt(unixSeconds(refund.createdAt)),
  };
}
