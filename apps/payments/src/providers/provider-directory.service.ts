import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLOCK, type Clock, invalidArgument, type TenantRef } from '@recur/kernel';
import type { Money } from '@recur/money';
import { type PaymentProvider, PROVIDER_RULES, type ProviderRules } from '@recur/vocabulary';
import { LIVE_ADAPTER } from './provider-adapters.service';
import type { PaymentProviderAdapter } from './payment-provider';
import { checkProviderAmount, isValidPhoneNumber, predictLocally } from './provider-rules';

/** pawaPay's active configuration is read again after this long (it changes when pawaPay enables a provider or moves a limit). */
export const ACTIVE_CONFIGURATION_TTL_MS = 10 * 60_000;
/** After pawaPay could not be reached, the documented table answers for this long before pawaPay is asked again. */
export const ACTIVE_CONFIGURATION_RETRY_MS = 60_000;

/**
 * What each provider can take, and which provider a phone number belongs to
 * (docs/api/payments.md#provider-rules-before-money-moves). The sandbox answers from the documented table (PROVIDER_RULES) and the number
 * prefixes; live mode asks pawaPay (active configuration, cached; predict-provider) and falls
 * back to the same local answers when pawaPay cannot be reached, so an outage never blocks a
 * payment the table allows.
 */
@Injectable()
export class ProviderDirectory {
  private readonly logger = new Logger(ProviderDirectory.name);
  private live: { rules: ProviderRules; until: number } | undefined;

  constructor(
    @Inject(LIVE_ADAPTER) private readonly liveAdapter: PaymentProviderAdapter,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async rules(tenant: TenantRef): Promise<ProviderRules> {
    if (!tenant.livemode || !this.liveAdapter.activeConfiguration) return PROVIDER_RULES;
    const now = this.now().getTime();
    if (this.live && now < this.live.until) return this.live.rules;
    try {
      this.live = { rules: await this.liveAdapter.activeConfiguration(), until: now + ACTIVE_CONFIGURATION_TTL_MS };
    } catch (error) {
      this.logger.warn(`pawaPay's active configuration could not be read (${(error as Error).message}); the documented provider table applies`);
      this.live = { rules: this.live?.rules ?? PROVIDER_RULES, until: now + ACTIVE_CONFIGURATION_RETRY_MS };
    }
    return this.live.rules;
  }

  /** Refuses (400) an amount `provider` cannot take in the tenant's mode (checkProviderAmount). */
  async checkAmount(tenant: TenantRef, provider: PaymentProvider, amount: Money, params: { amount: string; currency: string }): Promise<void> {
    checkProviderAmount(await this.rules(tenant), provider, amount, params);
  }

  /**
   * The provider of `phoneNumber` (E.164) as pawaPay's predict-provider would answer: pawaPay's
   * own answer in live mode, the number's country and prefix otherwise (or when pawaPay is
   * unreachable); null when it cannot be told.
   */
  async predict(tenant: TenantRef, phoneNumber: string): Promise<PaymentProvider | null> {
    if (tenant.livemode && this.liveAdapter.predictProvider) {
      try {
        const predicted = await this.liveAdapter.predictProvider(phoneNumber);
        if (predicted) return predicted;
      } catch (error) {
        this.logger.warn(`pawaPay's predict-provider could not be asked (${(error as Error).message}); the number's prefix decides`);
      }
    }
    return predictLocally(phoneNumber);
  }

  /** `provider` when given (checked as ever), else the prediction; 400 `provider_not_predictable` when there is none. */
  async resolve(tenant: TenantRef, provider: string, phoneNumber: string, param = 'provider'): Promise<string> {
    if (provider !== '') return provider;
    // A number that is no number is refused as such, not as a provider nobody could predict.
    if (!isValidPhoneNumber(phoneNumber.trim())) throw invalidArgument('phone_number', `phone_number '${phoneNumber}' is not a valid phone number in international format (+ and the country code)`);
    const predicted = await this.predict(tenant, phoneNumber.trim());
    if (!predicted) throw invalidArgument(param, `No provider could be predicted for phone_number '${phoneNumber}': name the provider.`, 'provider_not_predictable');
    return predicted;
  }
}
