import { DomainError } from '@recur/kernel';
import { sandboxOutcome } from '@recur/vocabulary';
import { type Payment, sandboxApproval } from '../payments/payment';
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

  /**
   * A page payment is settled by the payer's choice on the page: a status check learns nothing.
   * A push has nobody at a page: the simulated phone answers as the number says (docs/sandbox.md,
   * magic numbers), so the janitor's check settles it.
   */
  status(payment: Payment): Promise<ProviderStatus> {
    if (payment.channel !== 'push') return Promise.resolve({ state: 'pending' });
    // The simulated phone answers a push as Approve on the page would (pending: no answer yet).
    const outcome = sandboxApproval(sandboxOutcome(payment.phoneNumber));
    return Promise.resolve(outcome ? { state: 'settled', outcome } : { state: 'pending' });
  }

  refund(): Promise<{ completed: true }> {
    return Promise.resolve({ completed: true });
  }

  refundStatus(): Promise<ProviderRefundStatus> {
    return Promise.resolve({ state: 'final', final: { status: 'completed' } });
  }

  parseCallback(): Promise<ProviderCallback> {
    return Promise.reject(new DomainError('unauthenticated', 'signature_invalid', 'the sandbox simulator sends no callbacks'));
  }

  parseRefundCallback(): Promise<ProviderRefundCallback> {
    return Promise.reject(new DomainError('unauthenticated', 'signature_invalid', 'the sandbox simulator sends no callbacks'));
  }
}
