-- AlterTable
ALTER TABLE "sales_link_checkouts" ALTER COLUMN "subscription_id" DROP NOT NULL;
