-- AlterTable
ALTER TABLE "credit_notes" ADD COLUMN     "tax_amounts" JSONB NOT NULL DEFAULT '[]';
