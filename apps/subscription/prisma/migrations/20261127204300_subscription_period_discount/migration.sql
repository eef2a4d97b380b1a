-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "period_discount" JSONB;
