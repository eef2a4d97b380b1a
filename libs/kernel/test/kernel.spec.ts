import {
  checkListPage, checkMetadata, checkPage, ConfigError, DomainError, failedPrecondition, hasPrefix, isDomainError, intEnv, invalidArgument, mergeMetadata, newId, notFound, optionalEnv, PAGE_LIMIT_DEFAULT, pageInfo,
  requireEnv, systemClock, unixSeconds, windowOf,
} from '../src';

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
    expect(pageInfo({ limit: 2, offset: 0 }, 2, 3)).toEqual({ total: 3, hasMore: true, cursor: '' });
    expect(pageInfo({ limit: 2, offset: 2 }, 1, 3)).toEqual({ total: 3, hasMore: false, cursor: '' });
    expect(pageInfo({ limit: 10, offset: 20 }, 0, 3)).toEqual({ total: 3, hasMore: false, cursor: '' });
  });
});

describe('checkListPage', () => {
  it("reads proto3's empty strings as no cursor, and keeps the one given", () => {
    expect(checkListPage({ limit: 0, offset: 0, startingAfter: '', endingBefore: '' })).toEqual({ limit: PAGE_LIMIT_DEFAULT, offset: 0 });
    expect(checkListPage({ limit: 5, offset: 0, startingAfter: 'cus_1', endingBefore: '' })).toEqual({ limit: 5, offset: 0, startingAfter: 'cus_1' });
    expect(checkListPage(undefined)).toEqual({ limit: PAGE_LIMIT_DEFAULT, offset: 0 });
  });

  it.each([
    [{ startingAfter: 'cus_1', endingBefore: 'cus_2' }, 'ending_before'],
    [{ startingAfter: 'cus_1', offset: 3 }, 'offset'],
    [{ endingBefore: 'cus_1', offset: 3 }, 'offset'],
  ])('refuses %p (param %s)', (request, param) => {
    expect(() => checkListPage(request)).toThrow(expect.objectContaining({ name: 'DomainError', param, kind: 'invalid_argument' }));
  });
});

describe('windowOf', () => {
  const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
  const ids = (window: { data: { id: string }[] }) => window.data.map((item) => item.id);

  it('pages by offset, after a cursor and before one, echoing the cursor', () => {
    expect(windowOf(items, { limit: 2, offset: 1 }, 'thing', (item) => item.id)).toEqual({ data: [{ id: 'b' }, { id: 'c' }], page: { total: 5, hasMore: true, cursor: '' } });
    const after = windowOf(items, { limit: 2, offset: 0, startingAfter: 'c' }, 'thing', (item) => item.id);
    expect([ids(after), after.page]).toEqual([['d', 'e'], { total: 5, hasMore: false, cursor: 'c' }]);
    const before = windowOf(items, { limit: 2, offset: 0, endingBefore: 'd' }, 'thing', (item) => item.id);
    expect([ids(before), before.page]).toEqual([['b', 'c'], { total: 5, hasMore: true, cursor: 'd' }]);
    const first = windowOf(items, { limit: 9, offset: 0, endingBefore: 'b' }, 'thing', (item) => item.id);
    expect([ids(first), first.page.hasMore]).toEqual([['a'], false]);
  });

  it("answers an id that is not in the list as Stripe does: 400 resource_missing naming the parameter", () => {
    expect(() => windowOf(items, { limit: 2, offset: 0, endingBefore: 'z' }, 'thing', (item) => item.id)).toThrow(
      expect.objectContaining({ kind: 'invalid_argument', code: 'resource_missing', param: 'ending_before', message: "No such thing: 'z'" }),
    );
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

describe('metadata bounds', () => {
  const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']));
  const param = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return (error as DomainError).param;
    }
    return 'accepted';
  };

  it('accepts exactly the limits and names the offending key beyond them', () => {
    expect(param(() => checkMetadata(keys(50)))).toBe('accepted');
    expect(param(() => checkMetadata(keys(51), 'plan_metadata'))).toBe('plan_metadata');
    expect(param(() => checkMetadata({ ['k'.repeat(40)]: 'v' }))).toBe('accepted');
    expect(param(() => checkMetadata({ ['k'.repeat(41)]: 'v' }))).toBe(`metadata[${'k'.repeat(41)}]`);
    expect(param(() => checkMetadata({ '': 'v' }))).toBe('metadata[]');
    expect(param(() => checkMetadata({ plan: 'x'.repeat(501) }))).toBe('metadata[plan]');
    expect(param(() => checkMetadata({ plan: 42 } as never))).toBe('metadata[plan]');
    expect(param(() => checkMetadata({ plan: ['x'] } as never))).toBe('metadata[plan]');
  });
});

describe('domain errors', () => {
  it('carry kind, stable code and param', () => {
    expect(notFound('plan', 'plan_1')).toMatchObject({ kind: 'not_found', code: 'resource_missing', param: 'id', message: "No such plan: 'plan_1'", name: 'DomainError' });
    expect(invalidArgument('name', 'name must not be empty')).toMatchObject({ kind: 'invalid_argument', code: 'parameter_invalid', param: 'name' });
    expect(invalidArgument('currency', 'needed', 'parameter_missing')).toMatchObject({ code: 'parameter_missing' });
    expect(failedPrecondition('plan_archived', 'archived')).toMatchObject({ kind: 'failed_precondition', code: 'plan_archived', param: undefined });
    expect([isDomainError(notFound('plan', 'x')), isDomainError(new Error('x')), isDomainError({ code: 'resource_missing' })]).toEqual([true, false, false]);
  });
});

describe('configuration from the environment', () => {
  it('requires, defaults and parses, naming the variable', () => {
    expect(requireEnv('A', { A: 'x' })).toBe('x');
    expect(() => requireEnv('A', {})).toThrow(new ConfigError('missing required environment variable A'));
    expect(() => requireEnv('A', { A: '' })).toThrow(ConfigError);
    expect([optionalEnv('A', { A: 'x' }), optionalEnv('A', { A: '' }), optionalEnv('A', {})]).toEqual(['x', undefined, undefined]);
    expect([intEnv('N', 7, { N: '42' }), intEnv('N', 7, {}), intEnv('N', 7, { N: '' })]).toEqual([42, 7, 7]);
    expect(() => intEnv('N', 7, { N: '1.5' })).toThrow("environment variable N must be an integer, got '1.5'");
  });
});

describe('time', () => {
  it('unix seconds round down; the system clock is the wall clock', () => {
    expect(unixSeconds(new Date(1_795_643_234_999))).toBe(1_795_643_234);
    const before = Date.now();
    const now = systemClock().getTime();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});
