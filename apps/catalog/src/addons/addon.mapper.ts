import { create } from '@bufbuild/protobuf';
import { addonV1, toMoneyMessage } from '@recur/contracts';
import { fromInt64, money, toInt64 } from '@recur/money';
import { type Metadata, unixSeconds } from '@recur/kernel';
import type { Addon as AddonRow, Prisma } from '../generated/prisma/client';
import type { Addon, AddonStatus } from './addon';

export function fromAddonRow(row: AddonRow): Addon {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    name: row.name,
    description: row.description,
    priceMonthly: fromInt64(row.priceMonthly),
    currency: row.currency,
    status: row.status as AddonStatus,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    taxRateIds: row.taxRateIds,
  };
}

export function toAddonRow(addon: Addon): Prisma.AddonCreateInput {
  return {
    id: addon.id,
    accountId: addon.tenant.accountId,
    livemode: addon.tenant.livemode,
    name: addon.name,
    description: addon.description,
    priceMonthly: toInt64(addon.priceMonthly),
    currency: addon.currency,
    status: addon.status,
    metadata: addon.metadata,
    createdAt: addon.createdAt,
    updatedAt: addon.updatedAt,
    taxRateIds: addon.taxRateIds,
  };
}

export function toAddonMessage(addon: Addon): addonV1.Addon {
  return create(addonV1.AddonSchema, {
    id: addon.id,
    livemode: addon.tenant.livemode,
    name: addon.name,
    description: addon.description ?? undefined,
    priceMonthly: toInt64(addon.priceMonthly),
    currency: addon.currency,
    price: toMoneyMessage(money(addon.priceMonthly, addon.currency)),
    status: addon.status,
    metadata: addon.metadata,
    created: BigInt(unixSeconds(addon.createdAt)),
    updated: BigInt(unixSeconds(addon.updatedAt)),
    taxRateIds: addon.taxRateIds,
  });
}
