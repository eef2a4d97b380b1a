import { fromInt64 } from '@recur/money';
import type { Refund } from '../gen/recur/payments/v1/payments_service_pb';
import { moneyFromMessage } from '../money';

/**
 * The public JSON of a refund the provider has accepted but not yet completed: what
 * `POST /v1/refunds` answers (`202`) until the credit note of the same id exists.
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
    created: fromInt64(refund.created, 'created'),
  };
}
