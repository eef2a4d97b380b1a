import { checkMetadata, checkPage, DomainError, hasPrefix, mergeMetadata, newId, PAGE_LIMIT_DEFAULT, pageInfo } from '../src';

describe('newId', () => {
  it('is the prefix and 24 base62 characters, and does not repeat', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newId('cus')));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^cus_[0-9A-Za-z]{24}$/);
    expect(hasPrefix(newId('evt'), 'evt')).toBe(true);
    expect(hasPrefix(newId('evt'), 'cus')).toBe(false);
  });
});

describe('checkPage', () => {
  it('applies the defaults', () => {
    expect(checkPage(undefined, undefined)).toEqual({ limit: PAGE_LIMIT_DEFAULT, offset: 0 });
    expect(checkPage(0, 0)).toEqual({ limit: PAGE_LIMIT_DEFAULT, offset: 0 });
  });

  it.each([
    [101, 0, 'limit'],
    [-1, 0, 'limit'],
    [1.5, 0, 'limit'],
    [10, -1, 'offset'],
    [10, 10_001, 'offset'],
  ])('rejects limit %p offset %p (param %s) instead of clamping', (limit, offset, param) => {
    // An asymmetric matcher, not a catch block: if nothing throws, this fails.
    // (libs/testing's thrownBy depends on this library, so its tests cannot use it.)
    expect(() => checkPage(limit, offset)).toThrow(expect.objectContaining({ name: 'DomainError', param, kind: 'invalid_argument' }));
  });

  it('accepts the bounds themselves', () => {
    expect(checkPage(100, 10_000)).toEqual({ limit: 100, offset: 10_000 });
    expect(checkPage(1, 0)).toEqual({ limit: 1, offset: 0 });
  });
});

describe('pageInfo', () => {
  it('says whether items follow the window', () => {
    expect(pageInfo({ limit: 2, offset: 0 }, 2, 3)).toEqual({ total: 3, hasMore: true });
    expect(pageInfo({ limit: 2, offset: 2 }, 1, 3)).toEqual({ total: 3, hasMore: false });
    expect(pageInfo({ limit: 10, offset: 20 }, 0, 3)).toEqual({ total: 3, hasMore: false });
  });
});

describe('metadata', () => {
  it('merges like Stripe: set keys, empty value removes', () => {
    expect(mergeMetadata({ a: '1', b: '2' }, { b: '', c: '3' })).toEqual({ a: '1', c: '3' });
  });

  it('limits keys, key length and value length, naming the key', () => {
    expect(() => checkMetadata(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])))).toThrow('at most 50 keys');
    expect(() => checkMetadata({ ['k'.repeat(41)]: 'v' })).toThrow(DomainError);
    expect(() => checkMetadata({ plan: 'x'.repeat(501) })).toThrow(expect.objectContaining({ name: 'DomainError', param: 'metadata[plan]' }));
    expect(checkMetadata({ plan: 'x'.repeat(500) })).toEqual({ plan: 'x'.repeat(500) });
  });
});
