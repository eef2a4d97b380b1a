-- AlterTable
ALTER TABLE "usage_billings" ADD COLUMN     "billing_interval" TEXT;
