-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "collection_method" TEXT NOT NULL DEFAULT 'send_invoice';
