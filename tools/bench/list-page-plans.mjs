#!/usr/bin/env node
// The plans PostgreSQL picks for a page of customers, by keyset cursor and by offset, against the
// customers index as it was (deleted_at in the middle) and the partial one that replaced it for
// pages (docs/development.md#list-paging). 200 000 customers (20 per millisecond, so created_at
// ties), 90 % in one account; a scratch database on RECUR_TEST_PG_ADMIN_URL, dropped at the end.
//   RECUR_TEST_PG_ADMIN_URL=… node tools/bench/list-page-plans.mjs
import pg from 'pg';

const PAGE = `SELECT * FROM customers WHERE account_id = 'acct_a' AND livemode = false AND deleted_at IS NULL`;
const ORDER = 'ORDER BY created_at DESC, id DESC LIMIT 101';
const QUERIES = {
  // What readListPage asks Prisma for: the bound on the first key, then the lexicographic step.
  keyset: `${PAGE} AND created_at <= $1 AND (created_at < $1 OR (created_at = $1 AND id < $2)) ${ORDER}`,
  'keyset without the first-key bound': `${PAGE} AND (created_at < $1 OR (created_at = $1 AND id < $2)) ${ORDER}`,
  'offset 10 000': `${PAGE} ${ORDER} OFFSET 10000`,
};
const INDEXES = {
  'deleted_at in the middle': 'CREATE INDEX ON customers (account_id, livemode, deleted_at, created_at DESC, id DESC)',
  'partial, WHERE deleted_at IS NULL': 'CREATE INDEX ON customers (account_id, livemode, created_at DESC, id DESC) WHERE deleted_at IS NULL',
};

const admin = new pg.Client({ connectionString: process.env.RECUR_TEST_PG_ADMIN_URL });
await admin.connect();
for (const [indexName, createIndex] of Object.entries(INDEXES)) {
  const database = `list_page_plans_${process.pid}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(process.env.RECUR_TEST_PG_ADMIN_URL);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query('CREATE TABLE customers (id text PRIMARY KEY, account_id text, livemode boolean, deleted_at timestamptz(3), created_at timestamptz(3), name text)');
    await client.query(createIndex);
    await client.query(`INSERT INTO customers SELECT 'cus_' || lpad(g::text, 8, '0'), CASE WHEN g % 10 = 0 THEN 'acct_other' ELSE 'acct_a' END, false, NULL,
      timestamptz '2026-01-01' + (g / 20) * interval '1 millisecond', 'n' FROM generate_series(1, 200000) g`);
    await client.query('ANALYZE customers');
    for (const position of [1_000, 150_000]) {
      const cursor = (await client.query(`SELECT created_at, id FROM customers WHERE account_id = 'acct_a' ORDER BY created_at DESC, id DESC OFFSET ${position} LIMIT 1`)).rows[0];
      for (const [queryName, sql] of Object.entries(QUERIES)) {
        if (queryName === 'offset 10 000' && position !== 1_000) continue;
        const params = sql.includes('$1') ? [cursor.created_at, cursor.id] : [];
        const [plan] = (await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN'];
        const scans = [...JSON.stringify(plan.Plan).matchAll(/"Node Type":"((?:Index|Seq|Bitmap)[^"]*)"/g)].map((match) => match[1]);
        const buffers = (plan.Plan['Shared Hit Blocks'] ?? 0) + (plan.Plan['Shared Read Blocks'] ?? 0);
        const at = queryName.startsWith('offset') ? '' : ` at item ${position}`;
        console.log(`${indexName} | ${queryName}${at} | ${scans.join(' + ')} | ${plan['Execution Time'].toFixed(3)} ms | ${buffers} buffers`);
      }
    }
  } finally {
    await client.end();
    await admin.query(`DROP DATABASE ${database}`);
  }
}
await admin.end();
