-- recur:no-transaction
-- Built without blocking writes; the migrator runs each statement on its own.

-- CreateIndex (by hand: Prisma cannot declare a partial index). Coupon and promotion-code pages,
-- by offset or by cursor (docs/development.md#list-paging), filter `deleted_at IS NULL` and order
-- by `created_at DESC, id DESC`; the indexes with deleted_at in the middle cannot give that order
-- (IS NULL is no equality to the planner), these partial ones walk straight from the cursor.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "coupons_live_newest_first_idx" ON "coupons" ("account_id", "livemode", "created_at" DESC, "id" DESC) WHERE "deleted_at" IS NULL;

CREATE INDEX CONCURRENTLY IF NOT EXISTS "promotion_codes_live_newest_first_idx" ON "promotion_codes" ("account_id", "livemode", "created_at" DESC, "id" DESC) WHERE "deleted_at" IS NULL;
