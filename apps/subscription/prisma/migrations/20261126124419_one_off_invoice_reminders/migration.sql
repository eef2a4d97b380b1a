-- AlterTable
ALTER TABLE "billing_jobs" ALTER COLUMN "subscription_id" DROP NOT NULL;
