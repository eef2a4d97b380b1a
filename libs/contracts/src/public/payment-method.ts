import { fromInt64 } from '@recur/money';
import type { PaymentMethod } from '../gen/recur/payments/v1/payment_method_pb';

/**
 * The public JSON of a saved payment method: what `/v1/customers/:id/payment-methods` answers.
 * Times are unix seconds; the consent's time and source are the record that the payer agreed.
 */
export interface PaymentMethodJson {
  id: string;
  object: 'payment_method';
  livemode: boolean;
  customer: string;
  type: string;
  phone_number: string;
  provider: string;
  default: boolean;
  consent: { given_at: number; source: string };
  created: number;
}

export function presentPaymentMethod(method: PaymentMethod): PaymentMethodJson {
  return {
    id: method.id,
    object: 'payment_method',
    livemode: method.livemode,
    customer: method.customerId,
    type: method.type,
    phone_number: method.phoneNumber,
    provider: method.provider,
    default: method.isDefault,
    consent: { given_at: fromInt64(method.consentAt, 'consent_at'), source: method.consentSource },
    created: fromInt64(method.created, 'created'),
  };
}
