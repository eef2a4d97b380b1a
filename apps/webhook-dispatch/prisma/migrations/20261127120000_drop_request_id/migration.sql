-- Contract step of command_results (20261126062738..41): the entities' request_id columns, which
-- the first release (0.1.0) neither reads nor writes. Their unique indexes go with them. IF EXISTS:
-- a data folder that applied the earlier text of the command_results migration dropped them then.
ALTER TABLE "webhook_endpoints" DROP COLUMN IF EXISTS "request_id";
