-- The outbox and inbox tables, owned by @recur/messaging from here on (appendToOutbox, OutboxRelay,
-- claimInboxEvent) and applied to every service's database from this folder, with its own history
-- (_recur_messaging_migrations). Until this release each app created them in migrations of its own
-- (released history, kept as it is: init, outbox_unpublished_index, inbox): on those databases every
-- statement here finds what it creates already there and does nothing. A fresh database of a new
-- app gets them from here.
CREATE TABLE IF NOT EXISTS "outbox_events" (
    "seq" BIGSERIAL NOT NULL,
    "id" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "headers" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("seq")
);

CREATE UNIQUE INDEX IF NOT EXISTS "outbox_events_id_key" ON "outbox_events"("id");

-- The relay's `WHERE published_at IS NULL ORDER BY seq` walks only unpublished rows, so its cost
-- follows the backlog, not the rows already stamped (a partial index: Prisma cannot declare one).
CREATE INDEX IF NOT EXISTS "outbox_events_unpublished_seq_idx" ON "outbox_events" ("seq") WHERE "published_at" IS NULL;

CREATE TABLE IF NOT EXISTS "inbox_events" (
    "event_id" TEXT NOT NULL,
    "consumer" TEXT NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_events_pkey" PRIMARY KEY ("event_id","consumer")
);
