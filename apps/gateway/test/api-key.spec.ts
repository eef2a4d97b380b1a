import { generateKey, hashKey, isWellFormedKey, keyFitsApp, redactKey } from '../src/auth/api-key';

describe('API key format', () => {
  it('generates keys with the kind prefix and 32 base62 characters', () => {
    expect(generateKey('test')).toMatch(/^recur_test_sk_[0-9A-Za-z]{32}$/);
    expect(generateKey('live')).toMatch(/^recur_live_sk_[0-9A-Za-z]{32}$/);
    expect(generateKey('publishable')).toMatch(/^recur_publishable_sk_[0-9A-Za-z]{32}$/);
  });

  it('recognises only well-formed keys', () => {
    expect(isWellFormedKey(generateKey('test'))).toBe(true);
    expect(isWellFormedKey('recur_test_sk_short')).toBe(false);
    expect(isWellFormedKey(`recur_other_sk_${'a'.repeat(32)}`)).toBe(false);
    expect(isWellFormedKey(`${generateKey('live')}x`)).toBe(false);
  });

  it('stores a hash that is stable and does not contain the key', () => {
    const key = generateKey('test');
    expect(hashKey(key)).toBe(hashKey(key));
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashKey(key)).not.toContain(key.slice(14));
    expect(redactKey(key)).toBe(`recur_test_sk_…${key.slice(-4)}`);
  });

  it('enforces the key mode rule: live keys on live, test keys on sandbox, publishable on either', () => {
    expect(keyFitsApp('live', 'live')).toBe(true);
    expect(keyFitsApp('live', 'sandbox')).toBe(false);
    expect(keyFitsApp('test', 'sandbox')).toBe(true);
    expect(keyFitsApp('test', 'live')).toBe(false);
    expect(keyFitsApp('publishable', 'sandbox')).toBe(true);
    expect(keyFitsApp('publishable', 'live')).toBe(true);
  });
});
