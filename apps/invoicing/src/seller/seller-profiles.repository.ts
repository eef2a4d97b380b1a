import { Injectable } from '@nestjs/common';
import type { Prisma, SellerProfile as SellerProfileRow } from '../generated/prisma/client';
import { emptySellerProfile, type LogoContentType, type SellerProfile } from './seller-profile';

type Db = Prisma.TransactionClient;

function fromRow(row: SellerProfileRow): SellerProfile {
  return {
    accountId: row.accountId,
    legalName: row.legalName,
    address: { line1: row.addressLine1, line2: row.addressLine2, city: row.city, region: row.region, postalCode: row.postalCode, country: row.country },
    taxId: row.taxId,
    registrationNumber: row.registrationNumber,
    supportEmail: row.supportEmail,
    supportPhone: row.supportPhone,
    brandColor: row.brandColor,
    invoiceFooter: row.invoiceFooter,
    logo: row.logo ? { contentType: row.logoContentType as LogoContentType, bytes: new Uint8Array(row.logo) } : null,
    defaultLocale: row.defaultLocale,
    updatedAt: row.updatedAt,
  };
}

/** `seller_profiles`: one row per account that set any of its seller details (no row: all empty). */
@Injectable()
export class SellerProfilesRepository {
  async find(db: Db, accountId: string): Promise<SellerProfile> {
    const row = await db.sellerProfile.findUnique({ where: { accountId } });
    return row ? fromRow(row) : emptySellerProfile(accountId);
  }

  /** The profile under its row lock (created empty if it has none), for a read-modify-write. */
  async findForUpdate(tx: Db, accountId: string, now: Date): Promise<SellerProfile> {
    await tx.$executeRaw`INSERT INTO seller_profiles (account_id, updated_at) VALUES (${accountId}, ${now}) ON CONFLICT (account_id) DO NOTHING`;
    await tx.$queryRaw`SELECT 1 FROM seller_profiles WHERE account_id = ${accountId} FOR UPDATE`;
    return this.find(tx, accountId);
  }

  /** Writes an updated profile (`updatedAt` set by `updateSellerProfile`) over its row, which `findForUpdate` made. */
  async save(tx: Db, profile: SellerProfile & { updatedAt: Date }): Promise<void> {
    const { address } = profile;
    await tx.sellerProfile.update({
      where: { accountId: profile.accountId },
      data: {
        legalName: profile.legalName,
        addressLine1: address.line1,
        addressLine2: address.line2,
        city: address.city,
        region: address.region,
        postalCode: address.postalCode,
        country: address.country,
        taxId: profile.taxId,
        registrationNumber: profile.registrationNumber,
        supportEmail: profile.supportEmail,
        supportPhone: profile.supportPhone,
        brandColor: profile.brandColor,
        invoiceFooter: profile.invoiceFooter,
        logo: profile.logo ? Buffer.from(profile.logo.bytes) : null,
        logoContentType: profile.logo?.contentType ?? '',
        defaultLocale: profile.defaultLocale,
        updatedAt: profile.updatedAt,
      },
    });
  }
}
