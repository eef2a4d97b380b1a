-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "tax_ids" JSONB NOT NULL DEFAULT '[]';
