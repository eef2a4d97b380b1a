import { createHash, createSign, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { httpbis } from 'http-message-signatures';
import { money } from '@recur/money';
import { newPayment, type Payment, providerPaymentIdFor } from '../src/payments/payment';
import { PawapayAdapter } from '../src/providers/pawapay.adapter';
import { FakePawapay } from './fake-pawapay';

/** The pawaPay adapter against the local stand-in of pawaPay's API (no Recur process needed). */
const pawapay = new FakePawapay(`token-${randomBytes(6).toString('hex')}`);
let adapter: PawapayAdapter;

beforeAll(async () => {
  await pawapay.start();
  adapter = new PawapayAdapter({ baseUrl: pawapay.baseUrl, apiToken: pawapay.token, callbackPublicKey: pawapay.publicKeyPem, timeoutMs: 2_000 }, () => new Date());
});
afterAll(() => pawapay.stop());

const invoice = { id: 'in_test', number: 'INV-000042', status: 'open', amountDue: money(15_050, 'zmw') };
const payment = (livemode: boolean): Payment => newPayment({ accountId: 'acct_1', livemode }, { invoice, phoneNumber: '+260971234567', provider: 'MTN_MOMO_ZMB' }, new Date());

describe('PawapayAdapter', () => {
  it('refunds a completed deposit in full (POST /v2/refunds) and reports a refusal', async () => {
    const live = payment(true);
    await adapter.start(live, 'https://recur.test/pay/return/x');
    expect(await adapter.refund({ refundId: 'bd4c2f2e-7d8c-4b3c-9b0e-2f1f6c1f2a11', payment: live, amount: live.amount })).toEqual({ rejected: { code: 'deposit_not_found', message: 'No completed deposit with that id.' } });
    pawapay.finish(live.providerPaymentId, 'COMPLETED');
    expect(await adapter.refund({ refundId: 'bd4c2f2e-7d8c-4b3c-9b0e-2f1f6c1f2a12', payment: live, amount: live.amount })).toEqual({ accepted: true });
    expect(pawapay.requests.at(-1)!.body).toMatchObject({ depositId: live.providerPaymentId, amount: '150.50', currency: 'ZMW' });
  });

  it('asks a refund\'s status (GET /v2/refunds/{refundId}): NOT_FOUND, still processing, COMPLETED, FAILED', async () => {
    const live = payment(true);
    await adapter.start(live, 'https://recur.test/pay/return/x');
    pawapay.finish(live.providerPaymentId, 'COMPLETED');
    const [completing, failing] = ['3f0c6a1e-8d2b-4c7a-9e1f-5b6d7c8e9f01', '3f0c6a1e-8d2b-4c7a-9e1f-5b6d7c8e9f02'].map((refundId) => ({ refundId, payment: live, amount: live.amount }));
    expect(await adapter.refundStatus(completing)).toEqual({ state: 'not_found' });
    expect(await adapter.refund(completing)).toEqual({ accepted: true });
    expect(await adapter.refund(completing)).toEqual({ accepted: true }); // DUPLICATE_IGNORED: the same refund, still accepted
    expect(await adapter.refundStatus(completing)).toEqual({ state: 'pending' });
    expect(pawapay.requests.at(-1)).toMatchObject({ method: 'GET', path: `/v2/refunds/${completing.refundId}` });
    pawapay.finishRefund(completing.refundId, 'COMPLETED');
    expect(await adapter.refundStatus(completing)).toEqual({ state: 'final', final: { status: 'completed' } });
    await adapter.refund(failing);
    pawapay.finishRefund(failing.refundId, 'FAILED');
    expect(await adapter.refundStatus(failing)).toEqual({ state: 'final', final: { status: 'failed', code: 'recipient_not_allowed_to_receive', message: 'The recipient is not allowed to receive the refund.' } });
  });

  it('reads a signed refund callback, and refuses one signed with another key or one without a refundId', async () => {
    const live = payment(true);
    await adapter.start(live, 'https://recur.test/pay/return/x');
    pawapay.finish(live.providerPaymentId, 'COMPLETED');
    const refundId = '3f0c6a1e-8d2b-4c7a-9e1f-5b6d7c8e9f03';
    await adapter.refund({ refundId, payment: live, amount: live.amount });
    pawapay.finishRefund(refundId, 'COMPLETED');
    const url = 'https://recur.test/callbacks/pawapay/refunds';
    expect(await adapter.parseRefundCallback(pawapay.refundCallback(url, refundId))).toEqual({ providerRefundId: refundId, final: { status: 'completed' } });
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expect(adapter.parseRefundCallback(pawapay.refundCallback(url, refundId, { key: stranger }))).rejects.toEqual(expect.objectContaining({ kind: 'unauthenticated' }));
    const signed = pawapay.refundCallback(url, refundId);
    const noId = pawapay.callback(url, live.providerPaymentId); // a deposit body names no refundId
    await expect(adapter.parseRefundCallback(noId)).rejects.toEqual(expect.objectContaining({ kind: 'invalid_argument', param: 'refundId' }));
    await expect(adapter.parseRefundCallback({ ...signed, body: Buffer.from(signed.body.toString().replace('COMPLETED', 'FAILED')) })).rejects.toEqual(expect.objectContaining({ kind: 'unauthenticated' }));
  });

  it('maps deposit statuses: NOT_FOUND, still processing, COMPLETED, FAILED', async () => {
    const live = payment(true);
    expect(await adapter.status(live)).toEqual({ state: 'not_found' });
    await adapter.start(live, 'https://recur.test/pay/return/x');
    expect(await adapter.status(live)).toEqual({ state: 'pending' });
    pawapay.finish(live.providerPaymentId, 'FAILED');
    expect(await adapter.status(live)).toEqual({ state: 'settled', outcome: { status: 'failed', code: 'insufficient_balance', message: 'The customer does not have enough funds.' } });
  });

  it('pushes a deposit to the payer\'s phone (POST /v2/deposits, the documented body); a repeat of its depositId is DUPLICATE_IGNORED, still under way; a rejection is reported', async () => {
    const push = (key: string) => newPayment({ accountId: 'acct_1', livemode: true }, { invoice, phoneNumber: '+260971234567', provider: 'MTN_MOMO_ZMB', providerPaymentId: providerPaymentIdFor(key) }, new Date());
    const first = push('wtu_adapter_push');
    expect(first.providerPaymentId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await adapter.push(first, 'https://recur.test/pay/return/x')).toEqual({ redirectUrl: 'https://recur.test/pay/return/x' });
    expect(pawapay.requests.at(-1)).toMatchObject({
      method: 'POST', path: '/v2/deposits',
      body: { depositId: first.providerPaymentId, amount: '150.50', currency: 'ZMW', payer: { type: 'MMO', accountDetails: { phoneNumber: '260971234567', provider: 'MTN_MOMO_ZMB' } }, clientReferenceId: 'in_test' },
    });
    // A second try of the same top-up (its answer or its commit lost) asks for the same deposit.
    const retry = push('wtu_adapter_push');
    expect(retry.providerPaymentId).toBe(first.providerPaymentId);
    expect(await adapter.push(retry, 'https://recur.test/pay/return/x')).toEqual({ redirectUrl: 'https://recur.test/pay/return/x' });
    expect(pawapay.deposits.get(first.providerPaymentId)).toMatchObject({ status: 'ACCEPTED', amount: '150.50' });
    expect(await adapter.status(retry)).toEqual({ state: 'pending' });
    pawapay.rejectAmounts.add('150.50');
    try {
      expect(await adapter.push(push('wtu_adapter_rejected'), 'https://recur.test/r')).toEqual({ rejected: { code: 'amount_out_of_bounds', message: 'The amount is beyond the provider limits.' } });
    } finally {
      pawapay.rejectAmounts.delete('150.50');
    }
  });

  it('never sends a sandbox payment to pawaPay, whatever calls it', async () => {
    const before = pawapay.requests.length;
    const sandbox = payment(false);
    await expect(adapter.start(sandbox, 'https://recur.test/r')).rejects.toMatchObject({ code: 'sandbox_reached_live_provider' });
    await expect(adapter.push(sandbox, 'https://recur.test/r')).rejects.toMatchObject({ code: 'sandbox_reached_live_provider' });
    await expect(adapter.status(sandbox)).rejects.toMatchObject({ code: 'sandbox_reached_live_provider' });
    await expect(adapter.refund({ refundId: 'x', payment: sandbox, amount: sandbox.amount })).rejects.toMatchObject({ code: 'sandbox_reached_live_provider' });
    expect(pawapay.requests.length).toBe(before);
  });

  it('answers provider_unavailable when pawaPay cannot be reached or refuses the token', async () => {
    const wrongToken = new PawapayAdapter({ baseUrl: pawapay.baseUrl, apiToken: 'wrong', callbackPublicKey: '', timeoutMs: 2_000 }, () => new Date());
    await expect(wrongToken.status(payment(true))).rejects.toMatchObject({ kind: 'unavailable', code: 'provider_unavailable' });
    const unreachable = new PawapayAdapter({ baseUrl: 'http://127.0.0.1:9', apiToken: 't', callbackPublicKey: '', timeoutMs: 2_000 }, () => new Date());
    await expect(unreachable.status(payment(true))).rejects.toMatchObject({ kind: 'unavailable', code: 'provider_unavailable' });
    await expect(wrongToken.parseCallback({ method: 'POST', authority: 'a', path: '/', headers: {}, body: new Uint8Array() })).rejects.toEqual(expect.objectContaining({ kind: 'unauthenticated' }));
  });
});

/**
 * Callbacks as pawaPay really signs them: with pawaPay's own sample algorithm
 * (pawaPay/signatures-node-example: the `http-message-signatures` library's signMessage, its
 * signer `createSign('SHA256').update(data).sign(privateKey)`, so ECDSA in DER, over the fields the
 * sample covers), with `@query` covered, and with the key picked by `keyid` from pawaPay's
 * public-key endpoint, the configured key being the fallback.
 */
describe('pawaPay callback signatures', () => {
  const sampleSigner = (privateKey: KeyObject, keyId: string) => ({
    id: keyId,
    alg: 'ecdsa-p256-sha256',
    async sign(data: Buffer) {
      return createSign('SHA256').update(data).sign(privateKey);
    },
  });

  /** The deposit callback of `depositId`, signed by pawaPay's sample code, as the adapter receives it (header names lowercase). */
  async function signedBySample(url: string, depositId: string, privateKey: KeyObject, keyId: string, fields: string[]) {
    const body = JSON.stringify({ depositId, status: 'COMPLETED', amount: '150.50', currency: 'ZMW' });
    const signed = await httpbis.signMessage({ key: sampleSigner(privateKey, keyId), name: 'sig-pp', fields }, {
      method: 'POST',
      url,
      headers: {
        'Signature-Date': new Date().toISOString(),
        'Content-Type': 'application/json',
        'Content-Digest': `sha-512=:${createHash('sha512').update(body).digest('base64')}:`,
        'Content-Length': String(Buffer.byteLength(body)),
      },
      body,
    });
    const target = new URL(url);
    const headers = Object.fromEntries(Object.entries(signed.headers as Record<string, string>).map(([name, value]) => [name.toLowerCase(), String(value)]));
    return { method: 'POST', authority: target.host, path: `${target.pathname}${target.search}`, headers, body: Buffer.from(body) };
  }

  const SAMPLE_FIELDS = ['@method', '@authority', '@path', 'signature-date', 'content-digest', 'content-type', 'content-length'];
  const depositId = 'a4f1c2d3-0b1e-4c5d-8e9f-0a1b2c3d4e5f';

  it('accepts a callback signed by pawaPay\'s sample code (DER), also one that covers @query; refuses it tampered or signed by a stranger', async () => {
    const url = 'https://recur.test/callbacks/pawapay';
    expect(await adapter.parseCallback(await signedBySample(url, depositId, pawapay.keys.privateKey, 'pawapay-test-key', SAMPLE_FIELDS))).toEqual({ providerPaymentId: depositId, outcome: { status: 'succeeded', collected: money(15_050, 'zmw') } });
    const withQuery = await signedBySample(`${url}?source=pawapay&attempt=2`, depositId, pawapay.keys.privateKey, 'pawapay-test-key', [...SAMPLE_FIELDS, '@query']);
    expect((await adapter.parseCallback(withQuery)).providerPaymentId).toBe(depositId);
    // The query is signed: another query is another request.
    await expect(adapter.parseCallback({ ...withQuery, path: `${new URL(url).pathname}?source=pawapay&attempt=3` })).rejects.toEqual(expect.objectContaining({ kind: 'unauthenticated' }));
    const tampered = await signedBySample(url, depositId, pawapay.keys.privateKey, 'pawapay-test-key', SAMPLE_FIELDS);
    await expect(adapter.parseCallback({ ...tampered, body: Buffer.from(tampered.body.toString().replace('COMPLETED', 'FAILED')) })).rejects.toEqual(expect.objectContaining({ kind: 'unauthenticated' }));
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expect(adapter.parseCallback(await signedBySample(url, depositId, stranger, 'pawapay-test-key', SAMPLE_FIELDS))).rejects.toEqual(expect.objectContaining({ kind: 'unauthenticated' }));
  });

  it('picks the key by keyid from pawaPay\'s public-key endpoint, so a rotated key verifies; the configured key stays the fallback', async () => {
    const url = 'https://recur.test/callbacks/pawapay';
    const rotated = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    // Recur is configured with the old key only; pawaPay now lists the new one too.
    const configuredOnly = new PawapayAdapter({ baseUrl: pawapay.baseUrl, apiToken: pawapay.token, callbackPublicKey: pawapay.publicKeyPem, timeoutMs: 2_000 }, () => new Date());
    pawapay.publicKeys = [...pawapay.publicKeys, { id: 'HTTP_EC_P256_KEY:2', key: rotated.publicKey.export({ type: 'spki', format: 'pem' }).toString() }];
    try {
      const byNewKey = await signedBySample(url, depositId, rotated.privateKey, 'HTTP_EC_P256_KEY:2', SAMPLE_FIELDS);
      expect((await configuredOnly.parseCallback(byNewKey)).providerPaymentId).toBe(depositId);
      expect(pawapay.requests.filter((request) => request.path === '/v2/public-key/http')).not.toHaveLength(0);
      // An unknown keyid falls back to the configured key: good with the old key, refused with the new.
      expect((await configuredOnly.parseCallback(await signedBySample(url, depositId, pawapay.keys.privateKey, 'HTTP_EC_P256_KEY:9', SAMPLE_FIELDS))).providerPaymentId).toBe(depositId);
      await expect(configuredOnly.parseCallback(await signedBySample(url, depositId, rotated.privateKey, 'HTTP_EC_P256_KEY:9', SAMPLE_FIELDS))).rejects.toEqual(expect.objectContaining({ kind: 'unauthenticated' }));
      // A keyid may not pick another id's key: the new keyid with a signature by the old key is refused.
      await expect(configuredOnly.parseCallback(await signedBySample(url, depositId, pawapay.keys.privateKey, 'HTTP_EC_P256_KEY:2', SAMPLE_FIELDS))).rejects.toEqual(expect.objectContaining({ kind: 'unauthenticated' }));
    } finally {
      pawapay.publicKeys = pawapay.publicKeys.filter((entry) => entry.id !== 'HTTP_EC_P256_KEY:2');
    }
  });
});
