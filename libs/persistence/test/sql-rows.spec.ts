import { createTestDatabase } from '@recur/testing';
import { Pool } from 'pg';
import { fromSqlRow, insertRowsStatement, updateRowsStatement } from '../src';

/** The set-based row writes against a real PostgreSQL: every value typed by the table's own column. */
jest.setTimeout(30_000);

let pool: Pool;

beforeAll(async () => {
  pool = new Pool({ connectionString: await createTestDatabase('persistence_rows'), max: 2 });
  await pool.query(`
    CREATE TABLE lines (
      id text PRIMARY KEY, invoice_id text NOT NULL, amount bigint NOT NULL, due_date date, period_start timestamptz(3),
      details jsonb, note text, position int NOT NULL DEFAULT 7)`);
});
afterEach(() => pool.query('TRUNCATE lines'));
afterAll(() => pool.end());

const rows = async () => (await pool.query('SELECT * FROM lines ORDER BY id')).rows.map((row) => fromSqlRow<Record<string, unknown>>(row));

test('inserts every field of every row in one statement: bigints, dates, JSON, nulls; a column no row names keeps its default', async () => {
  const start = new Date('2026-11-26T10:00:00.123Z');
  const { sql, values } = insertRowsStatement('lines', [
    { id: 'il_1', invoiceId: 'in_1', amount: 9_007_199_254_740_993n, dueDate: new Date('2026-12-01T00:00:00Z'), periodStart: start, details: { metric: 'api_calls', tiers: [1, 2] }, note: null },
    { id: 'il_2', invoiceId: 'in_1', amount: -250n, dueDate: null, periodStart: null, details: null, note: 'credit' },
  ]);
  await pool.query(sql, values);
  expect(await rows()).toEqual([
    { id: 'il_1', invoiceId: 'in_1', amount: '9007199254740993', dueDate: new Date('2026-12-01T00:00:00Z'), periodStart: start, details: { metric: 'api_calls', tiers: [1, 2] }, note: null, position: 7 },
    { id: 'il_2', invoiceId: 'in_1', amount: '-250', dueDate: null, periodStart: null, details: null, note: 'credit', position: 7 },
  ]);
});

test('an ON CONFLICT suffix applies to the whole batch, and RETURNING answers in the rows\' order', async () => {
  await pool.query("INSERT INTO lines (id, invoice_id, amount) VALUES ('il_2', 'in_0', 1)");
  const { sql, values } = insertRowsStatement('lines', ['il_3', 'il_2', 'il_1'].map((id) => ({ id, invoiceId: 'in_1', amount: 5n })), 'ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id RETURNING id, invoice_id');
  expect((await pool.query(sql, values)).rows).toEqual([
    { id: 'il_3', invoice_id: 'in_1' },
    { id: 'il_2', invoice_id: 'in_0' },
    { id: 'il_1', invoice_id: 'in_1' },
  ]);
});

test('updates each row by its key, the columns it carries and no other', async () => {
  await pool.query("INSERT INTO lines (id, invoice_id, amount, note) VALUES ('il_1', 'in_1', 1, 'kept'), ('il_2', 'in_1', 2, 'kept'), ('il_3', 'in_1', 3, 'untouched')");
  const { sql, values } = updateRowsStatement('lines', [{ id: 'il_1', amount: 10n, details: { a: 1 } }, { id: 'il_2', amount: 20n, details: null }]);
  await pool.query(sql, values);
  expect((await rows()).map(({ id, amount, details, note }) => ({ id, amount, details, note }))).toEqual([
    { id: 'il_1', amount: '10', details: { a: 1 }, note: 'kept' },
    { id: 'il_2', amount: '20', details: null, note: 'kept' },
    { id: 'il_3', amount: '3', details: null, note: 'untouched' },
  ]);
});
