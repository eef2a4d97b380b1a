-- recur:no-transaction
-- Partial refunds: an invoice may have several refunds, succeeded or under way, as long as their
-- sum stays within what was paid. The payments service decides each under the invoice's lock
-- (docs/api/refunds.md#partial-refunds), so the one-refund-per-invoice index goes. A release that
-- knew only full refunds still finds an active refund and refuses a second one: no rule loosens
-- for it. Dropped without blocking writes; the migrator runs each statement on its own.

-- DropIndex
DROP INDEX CONCURRENTLY IF EXISTS "refunds_one_per_invoice_refund";
