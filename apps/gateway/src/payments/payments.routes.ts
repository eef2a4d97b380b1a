import { type PaymentJson, presentPayment } from '@recur/contracts';
import { PAYMENT_PROVIDER_CODES, PAYMENT_STATUSES } from '@recur/vocabulary';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { InitiatePaymentDto, ListPaymentsQueryDto } from './payments.dto';

export const PAYMENT_SCHEMA = responseSchema<PaymentJson>('Payment', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'invoice', 'invoice_number', 'status', 'amount', 'currency', 'phone_number', 'provider', 'redirectUrl', 'failure_code', 'failure_message', 'created', 'settled_at', 'unapplied_reason', 'refund'],
  properties: {
    id: { type: 'string', example: 'pay_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['payment'] },
    livemode: { type: 'boolean' },
    invoice: { type: 'string', description: 'The invoice being paid.' },
    invoice_number: { type: 'string', example: 'INV-000001' },
    status: { type: 'string', enum: [...PAYMENT_STATUSES] },
    amount: { type: 'integer', description: "The invoice's amount due at initiation, in minor units of `currency`." },
    currency: { type: 'string', example: 'zmw' },
    phone_number: { type: 'string', example: '+260971000001', description: 'E.164.' },
    provider: { type: 'string', enum: [...PAYMENT_PROVIDER_CODES] },
    redirectUrl: { type: 'string', description: "Where the payer approves the payment: Recur's sandbox payer page for sandbox keys, the provider's payment page for live keys." },
    failure_code: { type: ['string', 'null'], example: 'insufficient_funds' },
    failure_message: { type: ['string', 'null'] },
    created: { type: 'integer', description: 'Unix seconds.' },
    settled_at: { type: ['integer', 'null'], description: 'Unix seconds; null while pending.' },
    unapplied_reason: {
      type: ['string', 'null'], example: 'invoice_void',
      description: 'Set when the payment succeeded for an invoice that no longer owed it (voided, or paid by other means): why the invoice refused it. Recur returns such a payment to the payer in full (`refund`).',
    },
    refund: { type: ['string', 'null'], example: 're_4f9XkQ2mZ8aBcD1eF3gH5jKl', description: 'The automatic refund that returns an unapplied payment; retrieve it at `GET /v1/refunds/:id`.' },
  },
});

/** `/v1/payments` → PaymentsService. Validation happened before; rules live in the service. */
export const PAYMENT_ROUTES = defineRoutes('Payments', [
  route({
    method: 'POST', path: '/v1/payments/initiate', summary: 'Start paying an invoice', body: InitiatePaymentDto, response: PAYMENT_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      const { payment } = await services.payments.initiatePayment({ tenant, invoiceId: body.invoice_id, phoneNumber: body.phone_number, provider: body.provider ?? '', requestId: commandId });
      return presentPayment(payment!);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/payments', summary: 'List payment attempts', query: ListPaymentsQueryDto, response: PAYMENT_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { payments, page } = await services.payments.listPayments({ tenant, page: pageRequest(query), invoiceId: query.invoice });
      return listEnvelope('/v1/payments', payments.map(presentPayment), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/payments/:id', summary: 'Retrieve a payment attempt', response: PAYMENT_SCHEMA,
    handler: async ({ services, tenant, params }) => presentPayment((await services.payments.getPayment({ tenant, id: params.id })).payment!),
  }),
]);
