import { LOCALES } from '@recur/i18n';
import { type CustomerJson, presentCustomer, requireTenant } from '@recur/contracts';
import { failedPrecondition } from '@recur/kernel';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { type AddressDto, CreateCustomerDto, ListCustomersQueryDto, UpdateCustomerDto } from './customers.dto';
import { TAX_EXEMPT_STATUSES, TAX_ID_TYPES, TAX_IDS_MAX } from '@recur/vocabulary';
import { balancesOf, type CustomerBalanceFields } from '../customer-balances/customer-balances.routes';
import type { ServiceClients } from '../infrastructure/service-clients';
import type { customerV1 } from '@recur/contracts';

const addressMessage = (address: AddressDto | undefined) =>
  address === undefined ? undefined : {
    line1: address.line1 ?? '', line2: address.line2 ?? '', city: address.city ?? '', region: address.region ?? '', postalCode: address.postal_code ?? '', country: address.country ?? '',
  };

const nullableText = { type: ['string', 'null'] };

/** One tax id as customers and invoices show it. */
export const TAX_ID_SCHEMA = {
  type: 'object', required: ['type', 'value'],
  properties: {
    type: { type: 'string', enum: [...TAX_ID_TYPES], description: "Stripe's type name: eu_vat (checked by member state shape), ke_pin (letter, 9 digits, letter); the others are kept as typed." },
    value: { type: 'string', example: 'FR12345678901' },
  },
};

/** The customer as `/v1/customers` answers it: the subscription service's customer and invoicing's balance of it. */
export type CustomerWithBalanceJson = CustomerJson & CustomerBalanceFields;

export const CUSTOMER_SCHEMA = responseSchema<CustomerWithBalanceJson>('Customer', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'name', 'email', 'metadata', 'created', 'updated', 'deleted', 'deleted_at', 'test_clock', 'address', 'tax_exempt', 'preferred_locale', 'phone', 'tax_ids'],
  properties: {
    id: { type: 'string', example: 'cus_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['customer'] },
    livemode: { type: 'boolean' },
    name: { type: 'string' },
    email: { type: 'string', description: 'An e-mail address: local@domain.tld, any script.' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    created: { type: 'integer', description: 'Unix seconds.' },
    updated: { type: 'integer', description: 'Unix seconds.' },
    deleted: { type: 'boolean', description: 'True once the customer was (soft) deleted.' },
    deleted_at: { type: ['integer', 'null'], description: 'Unix seconds of the deletion, or null.' },
    test_clock: { type: ['string', 'null'], description: 'The sandbox test clock the customer lives on, or null.' },
    address: {
      type: ['object', 'null'], description: 'The postal address, or null; country is ISO 3166-1 alpha-2 and picks the tax rate (docs/api/tax-rates.md).',
      required: ['line1', 'line2', 'city', 'region', 'postal_code', 'country'],
      properties: { line1: nullableText, line2: nullableText, city: nullableText, region: nullableText, postal_code: nullableText, country: { type: ['string', 'null'], example: 'ZM' } },
    },
    tax_exempt: { type: 'string', enum: [...TAX_EXEMPT_STATUSES], description: '`none`: taxed; `exempt`: never taxed; `reverse`: reverse charge, no tax, the invoice says so.' },
    phone: { type: ['string', 'null'], description: 'E.164, e.g. +221771234567; null when none.', example: '+221771234567' },
    tax_ids: {
      type: 'array', maxItems: TAX_IDS_MAX, description: "The customer's tax ids in order, [] when none; printed in the invoice's Bill to block (docs/api/customers.md#tax-ids).",
      items: TAX_ID_SCHEMA,
    },
    preferred_locale: { anyOf: [{ type: 'string', enum: [...LOCALES] }, { type: 'null' }], description: "The language of the customer's invoices, e-mails and hosted pages; null: the account's default_locale (docs/localization.md)." },
    // Not required: every /v1 answer carries them, but the balance lives in invoicing and the
    // customer.* events (subscription's) do not (docs/api/customer-balance.md#on-the-customer).
    balance: { type: 'integer', description: 'Credit the customer holds, negative as Stripe signs it (minor units of `currency`); the next invoices consume it: docs/api/customer-balance.md. On every /v1 answer; absent from the `data.object` of customer.* events.' },
    currency: { type: ['string', 'null'], example: 'zmw', description: "The balance's currency; null until the customer has had a balance. On every /v1 answer; absent from customer.* events." },
  },
});

/** Customers with their balances, asked of invoicing in one call (docs/api/customer-balance.md#on-the-customer). */
async function withBalances(services: ServiceClients, tenant: Parameters<typeof balancesOf>[1], customers: customerV1.Customer[]): Promise<CustomerWithBalanceJson[]> {
  const balances = await balancesOf(services, tenant, customers.map((customer) => customer.id));
  return customers.map((customer, index) => ({ ...presentCustomer(customer), ...balances[index] }));
}
const withBalance = async (services: ServiceClients, tenant: Parameters<typeof balancesOf>[1], customer: customerV1.Customer): Promise<CustomerWithBalanceJson> =>
  (await withBalances(services, tenant, [customer]))[0];

/** What `POST /v1/customers/:id/portal-sessions` answers: a link the customer opens to manage their account. */
export interface CustomerPortalSessionJson {
  object: 'customer_portal_session';
  livemode: boolean;
  customer: string;
  url: string;
  created: number;
  expires_at: number;
}

export const CUSTOMER_PORTAL_SESSION_SCHEMA = responseSchema<CustomerPortalSessionJson>('CustomerPortalSession', {
  type: 'object',
  required: ['object', 'livemode', 'customer', 'url', 'created', 'expires_at'],
  properties: {
    object: { type: 'string', enum: ['customer_portal_session'] },
    livemode: { type: 'boolean' },
    customer: { type: 'string' },
    url: { type: 'string', format: 'uri', description: 'The signed portal link; anyone holding it acts as the customer until expires_at.' },
    created: { type: 'integer', description: 'Unix seconds.' },
    expires_at: { type: 'integer', description: 'Unix seconds; the link works for CUSTOMER_PORTAL_SESSION_TTL_SECONDS (default 1 hour).' },
  },
});

/** `/v1/customers` → SubscriptionService. Validation happened before; rules live in the service. */
export const CUSTOMER_ROUTES = defineRoutes('Customers', [
  route({
    method: 'POST', path: '/v1/customers', summary: 'Create a customer', body: CreateCustomerDto, response: CUSTOMER_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      const { customer } = await services.subscription.createCustomer({
        tenant, name: body.name, email: body.email, metadata: body.metadata ?? {}, testClockId: body.test_clock, requestId: commandId,
        address: addressMessage(body.address), taxExempt: body.tax_exempt ?? '', preferredLocale: body.preferred_locale ?? '', phone: body.phone ?? '', taxIds: body.tax_ids ?? [],
      });
      // A new customer has no balance yet: nothing to ask invoicing.
      return { ...presentCustomer(customer!), balance: 0, currency: null };
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/customers', summary: 'List customers', query: ListCustomersQueryDto, response: CUSTOMER_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { customers, page } = await services.subscription.listCustomers({ tenant, page: pageRequest(query), email: query.email });
      return listEnvelope('/v1/customers', await withBalances(services, tenant, customers), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/customers/:id', summary: 'Retrieve a customer', response: CUSTOMER_SCHEMA,
    handler: async ({ services, tenant, params }) => {
      // The id is known: its balance is asked beside the customer, not after it (one round trip of latency, not two).
      const [{ customer }, [balance]] = await Promise.all([services.subscription.getCustomer({ tenant, id: params.id }), balancesOf(services, tenant, [params.id])]);
      return { ...presentCustomer(customer!), ...balance };
    },
  }),
  route({
    method: 'PATCH', path: '/v1/customers/:id', summary: 'Update a customer', body: UpdateCustomerDto, response: CUSTOMER_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { customer } = await services.subscription.updateCustomer({
        tenant, id: params.id, name: body.name, email: body.email, metadata: body.metadata ?? {}, requestId: commandId,
        address: addressMessage(body.address ?? undefined), clearAddress: body.address === null, taxExempt: body.tax_exempt,
        preferredLocale: body.preferred_locale === null ? '' : body.preferred_locale,
        phone: body.phone === null ? '' : body.phone,
        taxIds: body.tax_ids === undefined ? undefined : { taxIds: body.tax_ids ?? [] },
      });
      return withBalance(services, tenant, customer!);
    },
  }),
  /** A signed customer portal link (no state is kept); an unknown customer answers 404, a deleted one 409 customer_deleted. */
  route({
    method: 'POST', path: '/v1/customers/:id/portal-sessions', summary: 'Create a customer portal session', response: CUSTOMER_PORTAL_SESSION_SCHEMA, status: 201,
    handler: async ({ services, customerPortal, tenant, params }) => {
      const customer = (await services.subscription.getCustomer({ tenant, id: params.id })).customer!;
      if (customer.deletedAt !== undefined) throw failedPrecondition('customer_deleted', `Customer '${customer.id}' is deleted.`);
      const link = await customerPortal.create(requireTenant(tenant), customer.id);
      return { object: 'customer_portal_session', livemode: tenant.livemode, customer: customer.id, url: link.url, created: link.created, expires_at: link.expiresAt };
    },
  }),
  route({
    method: 'DELETE', path: '/v1/customers/:id', summary: 'Delete a customer (soft delete)', response: CUSTOMER_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => withBalance(services, tenant, (await services.subscription.deleteCustomer({ tenant, id: params.id, requestId: commandId })).customer!),
  }),
]);
