-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "address" JSONB,
ADD COLUMN     "tax_exempt" TEXT NOT NULL DEFAULT 'none';
