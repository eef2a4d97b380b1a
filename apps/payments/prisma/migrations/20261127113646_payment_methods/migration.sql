-- CreateTable
CREATE TABLE "payment_methods" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "customer_id" TEXT NOT NULL,
    "phone_number" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "is_default" BOOLEAN NOT NULL DEFAULT false,
    "consent_at" TIMESTAMPTZ(3) NOT NULL,
    "consent_source" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "detached_at" TIMESTAMPTZ(3),

    CONSTRAINT "payment_methods_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "payment_methods_account_id_livemode_customer_id_idx" ON "payment_methods"("account_id", "livemode", "customer_id");

-- One default per customer, and one saved number per customer and provider, among methods not detached.
CREATE UNIQUE INDEX "payment_methods_one_default" ON "payment_methods"("account_id", "livemode", "customer_id") WHERE "is_default" AND "detached_at" IS NULL;
CREATE UNIQUE INDEX "payment_methods_one_per_number" ON "payment_methods"("account_id", "livemode", "customer_id", "phone_number", "provider") WHERE "detached_at" IS NULL;
