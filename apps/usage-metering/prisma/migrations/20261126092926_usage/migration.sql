-- CreateTable
CREATE TABLE "subscription_views" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "current_period_start" TIMESTAMPTZ(3) NOT NULL,
    "current_period_end" TIMESTAMPTZ(3) NOT NULL,
    "previous_period_start" TIMESTAMPTZ(3),
    "previous_period_end" TIMESTAMPTZ(3),
    "period_learned_at" TIMESTAMPTZ(3) NOT NULL,
    "metered_components" JSONB NOT NULL,
    "on_test_clock" BOOLEAN NOT NULL,
    "source_updated" BIGINT NOT NULL,

    CONSTRAINT "subscription_views_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "usage_records" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "metric_name" TEXT NOT NULL,
    "quantity" BIGINT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "timestamp" TIMESTAMPTZ(3) NOT NULL,
    "timestamp_given" BOOLEAN NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_records_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "usage_totals" (
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "metric_name" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "total" BIGINT NOT NULL,

    CONSTRAINT "usage_totals_pkey" PRIMARY KEY ("account_id","livemode","subscription_id","metric_name","period_start")
);

-- CreateTable
CREATE TABLE "usage_limits" (
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "metric_name" TEXT NOT NULL,
    "limit" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_limits_pkey" PRIMARY KEY ("account_id","livemode","subscription_id","metric_name")
);

-- CreateTable
CREATE TABLE "usage_alerts" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "metric_name" TEXT NOT NULL,
    "threshold" INTEGER NOT NULL,
    "usage" BIGINT NOT NULL,
    "limit" BIGINT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_alerts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inbox_events" (
    "event_id" TEXT NOT NULL,
    "consumer" TEXT NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_events_pkey" PRIMARY KEY ("event_id","consumer")
);

-- CreateIndex
CREATE INDEX "subscription_views_account_id_livemode_idx" ON "subscription_views"("account_id", "livemode");

-- CreateIndex
CREATE INDEX "usage_records_account_id_livemode_subscription_id_created_a_idx" ON "usage_records"("account_id", "livemode", "subscription_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "usage_records_account_id_livemode_subscription_id_idempoten_key" ON "usage_records"("account_id", "livemode", "subscription_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "usage_alerts_account_id_livemode_created_at_id_idx" ON "usage_alerts"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "usage_alerts_account_id_livemode_subscription_id_created_at_idx" ON "usage_alerts"("account_id", "livemode", "subscription_id", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "usage_alerts_account_id_livemode_subscription_id_metric_nam_key" ON "usage_alerts"("account_id", "livemode", "subscription_id", "metric_name", "period_start", "threshold");
