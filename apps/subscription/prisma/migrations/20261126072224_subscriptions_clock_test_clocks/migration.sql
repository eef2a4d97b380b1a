-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "test_clock_id" TEXT;

-- CreateTable
CREATE TABLE "subscriptions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "customer_id" TEXT NOT NULL,
    "plan_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "billing_interval" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "price_snapshot" JSONB NOT NULL,
    "cycle_anchor" TIMESTAMPTZ(3) NOT NULL,
    "cycle_index" INTEGER NOT NULL,
    "current_period_start" TIMESTAMPTZ(3) NOT NULL,
    "current_period_end" TIMESTAMPTZ(3) NOT NULL,
    "trial_start" TIMESTAMPTZ(3),
    "trial_end" TIMESTAMPTZ(3),
    "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
    "cancelled_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    "paused_at" TIMESTAMPTZ(3),
    "resume_at" TIMESTAMPTZ(3),
    "billing_cycles" INTEGER,
    "periods_billed" INTEGER NOT NULL DEFAULT 0,
    "reactivated_from" TEXT,
    "test_clock_id" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "billing_jobs" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "step_key" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "run_at" TIMESTAMPTZ(3) NOT NULL,
    "due_at" TIMESTAMPTZ(3),
    "lease_until" TIMESTAMPTZ(3),
    "test_clock_id" TEXT,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "result" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "billing_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "test_clocks" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "frozen_time" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "test_clocks_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "subscriptions_account_id_livemode_created_at_id_idx" ON "subscriptions"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "subscriptions_account_id_livemode_customer_id_idx" ON "subscriptions"("account_id", "livemode", "customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "billing_jobs_step_key_key" ON "billing_jobs"("step_key");

-- CreateIndex
CREATE INDEX "billing_jobs_status_due_at_idx" ON "billing_jobs"("status", "due_at");

-- CreateIndex
CREATE INDEX "billing_jobs_test_clock_id_status_run_at_idx" ON "billing_jobs"("test_clock_id", "status", "run_at");

-- CreateIndex
CREATE INDEX "billing_jobs_subscription_id_kind_status_idx" ON "billing_jobs"("subscription_id", "kind", "status");

-- CreateIndex
CREATE INDEX "test_clocks_account_id_livemode_created_at_id_idx" ON "test_clocks"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- At most one pending lifecycle step (end_trial, renew, resume) per subscription: the clock
-- moves each subscription through one step at a time, so its moves happen in order.
CREATE UNIQUE INDEX "billing_jobs_one_pending_lifecycle_step" ON "billing_jobs"("subscription_id") WHERE "status" = 'pending' AND "kind" <> 'invoice';
