-- CreateTable
CREATE TABLE "wallets" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "customer_id" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "balance" BIGINT NOT NULL DEFAULT 0,
    "low_balance_threshold" BIGINT NOT NULL DEFAULT 0,
    "auto_recharge_enabled" BOOLEAN NOT NULL DEFAULT false,
    "auto_recharge_threshold" BIGINT NOT NULL DEFAULT 0,
    "auto_recharge_amount" BIGINT NOT NULL DEFAULT 0,
    "auto_recharge_phone_number" TEXT NOT NULL DEFAULT '',
    "auto_recharge_provider" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "wallets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_transactions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "wallet_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "balance_after" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "invoice_id" TEXT NOT NULL DEFAULT '',
    "top_up_id" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "wallet_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_top_ups" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "wallet_id" TEXT NOT NULL,
    "invoice_id" TEXT NOT NULL DEFAULT '',
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "automatic" BOOLEAN NOT NULL,
    "payment_url" TEXT NOT NULL DEFAULT '',
    "payment_id" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "credited_at" TIMESTAMPTZ(3),
    "due_at" TIMESTAMPTZ(3),
    "lease_until" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "wallet_top_ups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inbox_events" (
    "event_id" TEXT NOT NULL,
    "consumer" TEXT NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_events_pkey" PRIMARY KEY ("event_id","consumer")
);

-- CreateIndex
CREATE INDEX "wallets_account_id_livemode_created_at_id_idx" ON "wallets"("account_id", "livemode", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "wallets_account_id_livemode_customer_id_currency_key" ON "wallets"("account_id", "livemode", "customer_id", "currency");

-- CreateIndex
CREATE INDEX "wallet_transactions_wallet_id_created_at_id_idx" ON "wallet_transactions"("wallet_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "wallet_transactions_wallet_id_key_key" ON "wallet_transactions"("wallet_id", "key");

-- CreateIndex
CREATE INDEX "wallet_top_ups_account_id_livemode_invoice_id_idx" ON "wallet_top_ups"("account_id", "livemode", "invoice_id");

-- CreateIndex
CREATE INDEX "wallet_top_ups_due_at_idx" ON "wallet_top_ups"("due_at");

-- A balance is never negative: a debit larger than the balance fails whatever the code does.
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_balance_not_negative" CHECK ("balance" >= 0);

-- Every ledger row belongs to a wallet.
ALTER TABLE "wallet_transactions" ADD CONSTRAINT "wallet_transactions_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The ledger is append-only: a row, once written, is never changed or removed (a correction is a new row).
CREATE FUNCTION "wallet_transactions_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'wallet_transactions is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER "wallet_transactions_append_only" BEFORE UPDATE OR DELETE ON "wallet_transactions"
  FOR EACH ROW EXECUTE FUNCTION "wallet_transactions_append_only"();
CREATE TRIGGER "wallet_transactions_no_truncate" BEFORE TRUNCATE ON "wallet_transactions"
  FOR EACH STATEMENT EXECUTE FUNCTION "wallet_transactions_append_only"();

-- A new row continues the wallet's balance: balance_after = the balance before it + amount (the
-- service then sets the wallet's balance to balance_after in the same transaction, under its lock).
CREATE FUNCTION "wallet_transactions_continue_balance"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE current_balance BIGINT;
BEGIN
  SELECT "balance" INTO current_balance FROM "wallets" WHERE "id" = NEW."wallet_id";
  IF NEW."balance_after" IS DISTINCT FROM current_balance + NEW."amount" THEN
    RAISE EXCEPTION 'wallet_transactions: balance_after % is not % + %', NEW."balance_after", current_balance, NEW."amount" USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER "wallet_transactions_continue_balance" BEFORE INSERT ON "wallet_transactions"
  FOR EACH ROW EXECUTE FUNCTION "wallet_transactions_continue_balance"();

-- One top-up per invoice, and at most one automatic top-up in flight per wallet.
CREATE UNIQUE INDEX "wallet_top_ups_one_per_invoice" ON "wallet_top_ups"("account_id", "livemode", "invoice_id") WHERE "invoice_id" <> '';
CREATE UNIQUE INDEX "wallet_top_ups_one_automatic_in_flight" ON "wallet_top_ups"("wallet_id") WHERE "automatic" AND "status" IN ('requested', 'pending');
