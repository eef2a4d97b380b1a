-- The command_results table, owned by @recur/persistence from here on (CommandResults,
-- CommandResultsPurge) and applied to every service's database from this folder, with its own
-- history (_recur_persistence_migrations). Until this release each app created it in a migration
-- of its own (released history, kept as it is): on those databases every statement here finds
-- what it creates already there and does nothing. A fresh database of a new app gets it from here.
CREATE TABLE IF NOT EXISTS "command_results" (
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

-- The purge's walk by age (CommandResultsPurge).
CREATE INDEX IF NOT EXISTS "command_results_created_at_idx" ON "command_results"("created_at");
