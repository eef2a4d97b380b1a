-- CreateTable
CREATE TABLE "plans" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "pricing_model" TEXT NOT NULL,
    "amount_monthly" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "package_size" INTEGER NOT NULL DEFAULT 1,
    "billing_intervals" TEXT[],
    "status" TEXT NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),

    CONSTRAINT "plans_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "plan_tiers" (
    "plan_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "position" INTEGER NOT NULL,
    "up_to" BIGINT,
    "unit_amount" BIGINT NOT NULL,
    "flat_amount" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "plan_tiers_pkey" PRIMARY KEY ("plan_id","position")
);

-- CreateTable
CREATE TABLE "price_components" (
    "id" TEXT NOT NULL,
    "plan_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "metric_name" TEXT,
    "unit_amount" BIGINT NOT NULL,
    "included_quantity" BIGINT NOT NULL DEFAULT 0,
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "price_components_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "addons" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "price_monthly" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "addons_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "coupons" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "value" DECIMAL(20,2) NOT NULL,
    "currency" TEXT,
    "duration" TEXT NOT NULL,
    "duration_in_periods" INTEGER,
    "times_redeemed" INTEGER NOT NULL DEFAULT 0,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "coupons_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "promotion_codes" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "code" TEXT NOT NULL,
    "code_key" TEXT,
    "coupon_id" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "max_redemptions" INTEGER,
    "times_redeemed" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3),
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "promotion_codes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "plans_account_id_livemode_status_created_at_id_idx" ON "plans"("account_id", "livemode", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "plans_account_id_livemode_created_at_id_idx" ON "plans"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "plans_account_id_livemode_request_id_key" ON "plans"("account_id", "livemode", "request_id");

-- CreateIndex
CREATE INDEX "plan_tiers_account_id_livemode_plan_id_idx" ON "plan_tiers"("account_id", "livemode", "plan_id");

-- CreateIndex
CREATE INDEX "price_components_account_id_livemode_plan_id_created_at_id_idx" ON "price_components"("account_id", "livemode", "plan_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "price_components_account_id_livemode_request_id_key" ON "price_components"("account_id", "livemode", "request_id");

-- CreateIndex
CREATE INDEX "addons_account_id_livemode_status_created_at_id_idx" ON "addons"("account_id", "livemode", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "addons_account_id_livemode_created_at_id_idx" ON "addons"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "addons_account_id_livemode_request_id_key" ON "addons"("account_id", "livemode", "request_id");

-- CreateIndex
CREATE INDEX "coupons_account_id_livemode_deleted_at_created_at_id_idx" ON "coupons"("account_id", "livemode", "deleted_at", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "coupons_account_id_livemode_request_id_key" ON "coupons"("account_id", "livemode", "request_id");

-- CreateIndex
CREATE INDEX "promotion_codes_account_id_livemode_deleted_at_created_at_i_idx" ON "promotion_codes"("account_id", "livemode", "deleted_at", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "promotion_codes_coupon_id_idx" ON "promotion_codes"("coupon_id");

-- CreateIndex
CREATE UNIQUE INDEX "promotion_codes_account_id_livemode_code_key_key" ON "promotion_codes"("account_id", "livemode", "code_key");

-- CreateIndex
CREATE UNIQUE INDEX "promotion_codes_account_id_livemode_request_id_key" ON "promotion_codes"("account_id", "livemode", "request_id");

-- AddForeignKey
ALTER TABLE "plan_tiers" ADD CONSTRAINT "plan_tiers_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "price_components" ADD CONSTRAINT "price_components_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "plans"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "promotion_codes" ADD CONSTRAINT "promotion_codes_coupon_id_fkey" FOREIGN KEY ("coupon_id") REFERENCES "coupons"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
