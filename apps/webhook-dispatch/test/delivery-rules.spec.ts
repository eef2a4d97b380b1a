import { DomainError } from '@recur/kernel';
import { MAX_ATTEMPTS, nextStep, RETRY_DELAYS_MS } from '../src/deliveries/schedule';
import { checkEvents, createEndpoint, updateEndpoint } from '../src/endpoints/endpoint';
import { checkEndpointUrl, isPublicAddress } from '../src/endpoints/url-policy';
import { DEFAULT_WEBHOOK_TIMEOUT_MS, webhookConfigFromEnv } from '../src/webhook-config';
import { thrownBy } from '@recur/testing';

const sandbox = { accountId: 'acct_1', livemode: false };
const live = { accountId: 'acct_1', livemode: true };

const failure = (fn: () => unknown) => thrownBy<DomainError>(fn);

describe('delivery schedule', () => {
  it('makes 5 attempts in all, waiting 1, 2, 4 and 8 seconds', () => {
    expect(MAX_ATTEMPTS).toBe(5);
    expect([1, 2, 3, 4].map((n) => nextStep(n, { ok: false }, false))).toEqual(RETRY_DELAYS_MS.map((delayMs) => ({ status: 'pending', delayMs })));
    expect(RETRY_DELAYS_MS).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(nextStep(5, { ok: false }, false)).toEqual({ status: 'failed' });
  });

  it('stops at the first success, and a manual retry is a single attempt', () => {
    expect(nextStep(3, { ok: true }, false)).toEqual({ status: 'succeeded' });
    expect(nextStep(6, { ok: false }, true)).toEqual({ status: 'failed' });
    expect(nextStep(6, { ok: true }, true)).toEqual({ status: 'succeeded' });
  });

  it('gives receivers 30 seconds unless configured otherwise', () => {
    expect(DEFAULT_WEBHOOK_TIMEOUT_MS).toBe(30_000);
    expect(webhookConfigFromEnv({})).toMatchObject({ timeoutMs: 30_000, allowPrivateUrls: false });
    expect(webhookConfigFromEnv({ WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' })).toMatchObject({ timeoutMs: 1_500, allowPrivateUrls: true });
  });
});

describe('URL policy', () => {
  it.each(['10.1.2.3', '127.0.0.1', '169.254.169.254', '192.168.0.10', '172.20.0.1', '100.64.0.1', '0.0.0.0', '::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1'])('treats %s as non-public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8'])('treats %s as public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('refuses private hosts unless the operator allows them', () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'https://localhost/hook', 'https://10.0.0.5/hook', 'https://[::1]/hook', 'https://metadata.internal/x']) {
      expect(failure(() => checkEndpointUrl(url, false, false))).toMatchObject({ code: 'url_not_public', param: 'url' });
    }
    expect(checkEndpointUrl('http://127.0.0.1:8080/hook', false, true)).toBe('http://127.0.0.1:8080/hook');
  });

  it('requires https for live endpoints, and well-formed http(s) URLs everywhere', () => {
    expect(failure(() => checkEndpointUrl('http://example.com/hook', true, false))).toMatchObject({ code: 'url_insecure' });
    expect(checkEndpointUrl('https://example.com/hook', true, false)).toBe('https://example.com/hook');
    expect(checkEndpointUrl('http://example.com/hook', false, false)).toBe('http://example.com/hook');
    for (const url of ['ftp://example.com', 'not a url', 'https://user:pass@example.com/', `https://example.com/${'a'.repeat(2048)}`]) {
      expect(failure(() => checkEndpointUrl(url, false, false))).toMatchObject({ kind: 'invalid_argument', param: 'url' });
    }
  });
});

describe('endpoint rules', () => {
  const now = new Date('2026-01-01T00:00:00Z');

  it('accepts only the 22 subscribable types, naming the bad one', () => {
    expect(checkEvents(['customer.created', 'customer.created', 'invoice.paid'])).toEqual(['customer.created', 'invoice.paid']);
    expect(failure(() => checkEvents(['customer.created', 'webhook.test']))).toMatchObject({ param: 'events[1]' });
    expect(failure(() => checkEvents([]))).toMatchObject({ param: 'events' });
  });

  it('creates enabled endpoints with a whsec_ secret, up to 16 per app', () => {
    const endpoint = createEndpoint(sandbox, { url: 'https://example.com/hook', events: ['customer.created'] }, false, now, 0);
    expect(endpoint).toMatchObject({ status: 'enabled', url: 'https://example.com/hook' });
    expect(endpoint.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(endpoint.id).toMatch(/^we_/);
    expect(failure(() => createEndpoint(sandbox, { url: 'https://example.com/hook', events: ['customer.created'] }, false, now, 16))).toMatchObject({ code: 'endpoint_limit_reached' });
  });

  it('updates status only to enabled or disabled, and re-checks a changed URL for the endpoint mode', () => {
    const endpoint = createEndpoint(live, { url: 'https://example.com/hook', events: ['customer.created'] }, false, now, 0);
    expect(updateEndpoint(endpoint, { status: 'disabled' }, false, now).status).toBe('disabled');
    expect(failure(() => updateEndpoint(endpoint, { status: 'paused' }, false, now))).toMatchObject({ param: 'status' });
    expect(failure(() => updateEndpoint(endpoint, { url: 'http://example.com/hook' }, false, now))).toMatchObject({ code: 'url_insecure' });
  });
});
