import { DomainError } from '@recur/kernel';
import { checkChangeSource, createCustomer, deleteCustomer, updateCustomer } from '../src/customers/customer';
import { thrownBy } from '@recur/testing';

const tenant = { accountId: 'acct_1', livemode: false };
const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

const failure = (fn: () => unknown) => thrownBy<DomainError>(fn);

describe('customer rules', () => {
  it('creates with trimmed fields and a cus_ id, recording customer created', () => {
    const { customer, events } = createCustomer(tenant, { name: '  Ada ', email: ' ada@example.com ' }, t0);
    expect(customer).toMatchObject({ name: 'Ada', email: 'ada@example.com', metadata: {}, createdAt: t0, deletedAt: null, tenant });
    expect(customer.id).toMatch(/^cus_/);
    expect(events).toEqual([{ kind: 'created', customer }]);
  });

  it.each([
    [{ name: '', email: 'a@b.co' }, 'name'],
    [{ name: 'x'.repeat(257), email: 'a@b.co' }, 'name'],
    [{ name: 'Ada', email: 'not-an-address' }, 'email'],
    [{ name: 'Ada', email: 'a@b' }, 'email'],
  ])('rejects %p naming %s', (fields, param) => {
    const error = failure(() => createCustomer(tenant, fields, t0));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ kind: 'invalid_argument', param });
  });

  it('updates only given fields and merges metadata, recording what changed and the state before', () => {
    const { customer } = createCustomer(tenant, { name: 'Ada', email: 'a@b.co', metadata: { a: '1', b: '2' } }, t0);
    const { customer: updated, events } = updateCustomer(customer, { email: 'c@d.co', metadata: { a: '', c: '3' } }, t1);
    expect(updated).toMatchObject({ name: 'Ada', email: 'c@d.co', metadata: { b: '2', c: '3' }, updatedAt: t1, createdAt: t0 });
    expect(events).toEqual([{ kind: 'updated', customer: updated, previous: customer, changedFields: ['email', 'metadata'], source: 'api' }]);
  });

  it('records who made a change: the API unless the customer portal says so; an unknown source is refused', () => {
    const { customer } = createCustomer(tenant, { name: 'Ada', email: 'a@b.co' }, t0);
    expect(updateCustomer(customer, { email: 'c@d.co' }, t1, 'portal').events[0]).toMatchObject({ source: 'portal' });
    expect(checkChangeSource('')).toBe('api');
    expect(checkChangeSource('portal')).toBe('portal');
    expect(failure(() => checkChangeSource('browser'))).toMatchObject({ kind: 'invalid_argument', param: 'source' });
  });

  it('does not count metadata whose keys merely come back in another order as changed', () => {
    const { customer } = createCustomer(tenant, { name: 'Ada', email: 'a@b.co', metadata: { a: '1', b: '2' } }, t0);
    const reordered = { ...customer, metadata: { b: '2', a: '1' } };
    expect(updateCustomer(reordered, { name: 'Ada Lovelace', metadata: { a: '1' } }, t1).events[0]).toMatchObject({ changedFields: ['name'] });
  });

  it('soft-deletes once; a deleted customer cannot change again', () => {
    const { customer: deleted, events } = deleteCustomer(createCustomer(tenant, { name: 'Ada', email: 'a@b.co' }, t0).customer, t1);
    expect(deleted.deletedAt).toEqual(t1);
    expect(events).toEqual([{ kind: 'deleted', customer: deleted }]);
    expect(failure(() => deleteCustomer(deleted, t1))).toMatchObject({ kind: 'failed_precondition', code: 'customer_deleted' });
    expect(failure(() => updateCustomer(deleted, { name: 'B' }, t1))).toMatchObject({ code: 'customer_deleted' });
  });

  it('keeps an address with an ISO 3166-1 alpha-2 country and a tax status; reports both as changed', () => {
    const address = { line1: ' Cairo Road 1 ', line2: '', city: 'Lusaka', region: null, postalCode: null, country: 'ZM' };
    const { customer } = createCustomer(tenant, { name: 'Mwila', email: 'm@example.com', address }, t0);
    expect([customer.address, customer.taxExempt]).toEqual([{ line1: 'Cairo Road 1', line2: null, city: 'Lusaka', region: null, postalCode: null, country: 'ZM' }, 'none']);
    for (const country of ['zm', 'XK', 'ZMB', 'EU']) {
      expect(failure(() => createCustomer(tenant, { name: 'A', email: 'a@b.co', address: { ...address, country } }, t0))).toMatchObject({ code: 'parameter_invalid', param: 'address.country' });
    }
    expect(failure(() => createCustomer(tenant, { name: 'A', email: 'a@b.co', taxExempt: 'maybe' }, t0))).toMatchObject({ param: 'tax_exempt' });
    const reverse = updateCustomer(customer, { taxExempt: 'reverse', address: null }, t1);
    expect([reverse.customer.taxExempt, reverse.customer.address]).toEqual(['reverse', null]);
    expect(reverse.events[0]).toMatchObject({ kind: 'updated', changedFields: ['address', 'tax_exempt'] });
    expect(updateCustomer(customer, { address: { ...address } }, t1).events[0]).toMatchObject({ changedFields: [] });
  });

  it('keeps a preferred_locale Recur has a catalogue for, null for the account default; reports it as changed', () => {
    const { customer } = createCustomer(tenant, { name: 'Awa', email: 'awa@example.com', preferredLocale: 'fr' }, t0);
    expect(customer.preferredLocale).toBe('fr');
    expect(createCustomer(tenant, { name: 'Ada', email: 'ada@example.com' }, t0).customer.preferredLocale).toBeNull();
    for (const locale of ['de', 'FR', 'fr-FR', ' fr']) {
      expect(failure(() => createCustomer(tenant, { name: 'A', email: 'a@b.co', preferredLocale: locale }, t0))).toMatchObject({ code: 'parameter_invalid', param: 'preferred_locale', message: 'preferred_locale must be one of en, fr' });
    }
    const cleared = updateCustomer(customer, { preferredLocale: '' }, t1);
    expect(cleared.customer.preferredLocale).toBeNull();
    expect(cleared.events[0]).toMatchObject({ kind: 'updated', changedFields: ['preferred_locale'] });
    expect(updateCustomer(customer, { preferredLocale: 'fr' }, t1).events[0]).toMatchObject({ changedFields: [] });
  });

  it('keeps a phone in E.164 (spaces and dashes dropped), refuses anything else, reports it as changed', () => {
    const { customer } = createCustomer(tenant, { name: 'Awa', email: 'awa@example.com', phone: '+221 77-123 45 67' }, t0);
    expect(customer.phone).toBe('+221771234567');
    for (const phone of ['221771234567', '+0221771234', '+22177', '+2217712345678901', 'tel:+221771234567']) {
      expect(failure(() => createCustomer(tenant, { name: 'A', email: 'a@b.co', phone }, t0))).toMatchObject({ code: 'parameter_invalid', param: 'phone' });
    }
    const cleared = updateCustomer(customer, { phone: '' }, t1);
    expect([cleared.customer.phone, cleared.events[0]]).toMatchObject([null, { changedFields: ['phone'] }]);
  });

  it('keeps up to five tax ids in order, refuses a bad one naming its index and part, replaces or removes the whole list', () => {
    const { customer } = createCustomer(tenant, { name: 'Awa', email: 'awa@example.com', taxIds: [{ type: 'sn_ninea', value: ' 0012345 2G3 ' }, { type: 'eu_vat', value: 'fr ab 123456789' }] }, t0);
    expect(customer.taxIds).toEqual([{ type: 'sn_ninea', value: '0012345 2G3' }, { type: 'eu_vat', value: 'FRAB123456789' }]);
    const bad: [{ type: string; value: string }[], string][] = [
      [[{ type: 'sn_ninea', value: '1' }, { type: 'eu_vat', value: 'DE12' }], 'tax_ids[1].value'],
      [[{ type: 'vat', value: 'DE123456789' }], 'tax_ids[0].type'],
      [[{ type: 'ke_pin', value: 'P05123456X' }], 'tax_ids[0].value'],
      [Array.from({ length: 6 }, () => ({ type: 'zm_tin', value: '1001234567' })), 'tax_ids'],
    ];
    for (const [taxIds, param] of bad) expect(failure(() => createCustomer(tenant, { name: 'A', email: 'a@b.co', taxIds }, t0))).toMatchObject({ code: 'parameter_invalid', param });
    const replaced = updateCustomer(customer, { taxIds: [{ type: 'ke_pin', value: 'P051234567X' }] }, t1);
    expect([replaced.customer.taxIds, replaced.events[0]]).toMatchObject([[{ type: 'ke_pin', value: 'P051234567X' }], { changedFields: ['tax_ids'] }]);
    expect(updateCustomer(customer, { name: 'Awa D.' }, t1).customer.taxIds).toEqual(customer.taxIds);
    expect(updateCustomer(customer, { taxIds: null }, t1).customer.taxIds).toEqual([]);
    expect(updateCustomer(customer, { taxIds: [] }, t1).events[0]).toMatchObject({ changedFields: ['tax_ids'] });
  });
});
