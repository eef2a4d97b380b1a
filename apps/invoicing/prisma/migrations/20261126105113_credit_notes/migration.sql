-- CreateTable
CREATE TABLE "credit_notes" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "number" TEXT NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "invoice_number" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "customer_name" TEXT NOT NULL,
    "customer_email" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "reason" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "credit_notes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "credit_note_number_counters" (
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "last_number" INTEGER NOT NULL,

    CONSTRAINT "credit_note_number_counters_pkey" PRIMARY KEY ("account_id","livemode")
);

-- CreateIndex
CREATE UNIQUE INDEX "credit_notes_invoice_id_key" ON "credit_notes"("invoice_id");

-- CreateIndex
CREATE INDEX "credit_notes_account_id_livemode_created_at_id_idx" ON "credit_notes"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "credit_notes_account_id_livemode_customer_id_created_at_idx" ON "credit_notes"("account_id", "livemode", "customer_id", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "credit_notes_account_id_livemode_number_key" ON "credit_notes"("account_id", "livemode", "number");
