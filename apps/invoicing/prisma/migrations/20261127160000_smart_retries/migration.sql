-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "payment_attempt_count" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "payment_retry_at" TIMESTAMPTZ(3)[] DEFAULT ARRAY[]::TIMESTAMPTZ(3)[];


-- AlterTable
ALTER TABLE "dunning_schedules" ADD COLUMN     "payment_retries" JSONB;
