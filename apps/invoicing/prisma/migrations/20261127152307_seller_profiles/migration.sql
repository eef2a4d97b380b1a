-- CreateTable
CREATE TABLE "seller_profiles" (
    "account_id" TEXT NOT NULL,
    "legal_name" TEXT NOT NULL DEFAULT '',
    "address_line1" TEXT NOT NULL DEFAULT '',
    "address_line2" TEXT NOT NULL DEFAULT '',
    "city" TEXT NOT NULL DEFAULT '',
    "region" TEXT NOT NULL DEFAULT '',
    "postal_code" TEXT NOT NULL DEFAULT '',
    "country" TEXT NOT NULL DEFAULT '',
    "tax_id" TEXT NOT NULL DEFAULT '',
    "registration_number" TEXT NOT NULL DEFAULT '',
    "support_email" TEXT NOT NULL DEFAULT '',
    "support_phone" TEXT NOT NULL DEFAULT '',
    "brand_color" TEXT NOT NULL DEFAULT '',
    "invoice_footer" TEXT NOT NULL DEFAULT '',
    "logo" BYTEA,
    "logo_content_type" TEXT NOT NULL DEFAULT '',
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "seller_profiles_pkey" PRIMARY KEY ("account_id")
);
