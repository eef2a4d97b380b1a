-- AlterTable
ALTER TABLE "apps" ADD COLUMN     "rate_limit_read_per_second" INTEGER,
ADD COLUMN     "rate_limit_write_per_second" INTEGER;

-- CreateTable
CREATE TABLE "rate_limit_windows" (
    "key_id" TEXT NOT NULL,
    "class" TEXT NOT NULL,
    "window_start" BIGINT NOT NULL,
    "taken" INTEGER NOT NULL,

    CONSTRAINT "rate_limit_windows_pkey" PRIMARY KEY ("key_id","class")
);
