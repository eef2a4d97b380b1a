import { type PaymentMethodJson, presentPaymentMethod } from '@recur/contracts';
import { notFound } from '@recur/kernel';
import { PAYMENT_PROVIDER_CODES } from '@recur/vocabulary';
import { requireCustomer } from '../customers/require-customer';
import { listEnvelope, ListQueryDto, listWindow } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreatePaymentMethodDto } from './payment-methods.dto';

export const PAYMENT_METHOD_SCHEMA = responseSchema<PaymentMethodJson>('PaymentMethod', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'customer', 'type', 'phone_number', 'provider', 'default', 'consent', 'created'],
  properties: {
    id: { type: 'string', example: 'pm_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['payment_method'] },
    livemode: { type: 'boolean' },
    customer: { type: 'string' },
    type: { type: 'string', enum: ['mobile_money'] },
    phone_number: { type: 'string', example: '+260971000001', description: 'E.164.' },
    provider: { type: 'string', enum: [...PAYMENT_PROVIDER_CODES] },
    default: { type: 'boolean', description: 'The method automatic collection charges; at most one per customer.' },
    consent: {
      type: 'object', required: ['given_at', 'source'],
      properties: {
        given_at: { type: 'integer', description: 'When the payer agreed to be charged on this number, unix seconds.' },
        source: { type: 'string', enum: ['api', 'payment_page', 'checkout'], description: "`api`: asserted by the account through the API; `payment_page`: ticked by the payer on the invoice's hosted payment page; `checkout`: ticked by the buyer on a sales link's checkout." },
      },
    },
    created: { type: 'integer', description: 'Unix seconds.' },
  },
});

/** `/v1/customers/:id/payment-methods` → PaymentsService (saved numbers for automatic collection). Rules live in the service. */
export const PAYMENT_METHOD_ROUTES = defineRoutes('Payment methods', [
  route({
    method: 'POST', path: '/v1/customers/:id/payment-methods', summary: "Save a customer's mobile-money number, with the payer's consent", body: CreatePaymentMethodDto, response: PAYMENT_METHOD_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, params, body }) => {
      await requireCustomer(services, tenant, params.id, () => notFound('customer', params.id));
      const { paymentMethod } = await services.payments.createPaymentMethod({
        tenant, customerId: params.id, phoneNumber: body.phone_number, provider: body.provider ?? '', consent: body.consent, consentSource: 'api', setDefault: body.set_default, requestId: commandId,
      });
      return presentPaymentMethod(paymentMethod!);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/customers/:id/payment-methods', summary: "List a customer's payment methods (the default first)", query: ListQueryDto, response: PAYMENT_METHOD_SCHEMA,
    handler: async ({ services, tenant, params, query }) => {
      await requireCustomer(services, tenant, params.id, () => notFound('customer', params.id));
      const { paymentMethods } = await services.payments.listPaymentMethods({ tenant, customerId: params.id });
      const { data, page } = listWindow(paymentMethods, query, 'payment method', (paymentMethod) => paymentMethod.id);
      return listEnvelope(`/v1/customers/${params.id}/payment-methods`, data.map(presentPaymentMethod), query, page);
    },
  }),
  route({
    method: 'POST', path: '/v1/customers/:id/payment-methods/:method/default', summary: "Make a payment method the customer's default", response: PAYMENT_METHOD_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) =>
      presentPaymentMethod((await services.payments.setDefaultPaymentMethod({ tenant, customerId: params.id, id: params.method, requestId: commandId })).paymentMethod!),
  }),
  route({
    method: 'DELETE', path: '/v1/customers/:id/payment-methods/:method', summary: 'Detach a payment method: it is never charged again', response: PAYMENT_METHOD_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) =>
      presentPaymentMethod((await services.payments.detachPaymentMethod({ tenant, customerId: params.id, id: params.method, requestId: commandId })).paymentMethod!),
  }),
]);
