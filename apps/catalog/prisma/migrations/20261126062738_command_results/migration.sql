-- DropIndex
DROP INDEX "plans_account_id_livemode_request_id_key";

-- DropIndex
DROP INDEX "price_components_account_id_livemode_request_id_key";

-- DropIndex
DROP INDEX "addons_account_id_livemode_request_id_key";

-- DropIndex
DROP INDEX "coupons_account_id_livemode_request_id_key";

-- DropIndex
DROP INDEX "promotion_codes_account_id_livemode_request_id_key";

-- AlterTable
ALTER TABLE "plans" DROP COLUMN "request_id";

-- AlterTable
ALTER TABLE "price_components" DROP COLUMN "request_id";

-- AlterTable
ALTER TABLE "addons" DROP COLUMN "request_id";

-- AlterTable
ALTER TABLE "coupons" DROP COLUMN "request_id";

-- AlterTable
ALTER TABLE "promotion_codes" DROP COLUMN "request_id";

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
CREATE INDEX "command_results_created_at_idx" ON "command_results"("created_at");
