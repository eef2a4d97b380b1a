-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "add_ons" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "discount" JSONB,
ADD COLUMN     "pending_change" JSONB,
ADD COLUMN     "pending_items" JSONB NOT NULL DEFAULT '[]';
