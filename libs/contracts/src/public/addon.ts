import type { Addon } from '../gen/recur/catalog/v1/addon_pb';
import { priceOrDeprecated } from '../money';

/** The public JSON of an add-on: what `/v1/addons` answers. */
export interface AddonJson {
  id: string;
  object: 'addon';
  livemode: boolean;
  name: string;
  description: string | null;
  price_monthly: number;
  currency: string;
  status: string;
  on_sale: boolean;
  metadata: Record<string, string>;
  created: number;
  updated: number;
  /** The tax rates (`txr_…`) the add-on's invoice lines carry; empty when it names none. */
  tax_rates: string[];
}

export function presentAddon(addon: Addon): AddonJson {
  const price = priceOrDeprecated(addon.price, { amountMinor: addon.priceMonthly, currency: addon.currency }, 'price');
  return {
    id: addon.id,
    object: 'addon',
    livemode: addon.livemode,
    name: addon.name,
    description: addon.description ?? null,
    price_monthly: price.amountMinor,
    currency: price.currency,
    status: addon.status,
    on_sale: addon.status === 'on_sale',
    metadata: { ...addon.metadata },
    created: Number(addon.created),
    updated: Number(addon.updated),
    tax_rates: [...addon.taxRateIds],
  };
}
