-- Expand step only. This migration once also dropped the entities' request_id columns and
-- their unique indexes, in the very release whose code stops using them: replicas of the
-- previous build, still running during a rolling upgrade, would have failed on every create.
-- The columns stay (nullable, no longer written) and a migration of a later release drops them
-- (the contract step). Databases that applied the earlier text keep working: the migrator
-- accepts the checksum it recorded, declared below; the later drop must use IF EXISTS.
-- recur:replaces-checksum 8f3f7ac9e7e37d629b01c2531c92c32ff3fe182f926140f8b879f5c4d44a6aec

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
