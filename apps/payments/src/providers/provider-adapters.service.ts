import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@recur/kernel';
import { adapterFor, type AdapterName, type Payment } from '../payments/payment';
import type { PaymentProviderAdapter } from './payment-provider';

export const SANDBOX_ADAPTER = Symbol('SANDBOX_ADAPTER');
export const LIVE_ADAPTER = Symbol('LIVE_ADAPTER');

/**
 * The factory of the provider port (as Lago's create_payment_factory): a payment's adapter is
 * the one its tenant's mode names (adapterFor), and a payment's own record must agree, so a
 * sandbox payment can never be handed to the live adapter.
 */
@Injectable()
export class ProviderAdapters {
  constructor(
    @Inject(SANDBOX_ADAPTER) private readonly sandbox: PaymentProviderAdapter,
    @Inject(LIVE_ADAPTER) private readonly live: PaymentProviderAdapter,
  ) {}

  forPayment(payment: Payment): PaymentProviderAdapter {
    const name = adapterFor(payment.tenant);
    if (payment.adapter !== name) throw new DomainError('internal', 'adapter_mismatch', `payment ${payment.id} is recorded on ${payment.adapter} but its mode calls for ${name}`);
    return this.byName(name);
  }

  /** The adapter a provider callback addresses (`/callbacks/<name>`). */
  byName(name: string): PaymentProviderAdapter {
    const adapter = ([this.sandbox, this.live] as const).find((candidate) => candidate.name === (name as AdapterName));
    if (!adapter) throw new DomainError('not_found', 'resource_missing', `No such payment provider adapter: '${name}'`, 'provider');
    return adapter;
  }
}
