import { fromInt64 } from '@recur/money';
import type { Payment } from '../gen/recur/payments/v1/payments_service_pb';
import { moneyFromMessage } from '../money';

/**
 * The public JSON of a payment attempt: what `/v1/payments` answers. `redirectUrl` keeps the
 * specification's spelling; amounts are minor units of `currency`, times unix seconds.
 */
export interface PaymentJson {
  id: string;
  object: 'payment';
  livemode: boolean;
  invoice: string;
  invoice_number: string;
  status: string;
  amount: number;
  currency: string;
  phone_number: string;
  provider: string;
  redirectUrl: string;
  failure_code: string | null;
  failure_message: string | null;
  created: number;
  settled_at: number | null;
  unapplied_reason: string | null;
  refund: string | null;
}

export function presentPayment(payment: Payment): PaymentJson {
  const amount = moneyFromMessage(payment.amount);
  const settledAt = fromInt64(payment.settledAt, 'settled_at');
  return {
    id: payment.id,
    object: 'payment',
    livemode: payment.livemode,
    invoice: payment.invoiceId,
    invoice_number: payment.invoiceNumber,
    status: payment.status,
    amount: amount.amountMinor,
    currency: amount.currency,
    phone_number: payment.phoneNumber,
    provider: payment.provider,
    redirectUrl: payment.redirectUrl,
    failure_code: payment.failureCode || null,
    failure_message: payment.failureMessage || null,
    created: fromInt64(payment.created, 'created'),
    settled_at: settledAt === 0 ? null : settledAt,
    unapplied_reason: payment.unappliedReason || null,
    refund: payment.refundId || null,
  };
}
