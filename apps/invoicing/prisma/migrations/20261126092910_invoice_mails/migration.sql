-- CreateTable
CREATE TABLE "invoice_mails" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "invoice_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "reminder_number" INTEGER,
    "send_key" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "seller_name" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "lease_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "sent_at" TIMESTAMPTZ(3),

    CONSTRAINT "invoice_mails_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "invoice_mails_status_next_attempt_at_idx" ON "invoice_mails"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "invoice_mails_account_id_livemode_invoice_id_idx" ON "invoice_mails"("account_id", "livemode", "invoice_id");

-- CreateIndex
CREATE UNIQUE INDEX "invoice_mails_invoice_id_send_key_key" ON "invoice_mails"("invoice_id", "send_key");
