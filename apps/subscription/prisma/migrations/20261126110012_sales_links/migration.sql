-- CreateTable
CREATE TABLE "sales_links" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "kind" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "plan_id" TEXT NOT NULL,
    "billing_interval" TEXT NOT NULL,
    "trial_days" INTEGER NOT NULL DEFAULT 0,
    "allow_promotion_codes" BOOLEAN NOT NULL DEFAULT false,
    "success_url" TEXT NOT NULL DEFAULT '',
    "active" BOOLEAN NOT NULL DEFAULT true,
    "token" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sales_links_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sales_link_checkouts" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "sales_link_id" TEXT NOT NULL,
    "checkout_token" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "invoice_id" TEXT,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "sales_link_checkouts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "sales_links_token_key" ON "sales_links"("token");

-- CreateIndex
CREATE INDEX "sales_links_account_id_livemode_created_at_id_idx" ON "sales_links"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "sales_link_checkouts_subscription_id_key" ON "sales_link_checkouts"("subscription_id");

-- CreateIndex
CREATE INDEX "sales_link_checkouts_sales_link_id_created_at_id_idx" ON "sales_link_checkouts"("sales_link_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "sales_link_checkouts_sales_link_id_checkout_token_key" ON "sales_link_checkouts"("sales_link_id", "checkout_token");
