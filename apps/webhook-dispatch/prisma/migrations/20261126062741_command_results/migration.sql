-- DropIndex
DROP INDEX "webhook_endpoints_account_id_livemode_request_id_key";

-- AlterTable
ALTER TABLE "webhook_endpoints" DROP COLUMN "request_id";

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
