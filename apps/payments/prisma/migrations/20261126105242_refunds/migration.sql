-- CreateTable
CREATE TABLE "refunds" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "provider_refund_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "request_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3),
    "due_at" TIMESTAMPTZ(3),
    "lease_until" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "refunds_provider_refund_id_key" ON "refunds"("provider_refund_id");

-- CreateIndex
CREATE INDEX "refunds_account_id_livemode_invoice_id_idx" ON "refunds"("account_id", "livemode", "invoice_id");

-- CreateIndex
CREATE INDEX "refunds_due_at_idx" ON "refunds"("due_at");

-- One refund per invoice that is not failed: two refunds of one invoice at the same moment cannot both be kept.
CREATE UNIQUE INDEX "refunds_one_per_invoice" ON "refunds"("account_id", "livemode", "invoice_id") WHERE "status" <> 'failed';
