import { createTestDatabase } from '@recur/testing';
import fc from 'fast-check';
import { Client, escapeLiteral } from 'pg';
import { sqlLiteral } from '../src';

/**
 * sqlLiteral against a real PostgreSQL: whatever the value, the literal reads back as exactly that
 * value, and never as SQL of its own (statements sent without parameters carry request ids and
 * messages that callers chose).
 */
jest.setTimeout(60_000);

let client: Client;

beforeAll(async () => {
  client = new Client({ connectionString: await createTestDatabase('sql_literal') });
  await client.connect();
});
afterAll(() => client.end());

/** The value a literal reads back as, through a multi-statement simple query, as scripts are sent. */
async function readBack(literal: string): Promise<unknown> {
  const results = (await client.query(`SELECT 1;\nSELECT ${literal} AS value;\nSELECT 2`)) as unknown as { rows: { value: unknown }[] }[];
  expect(results).toHaveLength(3);
  return results[1].rows[0].value;
}

/** Text PostgreSQL can hold (no NUL), rich in what quoting must survive. */
const awkwardText = fc.string({ unit: fc.oneof(fc.constantFrom("'", '\\', '"', ';', '-', '$', '\n', 'E', 'x', ' '), fc.string({ unit: 'grapheme', maxLength: 1 })), maxLength: 40 })
  .filter((text) => !text.includes('\u0000'));

describe('sqlLiteral', () => {
  it('reads back every string exactly, quotes, backslashes and other scripts included', async () => {
    await fc.assert(fc.asyncProperty(awkwardText, async (text) => {
      expect(await readBack(sqlLiteral(text))).toBe(text);
    }), { numRuns: 300 });
  });

  it("writes a string exactly as the driver's own escaping does", () => {
    fc.assert(fc.property(awkwardText, (text) => {
      expect(sqlLiteral(text)).toBe(escapeLiteral(text));
    }), { numRuns: 2_000 });
  });

  it('reads back bytes, dates, booleans, numbers and null', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), async (bytes) => {
      expect(Buffer.compare(await readBack(sqlLiteral(bytes)) as Buffer, Buffer.from(bytes))).toBe(0);
    }), { numRuns: 100 });
    const at = new Date('2026-11-27T01:02:03.456Z');
    expect((await readBack(sqlLiteral(at)) as Date).getTime()).toBe(at.getTime());
    expect(await readBack(sqlLiteral(true))).toBe(true);
    expect(await readBack(sqlLiteral(false))).toBe(false);
    expect(await readBack(`${sqlLiteral(-42.5)}::float8`)).toBe(-42.5);
    expect(await readBack(`${sqlLiteral(null)}::text`)).toBeNull();
  });

  it('refuses numbers that have no literal', () => {
    expect(() => sqlLiteral(Number.NaN)).toThrow(RangeError);
    expect(() => sqlLiteral(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
