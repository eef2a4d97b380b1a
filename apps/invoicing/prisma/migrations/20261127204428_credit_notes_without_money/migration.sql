-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "amount_credited" BIGINT NOT NULL DEFAULT 0;


-- AlterTable
ALTER TABLE "credit_notes" ADD COLUMN     "credited_to" TEXT NOT NULL DEFAULT 'refund',
ADD COLUMN     "memo" TEXT;
