-- Partial refunds (docs/api/refunds.md#partial-refunds): what refunds gave back of amount_paid.
-- Rows refunded before this column existed keep 0 and read as refunded in full (invoice.mapper.ts).

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "amount_refunded" BIGINT NOT NULL DEFAULT 0;
