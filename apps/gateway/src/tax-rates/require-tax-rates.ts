import { type commonV1, fromGrpcError } from '@recur/contracts';
import { invalidArgument } from '@recur/kernel';
import type { ServiceClients } from '../infrastructure/service-clients';

/**
 * Checks that each rate a plan or an add-on is about to name exists in the caller's app and is
 * active (as Stripe refuses an archived rate on a new price), before catalog stores the id:
 * rates live in the invoicing service, and a renewal must never meet an id that names nothing.
 * A missing or archived rate is a bad body field (400, param `tax_rates`).
 */
export async function requireActiveTaxRates(services: ServiceClients, tenant: commonV1.Tenant, ids: readonly string[]): Promise<void> {
  await Promise.all(ids.map(async (id) => {
    let active: boolean;
    try {
      active = (await services.invoicing.getTaxRate({ tenant, id })).taxRate?.active ?? false;
    } catch (failure) {
      const error = fromGrpcError(failure);
      if (error.kind === 'not_found' || error.kind === 'invalid_argument') throw invalidArgument('tax_rates', `No such tax rate: '${id}'`, 'resource_missing');
      throw error;
    }
    if (!active) throw invalidArgument('tax_rates', `Tax rate '${id}' is archived; restore it (PATCH active: true) or name an active one.`);
  }));
}
