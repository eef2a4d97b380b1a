import { create } from '@bufbuild/protobuf';
import { DomainError, type TenantRef } from '@recur/kernel';
import { type Tenant, TenantSchema } from './gen/recur/common/v1/tenant_pb';

export function toTenantMessage(tenant: TenantRef): Tenant {
  return create(TenantSchema, { accountId: tenant.accountId, livemode: tenant.livemode });
}

/** Every tenant-scoped RPC requires a tenant; a call without one is a caller bug. */
export function requireTenant(tenant: Tenant | undefined): TenantRef {
  if (!tenant || tenant.accountId === '') {
    throw new DomainError('invalid_argument', 'tenant_missing', 'The request carries no tenant.', 'tenant');
  }
  return { accountId: tenant.accountId, livemode: tenant.livemode };
}
