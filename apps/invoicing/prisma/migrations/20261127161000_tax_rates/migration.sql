-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "customer_tax_exempt" TEXT NOT NULL DEFAULT 'none',
ADD COLUMN     "tax" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "total_tax_amounts" JSONB NOT NULL DEFAULT '[]';


-- AlterTable
ALTER TABLE "invoice_lines" ADD COLUMN     "tax_amounts" JSONB NOT NULL DEFAULT '[]';


-- CreateTable
CREATE TABLE "tax_rates" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "display_name" TEXT NOT NULL,
    "description" TEXT,
    "rate_ppm" INTEGER NOT NULL,
    "inclusive" BOOLEAN NOT NULL,
    "country" TEXT,
    "region" TEXT,
    "active" BOOLEAN NOT NULL,
    "account_default" BOOLEAN NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tax_rates_pkey" PRIMARY KEY ("id")
);


-- CreateIndex
CREATE INDEX "tax_rates_account_id_livemode_created_at_id_idx" ON "tax_rates"("account_id", "livemode", "created_at" DESC, "id" DESC);


-- CreateIndex
CREATE INDEX "tax_rates_account_id_livemode_country_idx" ON "tax_rates"("account_id", "livemode", "country");
