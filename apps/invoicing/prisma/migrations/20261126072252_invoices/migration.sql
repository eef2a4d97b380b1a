-- CreateTable
CREATE TABLE "invoices" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "number" TEXT,
    "status" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "subscription_id" TEXT,
    "billing_reason" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "description" TEXT,
    "subtotal" BIGINT NOT NULL,
    "discount" BIGINT NOT NULL,
    "total" BIGINT NOT NULL,
    "amount_due" BIGINT NOT NULL,
    "amount_paid" BIGINT NOT NULL,
    "due_date" DATE NOT NULL,
    "period_start" TIMESTAMPTZ(3),
    "period_end" TIMESTAMPTZ(3),
    "customer_name" TEXT NOT NULL,
    "customer_email" TEXT NOT NULL,
    "payment_url" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "finalized_at" TIMESTAMPTZ(3),
    "paid_at" TIMESTAMPTZ(3),
    "voided_at" TIMESTAMPTZ(3),

    CONSTRAINT "invoices_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invoice_lines" (
    "id" TEXT NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "position" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "quantity" BIGINT NOT NULL,
    "amount" BIGINT NOT NULL,
    "period_start" TIMESTAMPTZ(3),
    "period_end" TIMESTAMPTZ(3),

    CONSTRAINT "invoice_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invoice_number_counters" (
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "last_number" INTEGER NOT NULL,

    CONSTRAINT "invoice_number_counters_pkey" PRIMARY KEY ("account_id","livemode")
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
CREATE INDEX "invoices_account_id_livemode_created_at_id_idx" ON "invoices"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "invoices_account_id_livemode_customer_id_created_at_idx" ON "invoices"("account_id", "livemode", "customer_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "invoices_account_id_livemode_status_created_at_idx" ON "invoices"("account_id", "livemode", "status", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "invoices_account_id_livemode_number_key" ON "invoices"("account_id", "livemode", "number");

-- CreateIndex
CREATE UNIQUE INDEX "invoices_account_id_livemode_subscription_id_period_start_key" ON "invoices"("account_id", "livemode", "subscription_id", "period_start");

-- CreateIndex
CREATE UNIQUE INDEX "invoice_lines_invoice_id_position_key" ON "invoice_lines"("invoice_id", "position");

-- CreateIndex
CREATE INDEX "command_results_created_at_idx" ON "command_results"("created_at");

-- AddForeignKey
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE CASCADE ON UPDATE CASCADE;
