-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "refund_id" TEXT,
ADD COLUMN     "unapplied_reason" TEXT;

-- AlterTable
ALTER TABLE "refunds" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'invoice';

-- One refund per invoice counts refunds of the invoice only: an automatic return of a payment the
-- invoice refused (kind unapplied_payment) is no refund of it. The narrower index is built before
-- the old one goes, so the rule holds throughout; rows of older replicas default to kind invoice.
CREATE UNIQUE INDEX "refunds_one_per_invoice_refund" ON "refunds"("account_id", "livemode", "invoice_id") WHERE "status" <> 'failed' AND "kind" = 'invoice';
DROP INDEX "refunds_one_per_invoice";

-- A payment is returned at most once, whoever decides it (the janitor's repeats after a crash).
CREATE UNIQUE INDEX "refunds_one_return_per_payment" ON "refunds"("payment_id") WHERE "kind" = 'unapplied_payment';
