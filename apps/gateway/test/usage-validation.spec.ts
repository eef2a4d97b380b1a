import { USAGE_BATCH_MAX, USAGE_QUANTITY_MAX, UNIX_SECONDS_MAX } from '@recur/vocabulary';
import { createValidationPipe } from '../src/http/validation';
import { RecordUsageBatchDto, RecordUsageDto } from '../src/usage/usage.dto';
import { validRecordUsageBatchBody, validRecordUsageBody } from '../src/usage/usage.validation';

/**
 * The usage bodies' hand-written check decides exactly what class-validator decides: on every
 * body below (each field's edge values, and thousands of random mixes of them) it accepts
 * what class-validator accepts, with the same value, and refuses what it refuses.
 */
const pipe = createValidationPipe();
const classValidator = async (body: unknown, metatype: new () => object): Promise<unknown> => {
  try {
    return JSON.parse(JSON.stringify(await pipe.transform(body, { type: 'body', metatype })));
  } catch {
    return undefined;
  }
};

const VALUES: Record<string, unknown[]> = {
  subscription: ['sub_123', ' ', '', 'x'.repeat(100), 'x'.repeat(101), ' sub ', 'é', 42, null, true, ['sub_1'], { id: 'sub_1' }, undefined],
  metric_name: ['api_calls', 'a', 'a.b-c_9', 'A', '9a', '', 'a'.repeat(100), 'a'.repeat(101), 'api calls', 'api_calls\n', 7, null, [], undefined],
  quantity: [0, 1, 40, USAGE_QUANTITY_MAX, USAGE_QUANTITY_MAX + 1, -1, 1.5, -0.5, '1', 1e21, Number.NaN, Infinity, null, true, [1], undefined],
  idempotency_key: ['k', 'req-1', '~!', 'k'.repeat(255), 'k'.repeat(256), '', 'has space', 'é', 'tab\t', 5, null, undefined],
  timestamp: [1, 1_795_643_234, UNIX_SECONDS_MAX, UNIX_SECONDS_MAX + 1, 0, -1, 1.5, '1795643234', null, false, undefined],
};
const VALID = { subscription: 'sub_1', metric_name: 'api_calls', quantity: 3, idempotency_key: 'k-1' };

/** A deterministic pseudo-random sequence (the corpus is the same on every run). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}
const pick = <T>(next: () => number, values: T[]): T => values[Math.floor(next() * values.length)];
const withField = (record: object, field: string, value: unknown) => {
  const copy: Record<string, unknown> = { ...record };
  if (value === undefined) delete copy[field];
  else copy[field] = value;
  return copy;
};

function recordCorpus(): unknown[] {
  const corpus: unknown[] = [VALID, { ...VALID, timestamp: 1_795_643_234 }, {}, null, [], 'body', 3, { ...VALID, extra: 1 }, { ...VALID, timestamp: undefined }, Object.create(null)];
  for (const [field, values] of Object.entries(VALUES)) for (const value of values) corpus.push(withField(VALID, field, value));
  const next = random(13);
  for (let i = 0; i < 3000; i++) {
    let record: object = {};
    for (const [field, values] of Object.entries(VALUES)) record = withField(record, field, next() < 0.7 && field !== 'timestamp' ? (VALID as Record<string, unknown>)[field] : pick(next, values));
    if (next() < 0.03) record = { ...record, [pick(next, ['extra', 'Quantity', '__proto__x'])]: 1 };
    corpus.push(record);
  }
  return corpus;
}

describe('usage bodies: the hand-written check and class-validator', () => {
  it('decide alike on single records', async () => {
    for (const body of recordCorpus()) {
      const expected = await classValidator(body, RecordUsageDto);
      const fast = validRecordUsageBody(body);
      expect([body, fast === undefined ? undefined : JSON.parse(JSON.stringify(fast))]).toEqual([body, expected]);
    }
  });

  it('decide alike on batches', async () => {
    const records = recordCorpus();
    const next = random(7);
    const batches: unknown[] = [
      { records: [VALID] }, { records: [] }, { records: Array(USAGE_BATCH_MAX).fill(VALID) }, { records: Array(USAGE_BATCH_MAX + 1).fill(VALID) },
      { records: VALID }, { records: null }, {}, { records: [VALID], extra: true }, { records: [VALID, null] }, { records: [VALID, 'x'] }, { records: [[VALID]] }, { records: [VALID, []] }, { records: [VALID, { ...VALID, quantity: USAGE_QUANTITY_MAX + 1 }] }, [VALID], null,
    ];
    for (let i = 0; i < 400; i++) batches.push({ records: Array.from({ length: 1 + Math.floor(next() * 4) }, () => (next() < 0.8 ? VALID : pick(next, records))) });
    for (const body of batches) {
      const expected = await classValidator(body, RecordUsageBatchDto);
      const fast = validRecordUsageBatchBody(body);
      expect([body, fast === undefined ? undefined : JSON.parse(JSON.stringify(fast))]).toEqual([body, expected]);
    }
  });

  it('refuse a record that is an array (of records or of nothing) with 400 on `records`, as class-validator answers it', async () => {
    // ValidateNested({ each: true }) alone validates the items of an array item as records: it took `[[record]]`.
    for (const body of [{ records: [[VALID]] }, { records: [VALID, [VALID]] }, { records: [[]] }, { records: [[VALID, VALID]] }]) {
      expect(validRecordUsageBatchBody(body)).toBeUndefined();
      const refusal = await pipe.transform(body, { type: 'body', metatype: RecordUsageBatchDto }).then(() => undefined, (error: unknown) => error);
      expect(refusal).toMatchObject({ status: 400, code: 'parameter_invalid', param: 'records' });
    }
  });
});
