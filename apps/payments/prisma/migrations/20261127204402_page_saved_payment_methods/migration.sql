-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "customer_id" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "save_method_source" TEXT;
