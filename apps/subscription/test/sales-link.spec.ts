import type { DomainError } from '@recur/kernel';
import { thrownBy } from '@recur/testing';
import { assertSellable, createSalesLink, type NewSalesLink, type SalesLinkCheckout, setActive, successUrlOf } from '../src/sales-links/sales-link';

const tenant = { accountId: 'acct_1', livemode: false };
const now = new Date('2026-11-26T10:00:00Z');
const fields: NewSalesLink = { kind: 'plan', title: '  Fibre 50  ', planId: 'plan_1', billingInterval: 'monthly', trialDays: 0, allowPromotionCodes: false, successUrl: '' };

function refusal(run: () => unknown): { kind: string; code: string; param?: string } {
  const { kind, code, param } = thrownBy<DomainError>(run);
  return { kind, code, param };
}

describe('sales link', () => {
  it('is made active, with a trimmed title and an unguessable token of 32 random bytes', () => {
    const link = createSalesLink(tenant, fields, now);
    expect(link).toMatchObject({ id: expect.stringMatching(/^slink_/), title: 'Fibre 50', active: true, createdAt: now, updatedAt: now });
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(createSalesLink(tenant, fields, now).token).not.toBe(link.token);
  });

  it.each([
    [{ kind: 'bundle' }, 'kind'],
    [{ title: '   ' }, 'title'],
    [{ title: 'x'.repeat(201) }, 'title'],
    [{ billingInterval: 'weekly' }, 'billing_interval'],
    [{ trialDays: -1 }, 'trial_days'],
    [{ trialDays: 731 }, 'trial_days'],
    [{ trialDays: 1.5 }, 'trial_days'],
    [{ successUrl: 'javascript:alert(1)' }, 'success_url'],
    [{ successUrl: 'not a url' }, 'success_url'],
    [{ kind: 'one_time', trialDays: 7 }, 'trial_days'],
    [{ kind: 'one_time', allowPromotionCodes: true }, 'allow_promotion_codes'],
  ])('refuses %j (param %s)', (change, param) => {
    expect(refusal(() => createSalesLink(tenant, { ...fields, ...change }, now))).toEqual({ kind: 'invalid_argument', code: 'parameter_invalid', param });
  });

  it('sells one_time without a trial or promotion codes', () => {
    expect(createSalesLink(tenant, { ...fields, kind: 'one_time' }, now)).toMatchObject({ kind: 'one_time', trialDays: 0, allowPromotionCodes: false });
  });

  it('moves between active and inactive, and refuses a move to the state it is in', () => {
    const link = createSalesLink(tenant, fields, now);
    const later = new Date(now.getTime() + 1000);
    const inactive = setActive(link, false, later);
    expect(inactive).toMatchObject({ active: false, updatedAt: later });
    expect(refusal(() => setActive(inactive, false, later))).toMatchObject({ kind: 'failed_precondition', code: 'sales_link_already_inactive' });
    expect(refusal(() => setActive(link, true, later))).toMatchObject({ kind: 'failed_precondition', code: 'sales_link_already_active' });
    expect(setActive(inactive, true, later).active).toBe(true);
  });

  it('sends the buyer to its own success URL, with {CHECKOUT_ID} replaced by the sale\'s id', () => {
    const checkout = { id: 'chk_42' } as SalesLinkCheckout;
    const link = (successUrl: string) => createSalesLink(tenant, { ...fields, successUrl }, now);
    expect(successUrlOf(link('https://shop.example/welcome?sale={CHECKOUT_ID}&again={CHECKOUT_ID}'), checkout)).toBe('https://shop.example/welcome?sale=chk_42&again=chk_42');
    expect(successUrlOf(link('https://shop.example/thanks'), checkout)).toBe('https://shop.example/thanks');
    expect(successUrlOf(link(''), checkout)).toBe('');
  });

  it('sells only while active', () => {
    const link = createSalesLink(tenant, fields, now);
    expect(() => assertSellable(link)).not.toThrow();
    expect(refusal(() => assertSellable(setActive(link, false, now)))).toMatchObject({ kind: 'failed_precondition', code: 'sales_link_inactive' });
  });
});
