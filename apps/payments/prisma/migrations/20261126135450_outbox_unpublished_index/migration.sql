-- DropIndex
DROP INDEX "outbox_events_published_at_seq_idx";
-- CreateIndex (by hand: Prisma cannot declare a partial index). The relay's
-- `WHERE published_at IS NULL ORDER BY seq` walks only unpublished rows, so its cost
-- no longer grows with the rows already stamped.
CREATE INDEX "outbox_events_unpublished_seq_idx" ON "outbox_events" ("seq") WHERE "published_at" IS NULL;
