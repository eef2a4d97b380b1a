import { invalidArgument } from './errors';

/**
 * The tax rates a line, a plan or an add-on names: at most one for now (the API takes a list, as
 * Stripe's does, to grow into), each a `txr_…` id. Whether the rate exists is invoicing's to say,
 * since it owns rates (docs/api/tax-rates.md#which-rate-applies).
 */
export function checkTaxRateIds(ids: readonly string[], param: string): string[] {
  if (ids.length > 1) throw invalidArgument(param, `${param} holds at most one tax rate`);
  for (const id of ids) if (!id.startsWith('txr_')) throw invalidArgument(param, `No such tax rate: '${id}'`, 'resource_missing');
  return [...ids];
}
