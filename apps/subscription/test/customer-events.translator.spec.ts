import { anyUnpack, timestampDate } from '@bufbuild/protobuf/wkt';
import { eventsV1, INTEGRATION_EVENTS, subscriptionEventsV1 } from '@recur/contracts';
import { isSubscribableEventType } from '@recur/vocabulary';
import { decodeInternalEvent, decodePublicEvent, encodeEvent, type InternalEvent, isInternalEvent, type OutboxEvent, type PublicEvent } from '@recur/messaging';
import { createCustomer, deleteCustomer, updateCustomer } from '../src/customers/customer';
import { translateCustomerEvent } from '../src/customers/customer-events.translator';
import { toCustomerJson, toCustomerMessage } from '../src/customers/customer.mapper';

const tenant = { accountId: 'acct_1', livemode: true };
const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

/** Splits a translation into its one internal and one public event. */
function split(events: OutboxEvent[]): { internal: InternalEvent; public: PublicEvent } {
  const internal = events.filter(isInternalEvent);
  const published = events.filter((event): event is PublicEvent => !isInternalEvent(event));
  expect([internal.length, published.length]).toEqual([1, 1]);
  return { internal: internal[0], public: published[0] };
}

/** What a consumer gets: the event through its wire JSON and back with the generated schema. */
const overTheWire = {
  internal: (event: InternalEvent) => decodeInternalEvent(JSON.stringify(encodeEvent(event))),
  public: (event: PublicEvent) => decodePublicEvent(JSON.stringify(encodeEvent(event))),
};

describe('customer events translator', () => {
  const created = createCustomer(tenant, { name: 'Ada', email: 'ada@example.com', metadata: { tier: 'gold' } }, t0);

  it('turns customer created into an integration event and the public customer.created', () => {
    const { internal, public: published } = split(translateCustomerEvent(created.events[0]));
    const customer = created.customer;

    const received = overTheWire.internal(internal);
    expect(received).toMatchObject({ type: 'recur.subscription.v1.CustomerCreated', aggregateId: customer.id, tenant: { accountId: 'acct_1', livemode: true } });
    expect(received.id).toMatch(/^evt_/);
    expect(timestampDate(received.occurredAt!)).toEqual(t0);
    expect(anyUnpack(received.payload!, subscriptionEventsV1.CustomerCreatedSchema)!.customer).toEqual(toCustomerMessage(customer));

    expect(overTheWire.public(published)).toEqual(published);
    expect(published).toMatchObject({ type: 'customer.created', created: BigInt(t0.getTime() / 1000), livemode: true, accountId: 'acct_1', aggregateId: customer.id });
    expect(published.data).toEqual({ object: toCustomerJson(customer) });
    expect(published.id).not.toBe(internal.id);
  });

  it('writes the public envelope as exactly the specification fields plus routing', () => {
    const { public: published } = split(translateCustomerEvent(created.events[0]));
    const wire = encodeEvent(published);
    expect(Object.keys(wire).sort()).toEqual(['account_id', 'aggregate_id', 'created', 'data', 'id', 'livemode', 'type']);
    expect(wire.data).toEqual({ object: toCustomerJson(created.customer) });
  });

  it('carries the changed fields: previous_attributes publicly, the state before internally', () => {
    const updated = updateCustomer(created.customer, { email: 'lovelace@example.com', metadata: { tier: '', plan: 'b' } }, t1);
    const { internal, public: published } = split(translateCustomerEvent(updated.events[0]));

    expect(published).toMatchObject({ type: 'customer.updated', created: BigInt(t1.getTime() / 1000) });
    expect(published.data).toEqual({
      object: toCustomerJson(updated.customer),
      previous_attributes: { email: 'ada@example.com', metadata: { tier: 'gold' } },
      source: 'api',
    });

    const payload = anyUnpack(overTheWire.internal(internal).payload!, subscriptionEventsV1.CustomerUpdatedSchema)!;
    expect(payload.changedFields).toEqual(['email', 'metadata']);
    expect(payload.previous).toEqual(toCustomerMessage(created.customer));
    expect(payload.customer).toEqual(toCustomerMessage(updated.customer));
  });

  it('says in customer.updated that a change came from the customer portal', () => {
    const updated = updateCustomer(created.customer, { email: 'lovelace@example.com' }, t1, 'portal');
    expect(split(translateCustomerEvent(updated.events[0])).public.data).toMatchObject({ source: 'portal', previous_attributes: { email: 'ada@example.com' } });
  });

  it('turns customer deleted into CustomerDeleted and customer.deleted, both with deleted_at', () => {
    const deleted = deleteCustomer(created.customer, t1);
    const { internal, public: published } = split(translateCustomerEvent(deleted.events[0]));
    expect(anyUnpack(overTheWire.internal(internal).payload!, subscriptionEventsV1.CustomerDeletedSchema)!.customer!.deletedAt).toBe(BigInt(t1.getTime() / 1000));
    expect(published.type).toBe('customer.deleted');
    expect(published.data).toMatchObject({ object: { deleted: true, deleted_at: t1.getTime() / 1000 } });
  });

  it('never gives an integration event a public type, and every payload type is registered', () => {
    const events = [created.events[0], updateCustomer(created.customer, { name: 'B' }, t1).events[0], deleteCustomer(created.customer, t1).events[0]];
    for (const internal of events.flatMap(translateCustomerEvent).filter(isInternalEvent)) {
      expect(internal.$typeName).toBe(eventsV1.InternalEventSchema.typeName);
      expect(isSubscribableEventType(internal.type)).toBe(false);
      expect(INTEGRATION_EVENTS.getMessage(internal.type)).toBeDefined();
    }
  });
});
