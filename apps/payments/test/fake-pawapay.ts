import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PAYMENT_PROVIDER_CODES, PROVIDER_RULES } from '@recur/vocabulary';
import { type SignOptions, signRequest } from '../src/providers/http-message-signatures';
import { predictLocally } from '../src/providers/provider-rules';

/** One currency of a provider in pawaPay's active configuration (`GET /v2/active-conf`). */
export interface ActiveConfCurrency {
  currency: string;
  displayName: string;
  operationTypes: Record<'DEPOSIT' | 'PAYOUT' | 'REFUND', { minAmount: string; maxAmount: string; decimalsInAmount: 'TWO_PLACES' | 'NONE'; status: 'OPERATIONAL' | 'DELAYED' | 'CLOSED'; authType?: string }>;
}

/** pawaPay's active configuration as its v2 API documents it: countries, their providers, each provider's currencies and limits by operation. */
export interface ActiveConf {
  companyName: string;
  signatureConfiguration: { signedRequestsOnly: boolean; signedCallbacks: boolean };
  countries: { country: string; prefix: string; displayName: Record<string, string>; providers: { provider: string; displayName: string; logo: string; currencies: ActiveConfCurrency[] }[] }[];
}

const DIAL_PREFIXES: Record<string, string> = { BEN: '229', CMR: '237', CIV: '225', COD: '243', GHA: '233', KEN: '254', MWI: '265', MOZ: '258', NGA: '234', RWA: '250', SEN: '221', TZA: '255', UGA: '256', ZMB: '260' };

/** An active configuration built from the documented table (every provider OPERATIONAL): what a sandbox account with every provider sees. */
export function documentedActiveConf(): ActiveConf {
  const countries = new Map<string, ActiveConf['countries'][number]>();
  for (const code of PAYMENT_PROVIDER_CODES) {
    const rule = PROVIDER_RULES[code];
    const country = countries.get(rule.country) ?? { country: rule.country, prefix: DIAL_PREFIXES[rule.country] ?? '', displayName: { en: rule.country }, providers: [] };
    countries.set(rule.country, country);
    country.providers.push({
      provider: code,
      displayName: rule.displayName.split(' ')[0],
      logo: `https://static-content.pawapay.io/company_logos/${code.toLowerCase()}.png`,
      currencies: rule.currencies.map((currency) => {
        const limits = { minAmount: currency.minAmount, maxAmount: currency.maxAmount, decimalsInAmount: currency.decimalsInAmount, status: 'OPERATIONAL' as const };
        return { currency: currency.currency, displayName: currency.currency, operationTypes: { DEPOSIT: { ...limits, authType: 'PROVIDER_AUTH' }, PAYOUT: limits, REFUND: limits } };
      }),
    });
  }
  return { companyName: 'Recur test merchant', signatureConfiguration: { signedRequestsOnly: false, signedCallbacks: true }, countries: [...countries.values()] };
}

/** One request the fake received, as pawaPay would see it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown> | undefined;
}

interface Deposit {
  depositId: string;
  status: 'ACCEPTED' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  amount: string;
  currency: string;
  country: string;
  phoneNumber: string;
  provider: string;
  failureReason?: { failureCode: string; failureMessage: string };
}

interface RefundRecord {
  refundId: string;
  depositId: string;
  status: 'ACCEPTED' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  amount: string;
  currency: string;
  country: string;
  failureReason?: { failureCode: string; failureMessage: string };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * A local stand-in for pawaPay's Merchant API v2, speaking its documented requests and answers
 * (not a mock of our code): `POST /v2/paymentpage` answers `{redirectUrl}` (or a REJECTED
 * deposit), `POST /v2/deposits` (a push to the payer's phone, no page) answers
 * `{depositId, status: ACCEPTED|DUPLICATE_IGNORED|REJECTED}`, `GET /v2/deposits/{depositId}` answers `{status: FOUND|NOT_FOUND, data}`,
 * `POST /v2/refunds` answers `{refundId, status: ACCEPTED|DUPLICATE_IGNORED|REJECTED}` and keeps
 * the refund ACCEPTED until the test finishes it (`finishRefund`), `GET /v2/refunds/{refundId}`
 * answers `{status: FOUND|NOT_FOUND, data}`. Bearer token required. It signs the callbacks it
 * sends, deposit and refund (RFC 9421, ECDSA P-256), with its own key, whose public half Recur
 * is configured with.
 */
export class FakePawapay {
  readonly requests: ReceivedRequest[] = [];
  readonly deposits = new Map<string, Deposit>();
  readonly refunds = new Map<string, RefundRecord>();
  readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  /** What `GET /v2/public-key/http` lists (id and PEM); its own key under `pawapay-test-key` at first. */
  publicKeys: { id: string; key: string }[] = [];
  /** What `GET /v2/active-conf` answers; a test may move a limit or drop a provider. */
  activeConf: ActiveConf = documentedActiveConf();
  /** Numbers (digits only) whose predict-provider answer is set by the test, as a ported number would be; others by prefix. */
  predictions = new Map<string, string>();
  /** While true the toolkit endpoints (active-conf, predict-provider) answer 503, as when pawaPay is down. */
  toolkitDown = false;
  /** Amounts the fake rejects at initiation (as pawaPay rejects amounts beyond a provider's limits). */
  rejectAmounts = new Set<string>();
  /**
   * Deposits the fake carries out but whose answer it never sends (it drops the connection), as
   * when the network fails after pawaPay accepted: the caller cannot know it was accepted.
   */
  dropDepositAnswers = 0;
  /** Deposits whose status checks are answered only when released (holdStatusChecks). */
  private readonly heldStatusChecks = new Map<string, { released: Promise<void>; held: number }>();
  private server?: Server;
  baseUrl = '';

  constructor(readonly token: string) {}

  /** A callback's signing: the key, its keyid, and how it is made (SignOptions). */
  signing: { keyId: string; options: SignOptions } = { keyId: 'pawapay-test-key', options: {} };

  /**
   * Holds every status check of `depositId` (GET /v2/deposits/{id}) unanswered until `release()`;
   * `held()` counts the checks that waited. A test can keep the asker between its question and
   * its settlement.
   */
  holdStatusChecks(depositId: string): { release(): void; held(): number } {
    let release!: () => void;
    const gate = { released: new Promise<void>((resolve) => (release = resolve)), held: 0 };
    this.heldStatusChecks.set(depositId, gate);
    return {
      release: () => {
        this.heldStatusChecks.delete(depositId);
        release();
      },
      held: () => gate.held,
    };
  }

  get publicKeyPem(): string {
    return this.keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    if (this.publicKeys.length === 0) this.publicKeys = [{ id: 'pawapay-test-key', key: this.publicKeyPem }];
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The payer finished on pawaPay's page: the deposit reaches a final status. */
  finish(depositId: string, status: 'COMPLETED' | 'FAILED'): Deposit {
    const deposit = this.deposits.get(depositId);
    if (!deposit) throw new Error(`the fake holds no deposit ${depositId}`);
    deposit.status = status;
    if (status === 'FAILED') deposit.failureReason = { failureCode: 'INSUFFICIENT_BALANCE', failureMessage: 'The customer does not have enough funds.' };
    return deposit;
  }

  /**
   * The deposit callback pawaPay POSTs to `url`, signed with `key` (default: its own key); with
   * `tamper`, the body's status is flipped after signing, as an attacker in the middle would.
   */
  callback(url: string, depositId: string, options: { key?: KeyObject; tamper?: boolean } = {}): { method: string; authority: string; path: string; headers: Record<string, string>; body: Buffer } {
    const deposit = this.deposits.get(depositId)!;
    const body = Buffer.from(JSON.stringify({ ...deposit, created: new Date().toISOString(), payer: { type: 'MMO', accountDetails: { phoneNumber: deposit.phoneNumber, provider: deposit.provider } } }));
    const target = new URL(url);
    const request = { method: 'POST', authority: target.host, path: target.pathname, headers: { 'content-type': 'application/json' }, body };
    const headers = signRequest(request, options.key ?? this.keys.privateKey, this.signing.keyId, new Date(), this.signing.options);
    const sent = options.tamper ? Buffer.from(body.toString().replace(`"status":"${deposit.status}"`, `"status":"${deposit.status === 'COMPLETED' ? 'FAILED' : 'COMPLETED'}"`)) : body;
    return { ...request, headers, body: sent };
  }

  /** pawaPay's provider finished the refund: it reaches a final status. */
  finishRefund(refundId: string, status: 'COMPLETED' | 'FAILED'): RefundRecord {
    const refund = this.refunds.get(refundId);
    if (!refund) throw new Error(`the fake holds no refund ${refundId}`);
    refund.status = status;
    if (status === 'FAILED') refund.failureReason = { failureCode: 'RECIPIENT_NOT_ALLOWED_TO_RECEIVE', failureMessage: 'The recipient is not allowed to receive the refund.' };
    return refund;
  }

  /** The refund callback pawaPay POSTs to `url` (its refund callback URL), signed as deposit callbacks are. */
  refundCallback(url: string, refundId: string, options: { key?: KeyObject } = {}): { method: string; authority: string; path: string; headers: Record<string, string>; body: Buffer } {
    const refund = this.refunds.get(refundId)!;
    const body = Buffer.from(JSON.stringify({ ...refund, created: new Date().toISOString(), recipient: { type: 'MMO', accountDetails: { phoneNumber: '260971234567', provider: 'MTN_MOMO_ZMB' } } }));
    const target = new URL(url);
    const request = { method: 'POST', authority: target.host, path: target.pathname, headers: { 'content-type': 'application/json' }, body };
    return { ...request, headers: signRequest(request, options.key ?? this.keys.privateKey, this.signing.keyId, new Date(), this.signing.options), body };
  }

  /** Sends the deposit callback over HTTP, as pawaPay does; answers the HTTP status and body. */
  async sendCallback(url: string, depositId: string, options: { key?: KeyObject; tamper?: boolean } = {}): Promise<{ status: number; body: unknown }> {
    const { headers, body } = this.callback(url, depositId, options);
    const response = await fetch(url, { method: 'POST', headers, body });
    return { status: response.status, body: await response.json().catch(() => undefined) };
  }

  /** Sends the refund callback over HTTP to Recur's refund callback URL, as pawaPay does; answers the HTTP status and body. */
  async sendRefundCallback(url: string, refundId: string, options: { key?: KeyObject } = {}): Promise<{ status: number; body: unknown }> {
    const { headers, body } = this.refundCallback(url, refundId, options);
    const response = await fetch(url, { method: 'POST', headers, body });
    return { status: response.status, body: await response.json().catch(() => undefined) };
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    const path = request.url ?? '';
    this.requests.push({ method: request.method ?? '', path, authorization: request.headers.authorization, body });
    const answer = (status: number, json: unknown): void => void response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    if (request.headers.authorization !== `Bearer ${this.token}`) return answer(401, { errorMessage: 'Unauthorized' });

    if (request.method === 'GET' && path === '/v2/public-key/http') return answer(200, this.publicKeys);
    if ((path === '/v2/active-conf' || path === '/v2/predict-provider') && this.toolkitDown) return answer(503, { errorMessage: 'Service unavailable' });
    if (request.method === 'GET' && path === '/v2/active-conf') return answer(200, this.activeConf);
    if (request.method === 'POST' && path === '/v2/predict-provider') {
      // pawaPay sanitizes the number (drops +, whitespace, anything not a digit) and answers country, provider and the sanitized number.
      const digits = String(body?.phoneNumber ?? '').replace(/\D/g, '');
      const provider = this.predictions.get(digits) ?? predictLocally(`+${digits}`);
      if (!provider) return answer(400, { failureReason: { failureCode: 'INVALID_PHONE_NUMBER', failureMessage: 'The phone number is not valid for any configured provider.' } });
      return answer(200, { country: provider.slice(provider.lastIndexOf('_') + 1), provider, phoneNumber: digits });
    }
    if (request.method === 'POST' && path === '/v2/paymentpage') {
      const amount = (body?.amountDetails ?? {}) as { amount?: string; currency?: string };
      const depositId = String(body?.depositId ?? '');
      const invalid = !UUID.test(depositId) || typeof body?.returnUrl !== 'string' || !/^\d+(\.\d{1,2})?$/.test(amount.amount ?? '') || !/^[A-Z]{3}$/.test(amount.currency ?? '')
        || !/^\d{8,15}$/.test(String(body?.phoneNumber ?? '')) || !/^[A-Z]{3}$/.test(String(body?.country ?? ''));
      if (invalid) return answer(400, { failureReason: { failureCode: 'INVALID_INPUT', failureMessage: 'The request does not follow the schema.' } });
      if (this.rejectAmounts.has(amount.amount!)) {
        return answer(200, { depositId, status: 'REJECTED', failureReason: { failureCode: 'AMOUNT_OUT_OF_BOUNDS', failureMessage: 'The amount is beyond the provider limits.' } });
      }
      this.deposits.set(depositId, { depositId, status: 'ACCEPTED', amount: amount.amount!, currency: amount.currency!, country: String(body!.country), phoneNumber: String(body!.phoneNumber), provider: 'MTN_MOMO_ZMB' });
      return answer(200, { redirectUrl: `${this.baseUrl}/pay/${depositId}` });
    }
    if (request.method === 'POST' && path === '/v2/deposits') {
      const depositId = String(body?.depositId ?? '');
      const payer = (body?.payer ?? {}) as { type?: string; accountDetails?: { phoneNumber?: string; provider?: string } };
      const invalid = !UUID.test(depositId) || !/^(0|[1-9]\d*)(\.\d{1,2})?$/.test(String(body?.amount ?? '')) || !/^[A-Z]{3}$/.test(String(body?.currency ?? ''))
        || payer.type !== 'MMO' || !/^\d{8,15}$/.test(payer.accountDetails?.phoneNumber ?? '') || !/^[A-Z_]+$/.test(payer.accountDetails?.provider ?? '');
      if (invalid) return answer(400, { failureReason: { failureCode: 'INVALID_INPUT', failureMessage: 'The request does not follow the schema.' } });
      // Idempotent by depositId, as pawaPay documents: a repeat is ignored, whatever it says.
      if (this.deposits.has(depositId)) return answer(200, { depositId, status: 'DUPLICATE_IGNORED', created: new Date().toISOString() });
      if (this.rejectAmounts.has(String(body!.amount))) {
        return answer(200, { depositId, status: 'REJECTED', failureReason: { failureCode: 'AMOUNT_OUT_OF_BOUNDS', failureMessage: 'The amount is beyond the provider limits.' } });
      }
      const provider = payer.accountDetails!.provider!;
      this.deposits.set(depositId, {
        depositId, status: 'ACCEPTED', amount: String(body!.amount), currency: String(body!.currency), country: provider.slice(provider.lastIndexOf('_') + 1),
        phoneNumber: payer.accountDetails!.phoneNumber!, provider,
      });
      if (this.dropDepositAnswers > 0) {
        this.dropDepositAnswers -= 1;
        request.socket.destroy();
        return;
      }
      return answer(200, { depositId, status: 'ACCEPTED', created: new Date().toISOString() });
    }
    const status = /^\/v2\/deposits\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && status) {
      const gate = this.heldStatusChecks.get(status[1]);
      if (gate) {
        gate.held += 1;
        await gate.released;
      }
      const deposit = this.deposits.get(status[1]);
      return answer(200, deposit ? { status: 'FOUND', data: deposit } : { status: 'NOT_FOUND' });
    }
    if (request.method === 'POST' && path === '/v2/refunds') {
      const refundId = String(body?.refundId ?? '');
      if (!UUID.test(refundId)) return answer(400, { failureReason: { failureCode: 'INVALID_INPUT', failureMessage: 'The request does not follow the schema.' } });
      // Idempotent by refundId, as pawaPay documents.
      if (this.refunds.has(refundId)) return answer(200, { refundId, status: 'DUPLICATE_IGNORED', created: new Date().toISOString() });
      const deposit = this.deposits.get(String(body?.depositId ?? ''));
      if (!deposit || deposit.status !== 'COMPLETED') {
        return answer(200, { refundId, status: 'REJECTED', failureReason: { failureCode: 'DEPOSIT_NOT_FOUND', failureMessage: 'No completed deposit with that id.' } });
      }
      this.refunds.set(refundId, { refundId, depositId: deposit.depositId, status: 'ACCEPTED', amount: String(body?.amount ?? deposit.amount), currency: String(body?.currency ?? deposit.currency), country: deposit.country });
      return answer(200, { refundId, status: 'ACCEPTED', created: new Date().toISOString() });
    }
    const refundStatus = /^\/v2\/refunds\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && refundStatus) {
      const refund = this.refunds.get(refundStatus[1]);
      return answer(200, refund ? { status: 'FOUND', data: refund } : { status: 'NOT_FOUND' });
    }
    answer(404, { errorMessage: 'Not found' });
  }
}
