-- AlterTable
ALTER TABLE "events" ADD COLUMN     "object_id" TEXT;
