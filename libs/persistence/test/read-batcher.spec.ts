import { ReadBatcher } from '../src/read-batcher';

/** A readMany whose calls the test ends by hand, recording the keys each was asked. */
function manualReads() {
  const calls: { keys: number[]; end: (error?: Error) => void }[] = [];
  const readMany = (keys: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ keys, end: (error) => (error ? reject(error) : resolve(keys.map((key) => `value ${key}`))) });
    });
  return { calls, readMany };
}

/** Lets the promise callbacks of an ended read run (its answers, then the next send). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadBatcher', () => {
  it('sends a read alone at once, and those that arrive while the reads in flight are at their limit together, each answered its own value', async () => {
    const { calls, readMany } = manualReads();
    const batcher = new ReadBatcher(readMany, { maxInFlight: 1, maxBatch: 100 });
    const first = batcher.read(1);
    expect(calls.map((call) => call.keys)).toEqual([[1]]);
    const later = [batcher.read(2), batcher.read(3), batcher.read(4)];
    expect(calls).toHaveLength(1);
    calls[0].end();
    await expect(first).resolves.toBe('value 1');
    await settled();
    expect(calls.map((call) => call.keys)).toEqual([[1], [2, 3, 4]]);
    calls[1].end();
    await expect(Promise.all(later)).resolves.toEqual(['value 2', 'value 3', 'value 4']);
  });

  it('keeps up to maxInFlight reads in flight and batches of at most maxBatch', async () => {
    const { calls, readMany } = manualReads();
    const batcher = new ReadBatcher(readMany, { maxInFlight: 2, maxBatch: 2 });
    const reads = [1, 2, 3, 4, 5].map((key) => batcher.read(key));
    expect(calls.map((call) => call.keys)).toEqual([[1], [2]]);
    calls[0].end();
    await settled();
    expect(calls.map((call) => call.keys)).toEqual([[1], [2], [3, 4]]);
    calls[1].end();
    await settled();
    expect(calls.map((call) => call.keys)).toEqual([[1], [2], [3, 4], [5]]);
    calls[2].end();
    calls[3].end();
    await expect(Promise.all(reads)).resolves.toEqual(['value 1', 'value 2', 'value 3', 'value 4', 'value 5']);
  });

  it("fails every read of a failed statement, and the next reads go on", async () => {
    const { calls, readMany } = manualReads();
    const batcher = new ReadBatcher(readMany, { maxInFlight: 1, maxBatch: 100 });
    const first = batcher.read(1);
    const [second, third] = [batcher.read(2), batcher.read(3)];
    calls[0].end();
    await first;
    await settled();
    calls[1].end(new Error('connection lost'));
    await expect(second).rejects.toThrow('connection lost');
    await expect(third).rejects.toThrow('connection lost');
    await settled();
    const next = batcher.read(4);
    calls[2].end();
    await expect(next).resolves.toBe('value 4');
  });
});
