-- AlterTable
ALTER TABLE "seller_profiles" ADD COLUMN     "default_locale" TEXT;
