import { createPublicKey, type KeyObject } from 'node:crypto';
import { DomainError, type Clock } from '@recur/kernel';
import { currencyExponent, isCurrencyCode, type Money, money, toDecimalString } from '@recur/money';
import { isPaymentProvider, type PaymentProvider, PROVIDER_RULES, type ProviderDecimals, type ProviderRule, type ProviderRules } from '@recur/vocabulary';
import type { Outcome, Payment } from '../payments/payment';
import type { PawapayConfig } from '../payments-config';
import { signatureKeyId, verifySignedRequest } from './http-message-signatures';
import type {
  PaymentProviderAdapter,
  ProviderCallback,
  ProviderRefundCallback,
  ProviderRefundStatus,
  ProviderStatus,
  ReceivedCallback,
  RefundFinal,
  RefundRequest,
  RefundResult,
  StartResult,
} from './payment-provider';

/** A payment page session lasts 15 minutes at pawaPay; past it (and a margin) a deposit never made is expired. */
export const PAWAPAY_SESSION_MS = 15 * 60_000 + 60_000;
/** What a pawaPay callback signature must cover to be believed. */
const SIGNED_COMPONENTS = ['@method', '@authority', '@path', 'content-digest'];
/** pawaPay's public keys are read again for an unknown keyid at most this often. */
export const PROVIDER_KEYS_REFRESH_MS = 60_000;

interface FailureReason {
  failureCode?: string;
  failureMessage?: string;
}

interface DepositJson {
  depositId?: string;
  status?: string;
  amount?: string;
  currency?: string;
  failureReason?: FailureReason;
}

/** A refund as pawaPay reports it (status check `data`, refund callback body). */
interface RefundJson {
  refundId?: string;
  status?: string;
  failureReason?: FailureReason;
}

/** pawaPay's active configuration (`GET /v2/active-conf`), the parts Recur reads. */
export interface ActiveConfigurationJson {
  countries?: {
    country?: string;
    providers?: {
      provider?: string;
      displayName?: string;
      currencies?: { currency?: string; operationTypes?: { DEPOSIT?: { minAmount?: string; maxAmount?: string; decimalsInAmount?: string; status?: string } } }[];
    }[];
  }[];
}

/**
 * The providers of an active configuration as Recur checks them; providers pawaPay does not list
 * for the account, or lists without a deposit operation, keep the documented table's rule. Null
 * when the answer is not an active configuration.
 */
export function rulesFromActiveConfiguration(json: ActiveConfigurationJson): ProviderRules | null {
  if (!Array.isArray(json.countries)) return null;
  const rules: ProviderRules = { ...PROVIDER_RULES };
  for (const country of json.countries) {
    for (const provider of country.providers ?? []) {
      if (!provider.provider || !isPaymentProvider(provider.provider)) continue;
      const currencies = (provider.currencies ?? []).flatMap(({ currency, operationTypes }) => {
        const deposit = operationTypes?.DEPOSIT;
        if (!currency || !deposit?.minAmount || !deposit.maxAmount) return [];
        const decimalsInAmount: ProviderDecimals = deposit.decimalsInAmount === 'NONE' ? 'NONE' : 'TWO_PLACES';
        return [{ currency: currency.toUpperCase(), decimalsInAmount, minAmount: deposit.minAmount, maxAmount: deposit.maxAmount }];
      });
      if (currencies.length === 0) continue;
      const known: ProviderRule = PROVIDER_RULES[provider.provider];
      // pawaPay's displayName is the operator's brand ("MTN"); the pages keep the documented full name.
      rules[provider.provider] = { displayName: known.displayName, country: country.country ?? known.country, currencies };
    }
  }
  return rules;
}

const unavailable = (message: string) => new DomainError('unavailable', 'provider_unavailable', message);

/** pawaPay's failure codes in ours: lowercase, as every Recur code is (`INSUFFICIENT_BALANCE` → `insufficient_balance`). */
const failure = (reason: FailureReason | undefined, fallback: string): Extract<Outcome, { status: 'failed' }> => ({
  status: 'failed',
  code: (reason?.failureCode ?? fallback).toLowerCase(),
  message: reason?.failureMessage ?? 'The provider reported the payment as failed.',
});

/**
 * pawaPay's amount ("123.45" in major units, upper-case currency) in minor units; null when it
 * is not a plain decimal of the currency, or the currency is unknown.
 */
export function collectedAmount(amount: string | undefined, currency: string | undefined): Money | null {
  const code = currency?.toLowerCase() ?? '';
  const parts = /^(\d{1,15})(?:\.(\d+))?$/.exec(amount ?? '');
  if (!parts || !isCurrencyCode(code)) return null;
  const exponent = currencyExponent(code);
  const fraction = parts[2] ?? '';
  if (fraction.length > exponent) return null;
  return money(Number(parts[1]) * 10 ** exponent + Number(fraction.padEnd(exponent, '0') || '0'), code);
}

/** A final deposit status in our terms; null while pawaPay still works on it. */
function outcomeOf(deposit: DepositJson): Outcome | null {
  if (deposit.status === 'COMPLETED') {
    // What pawaPay says it collected is checked against the payment when it settles (settle).
    const collected = collectedAmount(deposit.amount, deposit.currency);
    if (collected === null) return { status: 'failed', code: 'amount_mismatch', message: `pawaPay reported an amount Recur cannot read: ${deposit.amount ?? '(none)'} ${deposit.currency ?? ''}.` };
    return { status: 'succeeded', collected };
  }
  if (deposit.status === 'FAILED') return failure(deposit.failureReason, 'PAYMENT_FAILED');
  return null;
}

/** A final refund status in our terms; null while pawaPay still works on it (ACCEPTED, ENQUEUED, PROCESSING, …). */
function refundFinalOf(refund: RefundJson): RefundFinal | null {
  if (refund.status === 'COMPLETED') return { status: 'completed' };
  if (refund.status === 'FAILED') {
    const { code, message } = failure(refund.failureReason, 'REFUND_FAILED');
    return { status: 'failed', code, message };
  }
  return null;
}

/**
 * The live adapter: pawaPay Merchant API v2 (payment page, deposits, deposit status, refunds, signed
 * callbacks). Base URL and token come from configuration; its sandbox and production differ
 * only by them. It refuses any sandbox payment itself, a second wall behind adapterFor.
 */
export class PawapayAdapter implements PaymentProviderAdapter {
  readonly name = 'pawapay' as const;
  private readonly callbackKey: KeyObject | undefined;
  /** pawaPay's callback keys by id, as its public-key endpoint last listed them. */
  private readonly providerKeys = new Map<string, KeyObject>();
  private providerKeysReadAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly config: PawapayConfig,
    private readonly now: Clock,
  ) {
    this.callbackKey = config.callbackPublicKey ? createPublicKey(config.callbackPublicKey) : undefined;
  }

  async start(payment: Payment, returnUrl: string): Promise<StartResult> {
    const body = {
      depositId: payment.providerPaymentId,
      returnUrl,
      customerMessage: `Invoice ${payment.invoiceNumber}`.slice(0, 22).padEnd(4, '.'),
      amountDetails: { amount: toDecimalString(payment.amount), currency: payment.amount.currency.toUpperCase() },
      phoneNumber: payment.phoneNumber.replace(/^\+/, ''),
      country: payment.provider.slice(payment.provider.lastIndexOf('_') + 1),
      reason: `Invoice ${payment.invoiceNumber}`.slice(0, 50),
      metadata: [{ invoiceId: payment.invoiceId }, { paymentId: payment.id }],
    };
    const answer = await this.call<{ redirectUrl?: string; status?: string; failureReason?: FailureReason }>(payment, 'POST', '/v2/paymentpage', body);
    if (answer.redirectUrl) return { redirectUrl: answer.redirectUrl };
    const { code, message } = failure(answer.failureReason, 'REJECTED');
    return { rejected: { code, message } };
  }

  /**
   * pawaPay's Initiate Deposit (`POST /v2/deposits`): the payer's provider pushes a PIN prompt to
   * the phone. ACCEPTED and DUPLICATE_IGNORED (our repeat of the same depositId, after a lost
   * answer or a crash) both leave the deposit under way; its final status comes by callback or
   * status check, as for a payment page's deposit.
   */
  async push(payment: Payment, returnUrl: string): Promise<StartResult> {
    const body = {
      depositId: payment.providerPaymentId,
      amount: toDecimalString(payment.amount),
      currency: payment.amount.currency.toUpperCase(),
      payer: { type: 'MMO', accountDetails: { phoneNumber: payment.phoneNumber.replace(/^\+/, ''), provider: payment.provider } },
      clientReferenceId: payment.invoiceId,
      customerMessage: `Invoice ${payment.invoiceNumber}`.slice(0, 22).padEnd(4, '.'),
      metadata: [{ invoiceId: payment.invoiceId }, { paymentId: payment.id }],
    };
    const answer = await this.call<{ status?: string; failureReason?: FailureReason }>(payment, 'POST', '/v2/deposits', body);
    if (answer.status === 'ACCEPTED' || answer.status === 'DUPLICATE_IGNORED') return { redirectUrl: returnUrl };
    const { code, message } = failure(answer.failureReason, 'REJECTED');
    return { rejected: { code, message } };
  }

  async status(payment: Payment): Promise<ProviderStatus> {
    const answer = await this.call<{ status?: string; data?: DepositJson }>(payment, 'GET', `/v2/deposits/${payment.providerPaymentId}`);
    if (answer.status === 'NOT_FOUND') return { state: 'not_found' };
    const outcome = answer.data ? outcomeOf(answer.data) : null;
    return outcome ? { state: 'settled', outcome } : { state: 'pending' };
  }

  async refund({ refundId, payment, amount }: RefundRequest): Promise<RefundResult> {
    const answer = await this.call<{ status?: string; failureReason?: FailureReason }>(payment, 'POST', '/v2/refunds', {
      refundId,
      depositId: payment.providerPaymentId,
      amount: toDecimalString(amount),
      currency: amount.currency.toUpperCase(),
    });
    // Accepted is not done: pawaPay completes (or fails) the refund later, told by callback or status check.
    if (answer.status === 'ACCEPTED' || answer.status === 'DUPLICATE_IGNORED') return { accepted: true };
    const { code, message } = failure(answer.failureReason, 'REJECTED');
    return { rejected: { code, message } };
  }

  /** pawaPay's Check Refund Status (`GET /v2/refunds/{refundId}`). */
  async refundStatus({ refundId, payment }: RefundRequest): Promise<ProviderRefundStatus> {
    const answer = await this.call<{ status?: string; data?: RefundJson }>(payment, 'GET', `/v2/refunds/${refundId}`);
    if (answer.status === 'NOT_FOUND') return { state: 'not_found' };
    const final = answer.data ? refundFinalOf(answer.data) : null;
    return final ? { state: 'final', final } : { state: 'pending' };
  }

  async parseCallback(callback: ReceivedCallback): Promise<ProviderCallback> {
    const deposit = await this.verifiedBody<DepositJson>(callback);
    if (typeof deposit.depositId !== 'string') throw new DomainError('invalid_argument', 'parameter_invalid', 'the callback names no depositId', 'depositId');
    return { providerPaymentId: deposit.depositId, outcome: outcomeOf(deposit) };
  }

  /** pawaPay's refund callback: signed as its deposit callbacks are, naming our refundId and a final status. */
  async parseRefundCallback(callback: ReceivedCallback): Promise<ProviderRefundCallback> {
    const refund = await this.verifiedBody<RefundJson>(callback);
    if (typeof refund.refundId !== 'string') throw new DomainError('invalid_argument', 'parameter_invalid', 'the callback names no refundId', 'refundId');
    return { providerRefundId: refund.refundId, final: refundFinalOf(refund) };
  }

  /** The callback's JSON body, once its RFC 9421 signature verified with pawaPay's key. */
  private async verifiedBody<T>(callback: ReceivedCallback): Promise<T> {
    const key = await this.callbackKeyFor(callback);
    if (!key) {
      throw new DomainError('unauthenticated', 'signature_invalid', 'pawaPay callbacks are refused: no key of pawaPay\'s public-key endpoint names the signature\'s keyid, and no PAWAPAY_CALLBACK_PUBLIC_KEY is configured (pending payments and refunds are resolved by status checks)');
    }
    verifySignedRequest(callback, { publicKey: key, required: SIGNED_COMPONENTS, now: this.now() });
    let body: unknown;
    try {
      body = JSON.parse(Buffer.from(callback.body).toString('utf8'));
    } catch {
      throw new DomainError('invalid_argument', 'parameter_invalid', 'the callback body is not JSON', 'body');
    }
    if (typeof body !== 'object' || body === null) throw new DomainError('invalid_argument', 'parameter_invalid', 'the callback body is not a JSON object', 'body');
    return body as T;
  }

  /**
   * The key a callback was signed with: the one pawaPay's public-key endpoint (`GET
   * /v2/public-key/http`) lists under the signature's `keyid`, so a key pawaPay rotates in is
   * picked up by itself — the list is read again when an unknown keyid arrives, at most once a
   * PROVIDER_KEYS_REFRESH_MS, so forged keyids cannot make Recur call pawaPay for every request.
   * The configured PAWAPAY_CALLBACK_PUBLIC_KEY is the fallback: for a signature without keyid, an
   * unknown one, or pawaPay unreachable.
   */
  private async callbackKeyFor(callback: ReceivedCallback): Promise<KeyObject | undefined> {
    const keyId = signatureKeyId(callback);
    if (keyId === undefined || !this.config.apiToken) return this.callbackKey;
    const now = this.now().getTime();
    if (!this.providerKeys.has(keyId) && now - this.providerKeysReadAt >= PROVIDER_KEYS_REFRESH_MS) {
      this.providerKeysReadAt = now;
      await this.readProviderKeys();
    }
    return this.providerKeys.get(keyId) ?? this.callbackKey;
  }

  private async readProviderKeys(): Promise<void> {
    try {
      const response = await fetch(`${this.config.baseUrl}/v2/public-key/http`, {
        headers: { authorization: `Bearer ${this.config.apiToken}` },
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
      if (!response.ok) return;
      const keys = (await response.json()) as { id?: unknown; key?: unknown }[];
      if (!Array.isArray(keys)) return;
      for (const { id, key } of keys) {
        if (typeof id !== 'string' || typeof key !== 'string') continue;
        try {
          this.providerKeys.set(id, createPublicKey(key));
        } catch {
          // A key that does not parse is no key: the next one, or the configured fallback.
        }
      }
    } catch {
      // pawaPay unreachable: the configured key decides.
    }
  }

  /**
   * pawaPay's active configuration (`GET /v2/active-conf`): each provider's currencies, decimals
   * and deposit limits for this account. Throws `unavailable` when pawaPay cannot answer.
   */
  async activeConfiguration(): Promise<ProviderRules> {
    const rules = rulesFromActiveConfiguration(await this.toolkit<ActiveConfigurationJson>('GET', '/v2/active-conf'));
    if (!rules) throw unavailable('pawaPay answered GET /v2/active-conf without countries');
    return rules;
  }

  /**
   * pawaPay's predict-provider (`POST /v2/predict-provider`): the provider a phone number most
   * likely belongs to; null when pawaPay cannot tell (or names a provider Recur does not offer).
   */
  async predictProvider(phoneNumber: string): Promise<PaymentProvider | null> {
    const answer = await this.toolkit<{ provider?: string }>('POST', '/v2/predict-provider', { phoneNumber: phoneNumber.replace(/^\+/, '') });
    return answer.provider && isPaymentProvider(answer.provider) ? answer.provider : null;
  }

  /** A call that concerns no payment (pawaPay's toolkit endpoints). */
  private async toolkit<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    if (!this.config.apiToken) throw unavailable('pawaPay is not configured (PAWAPAY_API_TOKEN)');
    return this.send<T>(method, path, body);
  }

  private async call<T>(payment: Payment, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    // The second wall: whatever called it, a sandbox payment never leaves for a real provider.
    if (!payment.tenant.livemode) throw new DomainError('internal', 'sandbox_reached_live_provider', `payment ${payment.id} is a sandbox payment; pawaPay is for live payments only`);
    if (!this.config.apiToken) throw unavailable('pawaPay is not configured (PAWAPAY_API_TOKEN)');
    return this.send<T>(method, path, body);
  }

  private async send<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.config.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.config.apiToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
    } catch (error) {
      throw unavailable(`pawaPay could not be reached: ${(error as Error).message}`);
    }
    const text = await response.text();
    if (response.status >= 500 || response.status === 401 || response.status === 403 || response.status === 429) {
      throw unavailable(`pawaPay answered ${response.status} to ${method} ${path}`);
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw unavailable(`pawaPay answered ${response.status} without JSON to ${method} ${path}`);
    }
  }
}
