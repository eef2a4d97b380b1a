-- Dunning reminders are billing_jobs rows of kind `dunning` (several pending per subscription, one per
-- reminder): the one-pending-lifecycle-step index leaves them out, as it leaves out invoices.
DROP INDEX "billing_jobs_one_pending_lifecycle_step";
CREATE UNIQUE INDEX "billing_jobs_one_pending_lifecycle_step" ON "billing_jobs"("subscription_id") WHERE "status" = 'pending' AND "kind" NOT IN ('invoice', 'dunning');
