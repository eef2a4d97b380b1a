-- CreateIndex
CREATE INDEX "sales_link_checkouts_account_id_livemode_invoice_id_idx" ON "sales_link_checkouts"("account_id", "livemode", "invoice_id");
