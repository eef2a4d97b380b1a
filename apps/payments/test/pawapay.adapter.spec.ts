import { generateKeyPairSync, randomBytes } from 'node:crypto';
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
    expect(adapter.parseRefundCallback(pawapay.refundCallback(url, refundId))).toEqual({ providerRefundId: refundId, final: { status: 'completed' } });
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(() => adapter.parseRefundCallback(pawapay.refundCallback(url, refundId, { key: stranger }))).toThrow(expect.objectContaining({ kind: 'unauthenticated' }));
    const signed = pawapay.refundCallback(url, refundId);
    const noId = pawapay.callback(url, live.providerPaymentId); // a deposit body names no refundId
    expect(() => adapter.parseRefundCallback(noId)).toThrow(expect.objectContaining({ kind: 'invalid_argument', param: 'refundId' }));
    expect(() => adapter.parseRefundCallback({ ...signed, body: Buffer.from(signed.body.toString().replace('COMPLETED', 'FAILED')) })).toThrow(expect.objectContaining({ kind: 'unauthenticated' }));
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
    expect(() => wrongToken.parseCallback({ method: 'POST', authority: 'a', path: '/', headers: {}, body: new Uint8Array() })).toThrow(expect.objectContaining({ kind: 'unauthenticated' }));
  });
});
