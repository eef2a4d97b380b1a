-- AlterTable
ALTER TABLE "plans" ADD COLUMN     "tax_rate_ids" TEXT[] DEFAULT ARRAY[]::TEXT[];


-- AlterTable
ALTER TABLE "addons" ADD COLUMN     "tax_rate_ids" TEXT[] DEFAULT ARRAY[]::TEXT[];
