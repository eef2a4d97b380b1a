-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "collection_method" TEXT NOT NULL DEFAULT 'send_invoice';
