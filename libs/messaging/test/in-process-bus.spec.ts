import { type BusMessage, InProcessEventBus } from '../src';

const message = (topic: string, id: string): BusMessage => ({ topic, key: id, value: '{}', headers: { 'event-id': id } });

/** Whether the promise has settled after every pending callback ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('the in-process bus', () => {
  it('holds a publish until the host opens it, so a group that subscribes after a producer published still gets the message', async () => {
    const bus = new InProcessEventBus();
    const early: string[] = [];
    const late: string[] = [];
    await bus.subscribe('producer-own', ['customers'], async (received) => void early.push(received.key));
    const publish = bus.publish([message('customers', 'cus_1')]);
    expect(await settled(publish)).toBe(false);
    // The consumer's app starts after the producer's relay published.
    await bus.subscribe('webhooks', ['customers'], async (received) => void late.push(received.key));
    bus.open();
    await publish;
    expect({ early, late }).toEqual({ early: ['cus_1'], late: ['cus_1'] });
  });

  it('refuses a group that subscribes once open: it would have missed what was published', async () => {
    const bus = new InProcessEventBus();
    bus.open();
    await expect(bus.subscribe('late', ['customers'], async () => undefined)).rejects.toThrow('consumer group late subscribed to the in-process bus after it was open');
  });

  it('fails a publish waiting to open, and every later one, once closed, so the relay keeps the rows', async () => {
    const bus = new InProcessEventBus();
    const delivered: string[] = [];
    await bus.subscribe('webhooks', ['customers'], async (received) => void delivered.push(received.key));
    const waiting = bus.publish([message('customers', 'cus_1')]);
    await bus.close();
    await expect(waiting).rejects.toThrow('closed before it opened');
    await expect(bus.publish([message('customers', 'cus_2')])).rejects.toThrow('the in-process bus is closed');
    expect(delivered).toEqual([]);
  });

  it('resolves a publish only after every group handled it, and fails it when one group fails', async () => {
    const bus = new InProcessEventBus();
    const handled: string[] = [];
    await bus.subscribe('first', ['customers'], async () => void handled.push('first'));
    await bus.subscribe('second', ['customers'], async () => {
      throw new Error('database down');
    });
    bus.open();
    await expect(bus.publish([message('customers', 'cus_1')])).rejects.toThrow('database down');
    expect(handled).toEqual(['first']);
  });
});
