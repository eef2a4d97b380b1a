/**
 * Reads by key that arrive while `maxInFlight` reads are already in flight wait, and go together
 * in one statement when one of those ends (DataLoader's batching, without its timer). Alone, a
 * read leaves at once; under load one statement answers many — one round trip, one socket write
 * and one plan instead of one each (docs/performance.md). A read's statement always starts after
 * the read was asked, so it sees every write committed before it: read-your-writes holds.
 */
export class ReadBatcher<Key, Value> {
  private waiting: { key: Key; resolve: (value: Value) => void; reject: (error: unknown) => void }[] = [];
  private inFlight = 0;

  /** `readMany` answers one value per key, in the keys' order. */
  constructor(
    private readonly readMany: (keys: Key[]) => Promise<Value[]>,
    private readonly limits: { maxInFlight: number; maxBatch: number } = { maxInFlight: 2, maxBatch: 100 },
  ) {}

  read(key: Key): Promise<Value> {
    return new Promise<Value>((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      this.send();
    });
  }

  private send(): void {
    while (this.inFlight < this.limits.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.limits.maxBatch);
      this.inFlight++;
      this.readMany(batch.map((read) => read.key))
        .then(
          (values) => batch.forEach((read, index) => read.resolve(values[index])),
          (error: unknown) => batch.forEach((read) => read.reject(error)),
        )
        .finally(() => {
          this.inFlight--;
          this.send();
        });
    }
  }
}
