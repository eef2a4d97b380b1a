-- AlterTable
ALTER TABLE "price_components" ADD COLUMN     "usage_limit" BIGINT;
