-- Raised by the ingest statement when it would cross a usage alert threshold and was run on its
-- own (autocommit): the statement fails whole, and the service records the batch again in a
-- transaction with its alerts (apps/usage-metering/src/usage/usage.repository.ts, INGEST_SQL).
CREATE FUNCTION "usage_threshold_crossed"() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the statement crosses a usage alert threshold: record it in a transaction with its alerts' USING ERRCODE = 'RU001';
END
$$;
