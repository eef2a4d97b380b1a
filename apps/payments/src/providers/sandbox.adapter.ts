import { DomainError } from '@recur/kernel';
import type { Payment } from '../payments/payment';
import type { PaymentProviderAdapter, ProviderCallback, ProviderStatus, StartResult } from './payment-provider';

/**
 * The sandbox simulator: Recur's own payer page stands in for the provider. Its payments are
 * settled by the payer's choice on that page (PaymentsService.decideSandbox), so a status
 * check learns nothing new and a refund is simulated. It makes no network call at all.
 */
export class SandboxAdapter implements PaymentProviderAdapter {
  readonly name = 'sandbox' as const;

  constructor(private readonly pagesUrl: string) {}

  start(payment: Payment): Promise<StartResult> {
    return Promise.resolve({ redirectUrl: `${this.pagesUrl}/sandbox/pay/${payment.pageToken}` });
  }

  status(): Promise<ProviderStatus> {
    return Promise.resolve({ state: 'pending' });
  }

  refund(): Promise<{ accepted: true }> {
    return Promise.resolve({ accepted: true });
  }

  parseCallback(): ProviderCallback {
    throw new DomainError('unauthenticated', 'signature_invalid', 'the sandbox simulator sends no callbacks');
  }
}
