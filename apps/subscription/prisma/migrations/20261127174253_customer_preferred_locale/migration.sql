-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "preferred_locale" TEXT;
