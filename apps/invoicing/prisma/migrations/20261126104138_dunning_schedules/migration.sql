-- CreateTable
CREATE TABLE "dunning_schedules" (
    "account_id" TEXT NOT NULL,
    "livemode" BOOLEAN NOT NULL,
    "days" INTEGER[],
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dunning_schedules_pkey" PRIMARY KEY ("account_id","livemode")
);
