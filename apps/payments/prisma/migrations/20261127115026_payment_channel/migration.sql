-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "channel" TEXT NOT NULL DEFAULT 'page';
