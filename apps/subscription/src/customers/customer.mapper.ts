import { create } from '@bufbuild/protobuf';
import { customerV1, presentCustomer, type CustomerJson } from '@recur/contracts';
import { type Metadata, unixSeconds } from '@recur/kernel';
import { type Customer as CustomerRow, Prisma } from '../generated/prisma/client';
import type { TaxExemptStatus } from '@recur/vocabulary';
import type { Address, Customer, TaxId } from './customer';

/** An address as the gRPC message carries it (empty strings for absent parts), or null for none. */
export const fromAddressMessage = (address: customerV1.Address | undefined): Address | undefined =>
  address === undefined ? undefined : {
    line1: address.line1, line2: address.line2, city: address.city, region: address.region, postalCode: address.postalCode, country: address.country,
  };

export function fromCustomerRow(row: CustomerRow): Customer {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    name: row.name,
    email: row.email,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    deletedAt: row.deletedAt,
    testClockId: row.testClockId,
    address: (row.address as Address | null) ?? null,
    taxExempt: row.taxExempt as TaxExemptStatus,
    preferredLocale: row.preferredLocale,
    phone: row.phone,
    taxIds: (row.taxIds as unknown as TaxId[] | null) ?? [],
  };
}

export function toCustomerRow(customer: Customer): Prisma.CustomerCreateInput {
  return {
    id: customer.id,
    accountId: customer.tenant.accountId,
    livemode: customer.tenant.livemode,
    name: customer.name,
    email: customer.email,
    metadata: customer.metadata,
    createdAt: customer.createdAt,
    updatedAt: customer.updatedAt,
    deletedAt: customer.deletedAt,
    testClockId: customer.testClockId,
    address: customer.address === null ? Prisma.DbNull : { ...customer.address },
    taxExempt: customer.taxExempt,
    preferredLocale: customer.preferredLocale,
    phone: customer.phone,
    taxIds: customer.taxIds.map(({ type, value }) => ({ type, value })),
  };
}

export function toCustomerMessage(customer: Customer): customerV1.Customer {
  return create(customerV1.CustomerSchema, {
    id: customer.id,
    livemode: customer.tenant.livemode,
    name: customer.name,
    email: customer.email,
    metadata: customer.metadata,
    created: BigInt(unixSeconds(customer.createdAt)),
    updated: BigInt(unixSeconds(customer.updatedAt)),
    deletedAt: customer.deletedAt ? BigInt(unixSeconds(customer.deletedAt)) : undefined,
    testClockId: customer.testClockId ?? undefined,
    address: customer.address === null ? undefined : {
      line1: customer.address.line1 ?? '', line2: customer.address.line2 ?? '', city: customer.address.city ?? '',
      region: customer.address.region ?? '', postalCode: customer.address.postalCode ?? '', country: customer.address.country ?? '',
    },
    taxExempt: customer.taxExempt,
    preferredLocale: customer.preferredLocale ?? '',
    phone: customer.phone ?? '',
    taxIds: customer.taxIds.map(({ type, value }) => ({ type, value })),
  });
}

export const toCustomerJson = (customer: Customer): CustomerJson => presentCustomer(toCustomerMessage(customer));
