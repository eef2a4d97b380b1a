-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "ending_balance" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "starting_balance" BIGINT NOT NULL DEFAULT 0;


-- CreateTable
CREATE TABLE "customer_balances" (
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "customer_id" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "balance" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "customer_balances_pkey" PRIMARY KEY ("account_id","livemode","customer_id")
);


-- CreateTable
CREATE TABLE "customer_balance_transactions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "customer_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "ending_balance" BIGINT NOT NULL,
    "description" TEXT,
    "invoice_id" TEXT,
    "credit_note_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "customer_balance_transactions_pkey" PRIMARY KEY ("id")
);


-- CreateIndex
CREATE INDEX "customer_balance_transactions_account_id_livemode_customer__idx" ON "customer_balance_transactions"("account_id", "livemode", "customer_id", "created_at" DESC, "id" DESC);
