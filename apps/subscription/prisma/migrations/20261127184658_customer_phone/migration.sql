-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "phone" TEXT;
