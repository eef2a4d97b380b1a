-- recur:no-transaction
-- Built without blocking writes; the migrator runs each statement on its own.
-- CreateIndex
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_endpoints_account_id_livemode_created_at_id_idx" ON "webhook_endpoints"("account_id", "livemode", "created_at" DESC, "id" DESC);


-- CreateIndex
CREATE INDEX CONCURRENTLY IF NOT EXISTS "deliveries_endpoint_id_created_at_id_idx" ON "deliveries"("endpoint_id", "created_at" DESC, "id" DESC);
