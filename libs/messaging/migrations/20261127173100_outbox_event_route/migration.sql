-- The topic is chosen when a row is published, not when it is written: a row records what routes
-- it (its producer and the kind of its envelope, beside its type), and the relay resolves its topic
-- from the topic map it runs with (docs/architecture.md#events). Expand step: both columns are
-- nullable and the writers still fill `topic`, which the previous release's relays publish to
-- during a rollout; a row without a producer (written by that release) is published to its `topic`.
ALTER TABLE "outbox_events" ADD COLUMN IF NOT EXISTS "producer" TEXT;
ALTER TABLE "outbox_events" ADD COLUMN IF NOT EXISTS "kind" TEXT;
