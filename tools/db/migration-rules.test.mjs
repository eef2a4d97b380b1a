import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mappedColumns, removals } from './migration-rules.mjs';

describe('removals: what a migration drops or renames away', () => {
  it('finds dropped and renamed columns and tables, in every spelling Prisma and people write', () => {
    const sql = `-- a comment: DROP TABLE "not_this"
ALTER TABLE "plans" DROP COLUMN "request_id";
ALTER TABLE "plans" DROP COLUMN IF EXISTS "old", ADD COLUMN "x" TEXT;
ALTER TABLE "addons" DROP "legacy";
ALTER TABLE "coupons" RENAME COLUMN "name" TO "title";
ALTER TABLE "coupons" RENAME TO "discounts";
DROP TABLE IF EXISTS "a", "b" CASCADE;`;
    assert.deepEqual(removals(sql), [
      { table: 'plans', column: 'request_id', verb: 'drops' },
      { table: 'plans', column: 'old', verb: 'drops' },
      { table: 'addons', column: 'legacy', verb: 'drops' },
      { table: 'coupons', column: 'name', verb: 'renames' },
      { table: 'coupons', verb: 'renames' },
      { table: 'a', verb: 'drops' },
      { table: 'b', verb: 'drops' },
    ]);
  });

  it('leaves alone what removes no column: constraints, defaults, NOT NULL, indexes', () => {
    const sql = `ALTER TABLE "plans" DROP CONSTRAINT "plans_pkey";
ALTER TABLE "plans" ALTER COLUMN "status" DROP DEFAULT;
ALTER TABLE "plans" ALTER COLUMN "status" DROP NOT NULL;
DROP INDEX "plans_status_idx";`;
    assert.deepEqual(removals(sql), []);
  });
});

describe('mappedColumns: the columns a Prisma schema reads', () => {
  it('maps tables and columns through @@map and @map, and leaves relation fields out', () => {
    const schema = `model Plan {
  id        String   @id
  accountId String   @map("account_id")
  /// Documented field.
  tiers     PlanTier[]
  @@index([accountId])
  @@map("plans")
}

model PlanTier {
  id     String @id
  plan   Plan   @relation(fields: [planId], references: [id])
  planId String @map("plan_id")
}
`;
    assert.deepEqual(mappedColumns(schema), new Map([
      ['plans', new Set(['id', 'account_id'])],
      ['PlanTier', new Set(['id', 'plan_id'])],
    ]));
  });
});
