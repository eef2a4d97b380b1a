import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { invoicingV1, type sellerProfileV1 } from '@recur/contracts';
import { CLOCK, type Clock, invalidArgument, unixSeconds } from '@recur/kernel';
import { PrismaService } from '../infrastructure/prisma.service';
import { type SellerProfile, type SellerProfileUpdate, updateSellerProfile } from './seller-profile';
import { SellerProfilesRepository } from './seller-profiles.repository';

/** gRPC edge of an account's seller profile (`/v1/account`). An update is a read-modify-write under the row's lock, so it is idempotent as it stands. */
@Controller()
export class SellerProfilesGrpcController {
  constructor(
    private readonly profiles: SellerProfilesRepository,
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  @GrpcMethod('InvoicingService', 'GetSellerProfile')
  async getSellerProfile(request: invoicingV1.GetSellerProfileRequest): Promise<MessageInitShape<typeof invoicingV1.GetSellerProfileResponseSchema>> {
    const profile = await this.profiles.find(this.prisma, requireAccount(request.accountId));
    return { profile: toSellerProfileMessage(profile), logo: request.includeLogo && profile.logo ? profile.logo.bytes : new Uint8Array() };
  }

  @GrpcMethod('InvoicingService', 'UpdateSellerProfile')
  async updateSellerProfile(request: invoicingV1.UpdateSellerProfileRequest): Promise<MessageInitShape<typeof invoicingV1.UpdateSellerProfileResponseSchema>> {
    const accountId = requireAccount(request.accountId);
    const update: SellerProfileUpdate = {
      legalName: request.legalName,
      taxId: request.taxId,
      registrationNumber: request.registrationNumber,
      supportEmail: request.supportEmail,
      supportPhone: request.supportPhone,
      brandColor: request.brandColor,
      invoiceFooter: request.invoiceFooter,
      defaultLocale: request.defaultLocale,
      ...(request.address ? { address: { ...request.address } } : {}),
      ...(request.logo === undefined ? {} : { logo: request.logo.length === 0 ? null : request.logo }),
    };
    const saved = await this.prisma.$transaction(async (tx) => {
      const now = this.now();
      const next = updateSellerProfile(await this.profiles.findForUpdate(tx, accountId, now), update, now);
      await this.profiles.save(tx, next);
      return next;
    });
    return { profile: toSellerProfileMessage(saved) };
  }
}

function requireAccount(accountId: string): string {
  if (!accountId.startsWith('acct_')) throw invalidArgument('account_id', 'account_id must be an account id (acct_…)');
  return accountId;
}

export function toSellerProfileMessage(profile: SellerProfile): MessageInitShape<typeof sellerProfileV1.SellerProfileSchema> {
  return {
    accountId: profile.accountId,
    legalName: profile.legalName,
    address: { ...profile.address },
    taxId: profile.taxId,
    registrationNumber: profile.registrationNumber,
    supportEmail: profile.supportEmail,
    supportPhone: profile.supportPhone,
    brandColor: profile.brandColor,
    invoiceFooter: profile.invoiceFooter,
    logoContentType: profile.logo?.contentType ?? '',
    logoSize: BigInt(profile.logo?.bytes.length ?? 0),
    updated: profile.updatedAt ? BigInt(unixSeconds(profile.updatedAt)) : 0n,
    defaultLocale: profile.defaultLocale ?? '',
  };
}
