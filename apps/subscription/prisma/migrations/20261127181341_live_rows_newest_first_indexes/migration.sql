-- recur:no-transaction
-- Built without blocking writes; the migrator runs each statement on its own.

-- CreateIndex (by hand: Prisma cannot declare a partial index). A page of customers, by offset or
-- by cursor (docs/development.md#list-paging), filters `deleted_at IS NULL` and orders by
-- `created_at DESC, id DESC`. IS NULL is no equality to the planner, so the index with deleted_at
-- in the middle cannot give that order, and the page was a sequential or bitmap scan plus a sort
-- of the whole account; this partial index walks straight from the cursor.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "customers_live_newest_first_idx" ON "customers" ("account_id", "livemode", "created_at" DESC, "id" DESC) WHERE "deleted_at" IS NULL;
