import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { createRegistry } from '@bufbuild/protobuf';
import { subscriptionEventsV1 } from '@recur/contracts';
import {
  type BusMessage,
  eachInTurn,
  encodeEvent,
  type InternalEvent,
  internalEventBatchHandler,
  internalEventHandler,
  InProcessEventBus,
  newInternalEvent,
  newPublicEvent,
  type OutboxEvent,
  type PublicEvent,
  publicEventBatchHandler,
  publicEventHandler,
  type ReceivedPublicEvent,
} from '../src';

const tenant = { accountId: 'acct_1', livemode: false };
const customer = { id: 'cus_1', livemode: false, name: 'Ada', email: 'ada@example.com', created: 1n, updated: 1n };
const message = (topic: string, event: OutboxEvent): BusMessage => ({ topic, key: event.aggregateId, value: JSON.stringify(encodeEvent(event)), headers: { 'event-id': event.id, 'event-type': event.type } });

describe('event handlers', () => {
  it('hand a consumer only the integration events it handles, decoded with their schema; others pass quietly', async () => {
    const bus = new InProcessEventBus();
    const seen: InternalEvent[] = [];
    const warnings: string[] = [];
    await bus.subscribe('g', ['internal'], internalEventHandler('test', createRegistry(subscriptionEventsV1.CustomerCreatedSchema), async (event) => {
      seen.push(event);
      return 'processed';
    }, { warn: (text) => warnings.push(text) }));
    const created = newInternalEvent(tenant, 'cus_1', subscriptionEventsV1.CustomerCreatedSchema, { customer }, new Date());
    const deleted = newInternalEvent(tenant, 'cus_1', subscriptionEventsV1.CustomerDeletedSchema, { customer: { ...customer, deletedAt: 2n } }, new Date());
    bus.open();
    await bus.publish([message('internal', deleted), message('internal', created)]);
    expect(seen.map((event) => event.id)).toEqual([created.id]);
    expect(warnings).toEqual([]);
    expect(anyUnpack(seen[0].payload!, subscriptionEventsV1.CustomerCreatedSchema)!.customer).toMatchObject({ id: 'cus_1', name: 'Ada' });
  });

  it('drop a message that does not decode instead of redelivering it forever, but redeliver when the handler fails', async () => {
    const bus = new InProcessEventBus();
    const seen: PublicEvent[] = [];
    const warnings: string[] = [];
    let failNext = false;
    await bus.subscribe('g', ['public'], publicEventHandler('test', async (event) => {
      if (failNext) throw new Error('database down');
      seen.push(event);
      return 'processed';
    }, { warn: (text) => warnings.push(text) }));
    bus.open();
    await bus.publish([{ topic: 'public', key: 'k', value: '{"id": 42', headers: {} }]);
    expect(warnings).toEqual(['event dropped: it does not decode']);
    const event = newPublicEvent(tenant, 'customer.created', 'cus_1', { object: { id: 'cus_1' } }, new Date());
    failNext = true;
    await expect(bus.publish([message('public', event)])).rejects.toThrow('database down');
    failNext = false;
    await bus.publish([message('public', event)]);
    expect(seen.map((received) => [received.id, received.type, received.data])).toEqual([[event.id, 'customer.created', { object: { id: 'cus_1' } }]]);
  });

  it('hand a batch consumer every decodable event of a publish in one call, and the whole batch again when it fails', async () => {
    const bus = new InProcessEventBus();
    const calls: string[][] = [];
    const warnings: string[] = [];
    let failNext = true;
    await bus.subscribeBatch('g', ['public'], publicEventBatchHandler('test', async (received: ReceivedPublicEvent[]) => {
      calls.push(received.map(({ event }) => event.id));
      if (failNext) {
        failNext = false;
        throw new Error('database down');
      }
      return received.map(() => 'processed' as const);
    }, { warn: (text) => warnings.push(text) }));
    const events = ['cus_1', 'cus_2', 'cus_3'].map((id) => newPublicEvent(tenant, 'customer.created', id, { object: { id } }, new Date()));
    const batch = [message('public', events[0]), { topic: 'public', key: 'k', value: '{"id": 42', headers: {} }, message('public', events[1]), message('public', events[2])];
    bus.open();
    await expect(bus.publish(batch)).rejects.toThrow('database down');
    await bus.publish(batch);
    const ids = events.map((event) => event.id);
    expect(calls).toEqual([ids, ids]);
    expect(warnings).toEqual(['event dropped: it does not decode', 'event dropped: it does not decode']);
  });

  it('hand a batch consumer of integration events only the types it handles, never decoding the others; eachInTurn handles them in order and a batch cut short comes again whole', async () => {
    const bus = new InProcessEventBus();
    const handled: string[] = [];
    const warnings: string[] = [];
    let failOn: string | undefined;
    await bus.subscribeBatch('g', ['internal'], internalEventBatchHandler('test', createRegistry(subscriptionEventsV1.CustomerCreatedSchema), eachInTurn(async (event: InternalEvent) => {
      if (event.aggregateId === failOn) throw new Error('database down');
      handled.push(event.aggregateId);
      return 'processed';
    }), { warn: (text) => warnings.push(text) }));
    const created = (id: string) => newInternalEvent(tenant, id, subscriptionEventsV1.CustomerCreatedSchema, { customer: { ...customer, id } }, new Date());
    // A type it does not handle, its body not even JSON: skipped by its header, so never decoded (no warning).
    const unhandled: BusMessage = { topic: 'internal', key: 'k', value: 'not json', headers: { 'event-type': subscriptionEventsV1.CustomerDeletedSchema.typeName } };
    const batch = [message('internal', created('cus_1')), unhandled, message('internal', created('cus_2')), message('internal', created('cus_3'))];
    failOn = 'cus_2';
    bus.open();
    await expect(bus.publish(batch)).rejects.toThrow('database down');
    expect(handled).toEqual(['cus_1']);
    failOn = undefined;
    await bus.publish(batch);
    // Redelivered whole: cus_1 comes again (its own inbox claim makes it a duplicate in a real consumer).
    expect(handled).toEqual(['cus_1', 'cus_1', 'cus_2', 'cus_3']);
    expect(warnings).toEqual([]);
  });
});
