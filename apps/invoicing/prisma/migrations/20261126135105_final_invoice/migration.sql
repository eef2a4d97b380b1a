-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "final_period_start" TIMESTAMPTZ(3);

-- CreateIndex
CREATE UNIQUE INDEX "invoices_account_id_livemode_subscription_id_final_period_s_key" ON "invoices"("account_id", "livemode", "subscription_id", "final_period_start");
