import { createHmac } from 'node:crypto';
import { computeSignature, constructEvent, deliveryBody, signatureHeaders, verifySignature, WebhookVerificationError } from '../src';

const secret = 'whsec_test_secret';
const body = JSON.stringify({ id: 'evt_1', type: 'customer.created', created: 1795643234, livemode: false, data: { object: { id: 'cus_1' } } });

// The package is published on its own, so it keeps its tests free of workspace helpers.
function failure(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (error) {
    return error as WebhookVerificationError;
  }
  throw new Error('expected verification to fail');
}

describe('webhook signatures', () => {
  it('sign the envelope serialised in the specification’s order, whatever else the event read back carries', () => {
    const listed = { livemode: false, object: 'event', data: { object: { id: 'cus_1' } }, created: 1795643234, type: 'customer.created', id: 'evt_1' };
    expect(deliveryBody(listed)).toBe(body);
  });

  it('match an independent HMAC over "<timestamp>.<raw body>"', () => {
    const timestamp = '1795643234123';
    const independent = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
    expect(computeSignature(secret, timestamp, body)).toBe(independent);
    expect(signatureHeaders(secret, body, 1795643234123)).toEqual({ 'X-Recur-Signature': `sha256=${independent}`, 'X-Recur-Timestamp': timestamp });
  });

  it('verify and parse a fresh delivery, with Node-style or fetch-style headers', () => {
    const now = Date.now();
    const headers = signatureHeaders(secret, body, now);
    const lower = { 'x-recur-signature': headers['X-Recur-Signature'], 'x-recur-timestamp': headers['X-Recur-Timestamp'] };
    expect(constructEvent(body, lower, secret)).toMatchObject({ id: 'evt_1', type: 'customer.created' });
    expect(constructEvent(Buffer.from(body), new Headers(lower), secret).id).toBe('evt_1');
  });

  it('reject a changed body, a wrong secret, a truncated or missing signature', () => {
    const headers = signatureHeaders(secret, body);
    expect(failure(() => verifySignature(`${body} `, headers, secret)).code).toBe('invalid_signature');
    expect(failure(() => verifySignature(JSON.stringify(JSON.parse(body), null, 1), headers, secret)).code).toBe('invalid_signature');
    expect(failure(() => verifySignature(body, headers, 'whsec_other')).code).toBe('invalid_signature');
    expect(failure(() => verifySignature(body, { ...headers, 'X-Recur-Signature': headers['X-Recur-Signature'].slice(0, 20) }, secret)).code).toBe('invalid_signature');
    // Spellings a hex decoder reads as the same bytes: an odd digit added, anything after the hex.
    for (const suffix of ['0', 'z', '=='])
      expect(failure(() => verifySignature(body, { ...headers, 'X-Recur-Signature': `${headers['X-Recur-Signature']}${suffix}` }, secret)).code).toBe('invalid_signature');
    expect(failure(() => verifySignature(body, { 'X-Recur-Timestamp': headers['X-Recur-Timestamp'] }, secret)).code).toBe('missing_header');
  });

  it('reject timestamps older than the tolerance, or as far in the future', () => {
    const now = 1_800_000_000_000;
    const old = signatureHeaders(secret, body, now - 301_000);
    const future = signatureHeaders(secret, body, now + 301_000);
    expect(failure(() => verifySignature(body, old, secret, { now })).code).toBe('timestamp_out_of_tolerance');
    expect(failure(() => verifySignature(body, future, secret, { now })).code).toBe('timestamp_out_of_tolerance');
    expect(() => verifySignature(body, signatureHeaders(secret, body, now - 299_000), secret, { now })).not.toThrow();
    expect(() => verifySignature(body, old, secret, { now, toleranceSeconds: 600 })).not.toThrow();
  });

  it('reject a signed body that is not an event', () => {
    expect(failure(() => constructEvent('[1,2]', signatureHeaders(secret, '[1,2]'), secret)).code).toBe('invalid_payload');
    for (const payload of ['{"id":1,"type":"customer.created"}', '{"id":"evt_1","type":2}', 'not json']) {
      const error = failure(() => constructEvent(payload, signatureHeaders(secret, payload), secret));
      expect([error.name, error.code]).toEqual(['WebhookVerificationError', 'invalid_payload']);
    }
  });

  it('reject a correctly signed timestamp that is not a whole number of milliseconds', () => {
    // Number('abc') is NaN, and NaN passes every tolerance comparison: the format check is what stops it.
    for (const timestamp of ['abc', '1795643234123abc', 'abc1795643234123', '-1795643234123', '']) {
      const headers = { 'X-Recur-Timestamp': timestamp, 'X-Recur-Signature': `sha256=${computeSignature(secret, timestamp, body)}` };
      expect(failure(() => verifySignature(body, headers, secret)).code).toBe(timestamp === '' ? 'missing_header' : 'invalid_signature');
    }
  });

  it('accept a timestamp exactly at the tolerance', () => {
    const now = 1_800_000_000_000;
    expect(() => verifySignature(body, signatureHeaders(secret, body, now - 300_000), secret, { now })).not.toThrow();
    expect(() => verifySignature(body, signatureHeaders(secret, body, now + 300_000), secret, { now })).not.toThrow();
    expect(failure(() => verifySignature(body, signatureHeaders(secret, body, now - 300_001), secret, { now })).code).toBe('timestamp_out_of_tolerance');
  });
});
