-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "customer_details" JSONB;
