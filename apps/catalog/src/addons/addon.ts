import { ADDON_STATUSES } from '@recur/vocabulary';
import { checkMetadata, checkTaxRateIds, failedPrecondition, mergeMetadata, type Metadata, newId, type TenantRef } from '@recur/kernel';
import { checkAmount, checkCurrency, checkDescription, checkName } from '../common/fields';

export type AddonStatus = (typeof ADDON_STATUSES)[number];

/** An add-on as the domain sees it. Off sale it stays readable and editable but cannot be newly attached. */
export interface Addon {
  id: string;
  tenant: TenantRef;
  name: string;
  description: string | null;
  priceMonthly: number;
  currency: string;
  status: AddonStatus;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
  /** The tax rates its lines carry (at most one); a subscription keeps those of when it was attached. */
  taxRateIds: string[];
}

export interface AddonFields {
  name?: string;
  description?: string;
  priceMonthly?: number;
  currency?: string;
  metadata?: Metadata;
  /** Replaces the add-on's tax rates (empty clears them); undefined leaves them. */
  taxRateIds?: string[];
}

export function createAddon(tenant: TenantRef, fields: AddonFields & { name: string; priceMonthly: number }, now: Date): Addon {
  return {
    id: newId('addon'),
    tenant,
    name: checkName(fields.name),
    description: checkDescription(fields.description),
    priceMonthly: checkAmount(fields.priceMonthly, 'price_monthly'),
    currency: checkCurrency(fields.currency),
    status: 'on_sale',
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
    taxRateIds: checkTaxRateIds(fields.taxRateIds ?? [], 'tax_rates'),
  };
}

/** Every field may change, on or off sale: attached subscriptions keep the price they were sold at. */
export function updateAddon(addon: Addon, fields: AddonFields, now: Date): Addon {
  return {
    ...addon,
    name: fields.name === undefined ? addon.name : checkName(fields.name),
    description: fields.description === undefined ? addon.description : checkDescription(fields.description),
    priceMonthly: fields.priceMonthly === undefined ? addon.priceMonthly : checkAmount(fields.priceMonthly, 'price_monthly'),
    currency: fields.currency === undefined ? addon.currency : checkCurrency(fields.currency),
    metadata: fields.metadata === undefined ? addon.metadata : checkMetadata(mergeMetadata(addon.metadata, fields.metadata)),
    taxRateIds: fields.taxRateIds === undefined ? addon.taxRateIds : checkTaxRateIds(fields.taxRateIds, 'tax_rates'),
    updatedAt: now,
  };
}

export function takeOffSale(addon: Addon, now: Date): Addon {
  if (addon.status === 'off_sale') throw failedPrecondition('addon_off_sale', `Add-on '${addon.id}' is already off sale.`);
  return { ...addon, status: 'off_sale', updatedAt: now };
}

export function putOnSale(addon: Addon, now: Date): Addon {
  if (addon.status === 'on_sale') throw failedPrecondition('addon_on_sale', `Add-on '${addon.id}' is on sale; only an add-on off sale can be restored.`);
  return { ...addon, status: 'on_sale', updatedAt: now };
}

/** The check subscriptions will make before attaching an add-on. */
export function assertAttachable(addon: Addon): void {
  if (addon.status !== 'on_sale') throw failedPrecondition('addon_off_sale', `Add-on '${addon.id}' is off sale and cannot be attached.`);
}
