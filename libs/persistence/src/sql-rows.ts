/**
 * Set-based writes of whole rows in one statement, for the hot batch paths that skip the ORM
 * (the billing clock's saves, invoicing's batch raising). A row is a Prisma-shaped object — its
 * fields in camelCase, as the ORM reads and writes them — and its columns are those fields in
 * snake_case (every model maps its fields so: `customerId @map("customer_id")`). The rows travel
 * as one JSON array and `jsonb_populate_recordset` types each value by the table's own column,
 * so a field added to a model is written with no change here.
 */

/**
 * Converts a name once and remembers it: the names are the models' fields and columns, a small
 * fixed set, and a batch converts each of them for every row (the regular expression was a tenth
 * of the billing clock's CPU in bench:renewals).
 */
function remembered(convert: (name: string) => string): (name: string) => string {
  const known = new Map<string, string>();
  return (name) => {
    let converted = known.get(name);
    if (converted === undefined) known.set(name, (converted = convert(name)));
    return converted;
  };
}

/** `customerId` → `customer_id`. */
export const columnOfField = remembered((field) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`));

/** `customer_id` → `customerId`. */
const fieldOfColumn = remembered((column) => column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()));

/** A row read with plain `pg` (snake_case columns) in the shape Prisma reads it (camelCase fields). */
export function fromSqlRow<Row>(row: Record<string, unknown>): Row {
  const fields: Record<string, unknown> = {};
  for (const column of Object.keys(row)) fields[fieldOfColumn(column)] = row[column];
  return fields as Row;
}

/** The columns the rows set (the union of their fields, in first-seen order). */
function columnsOf(rows: readonly Record<string, unknown>[]): string[] {
  const fields = new Set<string>();
  for (const row of rows) for (const field of Object.keys(row)) fields.add(field);
  return [...fields].map(columnOfField);
}

/** The rows as the JSON array a statement below takes: keys as columns, bigints as text, undefined left out. */
function rowsJson(rows: readonly Record<string, unknown>[]): string {
  return JSON.stringify(
    rows.map((row) => {
      const columns: Record<string, unknown> = {};
      for (const field of Object.keys(row)) columns[columnOfField(field)] = row[field];
      return columns;
    }),
    (_, value: unknown) => (typeof value === 'bigint' ? value.toString() : value),
  );
}

/** A statement and its parameters. */
export interface SqlStatement {
  sql: string;
  values: unknown[];
}

/** INSERT of every row, in their order, in one statement; `suffix` e.g. `ON CONFLICT DO NOTHING`. */
export function insertRowsStatement(table: string, rows: readonly Record<string, unknown>[], suffix = ''): SqlStatement {
  const columns = columnsOf(rows).join(', ');
  return {
    sql: `INSERT INTO ${table} (${columns})
      SELECT ${columns} FROM ROWS FROM (jsonb_populate_recordset(NULL::${table}, $1::jsonb)) WITH ORDINALITY AS row
      ORDER BY row.ordinality ${suffix}`,
    values: [rowsJson(rows)],
  };
}

/** UPDATE of every row by its `key` column (default `id`), each column the row carries set to its value, in one statement. */
export function updateRowsStatement(table: string, rows: readonly Record<string, unknown>[], key = 'id'): SqlStatement {
  const columns = columnsOf(rows).filter((column) => column !== key);
  return {
    sql: `UPDATE ${table} AS target SET ${columns.map((column) => `${column} = row.${column}`).join(', ')}
      FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb) AS row WHERE target.${key} = row.${key}`,
    values: [rowsJson(rows)],
  };
}
