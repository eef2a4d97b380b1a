-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "credit_refund_invoice_id" TEXT;
