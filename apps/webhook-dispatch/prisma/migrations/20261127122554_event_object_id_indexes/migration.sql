-- recur:no-transaction
-- Built without blocking writes; the migrator runs each statement on its own.

-- CreateIndex
CREATE INDEX CONCURRENTLY IF NOT EXISTS "events_account_id_livemode_object_id_created_idx" ON "events"("account_id", "livemode", "object_id", "created" DESC);
