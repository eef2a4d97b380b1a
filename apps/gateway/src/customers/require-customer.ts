import { type commonV1, fromGrpcError } from '@recur/contracts';
import type { DomainError } from '@recur/kernel';
import type { ServiceClients } from '../infrastructure/service-clients';

/**
 * Checks that customer `id` exists in the caller's app before a resource of another service is
 * made for it (customers live in the subscription service); a missing one throws `missing()`,
 * the route's own answer (a bad body field, or a 404 path).
 */
export async function requireCustomer(services: ServiceClients, tenant: commonV1.Tenant, id: string, missing: () => DomainError): Promise<void> {
  try {
    await services.subscription.getCustomer({ tenant, id });
  } catch (failure) {
    const error = fromGrpcError(failure);
    if (error.kind === 'not_found' || error.kind === 'invalid_argument') throw missing();
    throw error;
  }
}
