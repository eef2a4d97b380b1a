-- AlterTable
ALTER TABLE "refunds" ADD COLUMN     "credit_invoice_id" TEXT;
