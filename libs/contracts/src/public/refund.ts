import { fromInt64 } from '@recur/money';
import type { Refund } from '../gen/recur/payments/v1/payments_service_pb';
import { moneyFromMessage } from '../money';

/**
 * The public JSON of a refund that has no credit note (yet): accepted by the provider and not
 * completed (`processing`: what `POST /v1/refunds` answers with `202`), or `failed` there. Once
 * the provider completes it, the credit note of the same id stands for it.
 */
export interface RefundJson {
  id: string;
  object: 'refund';
  livemode: boolean;
  status: string;
  invoice: string;
  payment: string;
  amount: number;
  currency: string;
  reason: string;
  failure_code: string | null;
  failure_message: string | null;
  created: number;
}

export function presentRefund(refund: Refund, livemode: boolean): RefundJson {
  const amount = moneyFromMessage(refund.amount);
  return {
    id: refund.id,
    object: 'refund',
    livemode,
    status: refund.status,
    invoice: refund.invoiceId,
    payment: refund.paymentId,
    amount: amount.amountMinor,
    currency: amount.currency,
    reason: refund.reason,
    failure_code: refund.failureCode || null,
    failure_message: refund.failureMessage || null,
    created: fromInt64(refund.created, 'created'),
  };
}
