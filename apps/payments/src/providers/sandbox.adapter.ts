import { DomainError } from '@recur/kernel';
import type { Payment } from '../payments/payment';
import type { PaymentProviderAdapter, ProviderCallback, ProviderRefundCallback, ProviderRefundStatus, ProviderStatus, StartResult } from './payment-provider';

/**
 * The sandbox simulator: Recur's own payer page stands in for the provider. Its payments are
 * settled by the payer's choice on that page (PaymentsService.decideSandbox), so a status
 * check learns nothing new; a refund is simulated as completed at once (no callback, nothing
 * to poll). It makes no network call at all.
 */
export class SandboxAdapter implements PaymentProviderAdapter {
  readonly name = 'sandbox' as const;

  constructor(private readonly pagesUrl: string) {}

  start(payment: Payment): Promise<StartResult> {
    return Promise.resolve({ redirectUrl: `${this.pagesUrl}/sandbox/pay/${payment.pageToken}` });
  }

  /**
   * The simulated phone is the sandbox payer page: the auto-recharge worker approves it there at
   * once (docs/api/wallets.md), so the push is a page like any other sandbox payment.
   */
  push(payment: Payment): Promise<StartResult> {
    return this.start(payment);
  }

  status(): Promise<ProviderStatus> {
    return Promise.resolve({ state: 'pending' });
  }

  refund(): Promise<{ completed: true }> {
    return Promise.resolve({ completed: true });
  }

  refundStatus(): Promise<ProviderRefundStatus> {
    return Promise.resolve({ state: 'final', final: { status: 'completed' } });
  }

  parseCallback(): ProviderCallback {
    throw new DomainError('unauthenticated', 'signature_invalid', 'the sandbox simulator sends no callbacks');
  }

  parseRefundCallback(): ProviderRefundCallback {
    throw new DomainError('unauthenticated', 'signature_invalid', 'the sandbox simulator sends no callbacks');
  }
}
