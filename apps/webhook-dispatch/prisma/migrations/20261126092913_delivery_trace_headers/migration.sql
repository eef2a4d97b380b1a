-- AlterTable
ALTER TABLE "deliveries" ADD COLUMN     "trace_headers" JSONB;
