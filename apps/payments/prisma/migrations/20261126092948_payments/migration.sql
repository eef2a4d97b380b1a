-- CreateTable
CREATE TABLE "payments" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "invoice_number" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "phone_number" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "adapter" TEXT NOT NULL,
    "provider_payment_id" TEXT NOT NULL,
    "page_token" TEXT NOT NULL,
    "redirect_url" TEXT NOT NULL,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "settled_at" TIMESTAMPTZ(3),
    "invoice_applied_at" TIMESTAMPTZ(3),
    "due_at" TIMESTAMPTZ(3),
    "lease_until" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "command_results" (
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "rpc" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "response" BYTEA,
    "error_kind" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "error_param" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "command_results_pkey" PRIMARY KEY ("account_id","livemode","rpc","request_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "payments_provider_payment_id_key" ON "payments"("provider_payment_id");

-- CreateIndex
CREATE UNIQUE INDEX "payments_page_token_key" ON "payments"("page_token");

-- CreateIndex
CREATE INDEX "payments_account_id_livemode_created_at_id_idx" ON "payments"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "payments_account_id_livemode_invoice_id_created_at_idx" ON "payments"("account_id", "livemode", "invoice_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "payments_due_at_idx" ON "payments"("due_at");

-- CreateIndex
CREATE INDEX "command_results_created_at_idx" ON "command_results"("created_at");

-- At most one pending payment per invoice: the database's own guard behind the initiation lock,
-- so no interleaving can ever start two charges of one invoice.
CREATE UNIQUE INDEX "payments_one_pending_per_invoice" ON "payments"("account_id", "livemode", "invoice_id") WHERE "status" = 'pending';
