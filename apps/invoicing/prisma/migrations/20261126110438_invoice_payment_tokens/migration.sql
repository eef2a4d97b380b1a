-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "payment_token" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "invoices_payment_token_key" ON "invoices"("payment_token");

-- Backfill: every invoice finalized before tokens existed gets its own token, and its
-- payment_url (`<base>/<invoice id>`) is rewritten to `<base>/<token>`, so a link by invoice id
-- stops working. No extension needed: the token is the bytes of two gen_random_uuid() values
-- (built into PostgreSQL 13+, drawn from a strong random source; 244 random bits), base64url
-- without padding (43 characters), as invoicing makes them (32 random bytes).
UPDATE "invoices" SET "payment_token" = rtrim(translate(encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64'), '+/', '-_'), '=')
WHERE "payment_url" IS NOT NULL AND "payment_token" IS NULL;
UPDATE "invoices" SET "payment_url" = regexp_replace("payment_url", '[^/]*$', "payment_token")
WHERE "payment_token" IS NOT NULL;
