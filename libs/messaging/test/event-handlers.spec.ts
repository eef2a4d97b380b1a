import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { createRegistry } from '@bufbuild/protobuf';
import { subscriptionEventsV1 } from '@recur/contracts';
import {
  type BusMessage,
  encodeEvent,
  type InternalEvent,
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
    await expect(bus.publish(batch)).rejects.toThrow('database down');
    await bus.publish(batch);
    const ids = events.map((event) => event.id);
    expect(calls).toEqual([ids, ids]);
    expect(warnings).toEqual(['event dropped: it does not decode', 'event dropped: it does not decode']);
  });
});
