-- CreateIndex (by hand: Prisma cannot declare a partial index). The billing clock claims invoice
-- requests and the other steps apart (`status = 'pending' AND kind = 'invoice'`, `… kind <> 'invoice'`,
-- ORDER BY due_at): each walks only its own kind's pending rows, so invoice requests are found
-- beside a backlog of renewals due before them.
CREATE INDEX "billing_jobs_pending_invoices_due_at_idx" ON "billing_jobs" ("due_at") WHERE "status" = 'pending' AND "kind" = 'invoice';
CREATE INDEX "billing_jobs_pending_other_steps_due_at_idx" ON "billing_jobs" ("due_at") WHERE "status" = 'pending' AND "kind" <> 'invoice';
