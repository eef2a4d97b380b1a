-- CreateTable
CREATE TABLE "usage_billings" (
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "billing_key" TEXT NOT NULL,
    "metric_name" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "quantity" BIGINT NOT NULL,
    "billed_before" BIGINT NOT NULL,
    "late" BOOLEAN NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_billings_pkey" PRIMARY KEY ("account_id","livemode","subscription_id","billing_key","metric_name","period_start")
);

-- CreateIndex
CREATE INDEX "usage_billings_account_id_livemode_subscription_id_period_s_idx" ON "usage_billings"("account_id", "livemode", "subscription_id", "period_start");
