import { randomBytes } from 'node:crypto';
import { money } from '@recur/money';
import { newPayment, type Payment } from '../src/payments/payment';
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

  it('maps deposit statuses: NOT_FOUND, still processing, COMPLETED, FAILED', async () => {
    const live = payment(true);
    expect(await adapter.status(live)).toEqual({ state: 'not_found' });
    await adapter.start(live, 'https://recur.test/pay/return/x');
    expect(await adapter.status(live)).toEqual({ state: 'pending' });
    pawapay.finish(live.providerPaymentId, 'FAILED');
    expect(await adapter.status(live)).toEqual({ state: 'settled', outcome: { status: 'failed', code: 'insufficient_balance', message: 'The customer does not have enough funds.' } });
  });

  it('never sends a sandbox payment to pawaPay, whatever calls it', async () => {
    const before = pawapay.requests.length;
    const sandbox = payment(false);
    await expect(adapter.start(sandbox, 'https://recur.test/r')).rejects.toMatchObject({ code: 'sandbox_reached_live_provider' });
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
