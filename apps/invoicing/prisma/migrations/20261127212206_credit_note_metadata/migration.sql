-- AlterTable
ALTER TABLE "credit_notes" ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';
