-- recur:no-transaction
-- An invoice has a credit note per refund, partial or full: the one-per-invoice unique index goes,
-- after its plain replacement is built (listing an invoice's credit notes keeps an index). A
-- release that knew only full refunds refuses a second refund of a refunded invoice by its status,
-- not by this index. Built and dropped without blocking writes; the migrator runs each statement
-- on its own.

-- CreateIndex
CREATE INDEX CONCURRENTLY IF NOT EXISTS "credit_notes_invoice_id_idx" ON "credit_notes"("invoice_id");

-- DropIndex
DROP INDEX CONCURRENTLY IF EXISTS "credit_notes_invoice_id_key";
