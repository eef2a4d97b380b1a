import { type InvoiceJson, presentInvoice } from '@recur/contracts';
import { COLLECTION_METHODS, INVOICE_BILLING_REASONS, INVOICE_STATUSES, TAX_EXEMPT_STATUSES } from '@recur/vocabulary';
import { toInt64 } from '@recur/money';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, fileRoute, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreateInvoiceDto, ListInvoicesQueryDto } from './invoices.dto';
import { TAX_AMOUNT_SCHEMA } from '../tax-rates/tax-rates.routes';
import { TAX_ID_SCHEMA } from '../customers/customers.routes';

const amount = { type: 'integer', description: "Minor units of the invoice's currency." };
const period = { type: ['object', 'null'], required: ['start', 'end'], properties: { start: { type: 'integer' }, end: { type: 'integer' } }, description: 'Unix seconds; null when no period is billed.' };
const optionalTime = { type: ['integer', 'null'], description: 'Unix seconds, or null.' };

export const INVOICE_SCHEMA = responseSchema<InvoiceJson>('Invoice', {
  type: 'object',
  required: [
    'id', 'object', 'livemode', 'number', 'status', 'customer', 'customer_name', 'customer_email', 'subscription', 'billing_reason', 'collection_method', 'currency', 'description', 'lines',
    'subtotal', 'discount', 'total_tax_amounts', 'tax', 'total', 'total_excluding_tax', 'customer_tax_exempt', 'customer_address', 'customer_phone', 'customer_tax_ids', 'amount_due', 'starting_balance', 'ending_balance', 'amount_paid', 'amount_refunded', 'amount_credited', 'due_date', 'period', 'payment_url', 'metadata', 'created', 'finalized_at', 'paid_at', 'voided_at',
  ],
  properties: {
    id: { type: 'string', example: 'in_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['invoice'] },
    livemode: { type: 'boolean' },
    number: { type: ['string', 'null'], example: 'INV-000001', description: 'Gapless per app, set at finalization; null for drafts.' },
    status: { type: 'string', enum: [...INVOICE_STATUSES] },
    customer: { type: 'string', description: 'The customer id.' },
    customer_name: { type: 'string', description: "The customer's name, taken at creation and again at finalization." },
    customer_email: { type: 'string', description: "The customer's e-mail, taken at creation and again at finalization." },
    subscription: { type: ['string', 'null'], description: 'The billed subscription (renewals); null for one-off invoices.' },
    billing_reason: { type: 'string', enum: [...INVOICE_BILLING_REASONS], description: "`subscription_final`: what a subscription's last period left unbilled (usage, prorations), raised when it ends." },
    collection_method: {
      type: 'string', enum: [...COLLECTION_METHODS],
      description: "`send_invoice`: the payment link is sent and the payer pays at a page; `charge_automatically`: at finalization the customer's wallet pays it if it covers it, else a payment prompt is pushed to the customer's default payment method.",
    },
    currency: { type: 'string', example: 'usd' },
    description: { type: ['string', 'null'] },
    lines: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'object', 'kind', 'description', 'quantity', 'amount', 'period', 'tax_amounts'],
        properties: {
          id: { type: 'string', example: 'il_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
          object: { type: 'string', enum: ['line_item'] },
          kind: { type: 'string', enum: ['plan', 'addon', 'usage', 'proration', 'manual'] },
          description: { type: 'string' },
          quantity: { type: 'integer' },
          amount: { ...amount, description: "The line's total in minor units (an inclusive rate's tax is inside it)." },
          period,
          tax_amounts: { type: 'array', items: TAX_AMOUNT_SCHEMA, description: 'The tax on the line, one entry per rate; empty when untaxed.' },
        },
      },
    },
    subtotal: { ...amount, description: 'The sum of the lines, before discount and exclusive tax.' },
    discount: amount,
    total_tax_amounts: { type: 'array', items: TAX_AMOUNT_SCHEMA, description: "The tax per rate: the sums of the lines' tax amounts." },
    tax: { ...amount, description: 'All tax, inclusive and exclusive.' },
    total: { ...amount, description: 'subtotal − discount + exclusive tax. Below 0 only on a final invoice that credits more than it charges: that credit goes to the customer balance (docs/api/customer-balance.md#negative-invoices).' },
    total_excluding_tax: { ...amount, description: 'total − tax.' },
    customer_tax_exempt: { type: 'string', enum: [...TAX_EXEMPT_STATUSES], description: "The customer's tax status when raised; `reverse`: reverse charge, no tax, the PDF says so." },
    customer_address: {
      type: ['object', 'null'], description: "The customer's postal address as recorded at finalization, never changed after; null on drafts, when the customer had none, and on invoices finalized before it was recorded (docs/api/invoices.md#customer-details).",
      required: ['line1', 'line2', 'city', 'region', 'postal_code', 'country'],
      properties: Object.fromEntries(['line1', 'line2', 'city', 'region', 'postal_code', 'country'].map((part) => [part, { type: ['string', 'null'] }])),
    },
    customer_phone: { type: ['string', 'null'], description: "The customer's phone (E.164) as recorded at finalization; null on drafts and when none." },
    customer_tax_ids: {
      anyOf: [{ type: 'array', items: TAX_ID_SCHEMA }, { type: 'null' }],
      description: "The customer's tax ids as recorded at finalization, never changed after; [] when none; null on drafts and on invoices finalized before they were recorded.",
    },
    amount_due: { ...amount, description: 'total − (ending_balance − starting_balance) until paid, then 0.' },
    starting_balance: { type: 'integer', description: "The customer's balance when finalized (negative: credit; 0 on drafts and when none): docs/api/customer-balance.md." },
    ending_balance: { type: 'integer', description: 'The balance after this invoice consumed credit at finalization.' },
    amount_paid: amount,
    amount_refunded: { ...amount, description: 'What refunds gave back of amount_paid so far (the sum of their credit notes); the invoice is `refunded` once it is all of it.' },
    amount_credited: { ...amount, description: 'What credit notes that moved no money credited (docs/api/credit-notes.md): refunds and credits together never exceed total.' },
    due_date: { type: 'string', format: 'date' },
    period,
    payment_url: { type: ['string', 'null'], description: 'The hosted page where the customer pays; null for drafts.' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    created: { type: 'integer', description: 'Unix seconds.' },
    finalized_at: optionalTime,
    paid_at: optionalTime,
    voided_at: optionalTime,
  },
});

/** `/v1/invoices` → InvoicingService. Validation happened before; rules live in the service. */
export const INVOICE_ROUTES = defineRoutes('Invoices', [
  route({
    method: 'POST', path: '/v1/invoices', summary: 'Create a one-off invoice', body: CreateInvoiceDto, response: INVOICE_SCHEMA, status: 201,
    handler: async ({ services, tenant, accountName, commandId, body }) => {
      const { invoice } = await services.invoicing.createInvoice({
        tenant,
        customerId: body.customer,
        currency: body.currency ?? '',
        description: body.description,
        amount: toInt64(body.amount, 'amount'),
        lines: (body.lines ?? []).map((line, index) => ({
          description: line.description,
          amount: toInt64(line.amount, `lines[${index}].amount`),
          quantity: toInt64(line.quantity ?? 1, `lines[${index}].quantity`),
          taxRateIds: line.tax_rates ?? [],
        })),
        dueDate: body.due_date ?? '',
        status: body.status ?? '',
        collectionMethod: body.collection_method ?? '',
        metadata: body.metadata ?? {},
        sellerName: accountName,
        requestId: commandId,
      });
      return presentInvoice(invoice!);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/invoices', summary: 'List invoices', query: ListInvoicesQueryDto, response: INVOICE_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { invoices, page } = await services.invoicing.listInvoices({
        tenant,
        page: pageRequest(query),
        customerId: query.customer,
        status: query.status,
        subscriptionId: query.subscription,
      });
      return listEnvelope('/v1/invoices', invoices.map(presentInvoice), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/invoices/:id', summary: 'Retrieve an invoice', response: INVOICE_SCHEMA,
    handler: async ({ services, tenant, params }) => presentInvoice((await services.invoicing.getInvoice({ tenant, id: params.id })).invoice!),
  }),
  fileRoute({
    method: 'GET', path: '/v1/invoices/:id/pdf', summary: 'Download an invoice as PDF', contentType: 'application/pdf',
    handler: async ({ services, tenant, accountName, params }) => {
      const { pdf, filename } = await services.invoicing.renderInvoicePdf({ tenant, id: params.id, sellerName: accountName });
      return { content: pdf, filename };
    },
  }),
  route({
    method: 'POST', path: '/v1/invoices/:id/finalize', summary: 'Finalize a draft invoice', response: INVOICE_SCHEMA,
    handler: async ({ services, tenant, accountName, commandId, params }) =>
      presentInvoice((await services.invoicing.finalizeInvoice({ tenant, id: params.id, sellerName: accountName, requestId: commandId })).invoice!),
  }),
  route({
    method: 'POST', path: '/v1/invoices/:id/void', summary: 'Void a draft, open or failed invoice', response: INVOICE_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => presentInvoice((await services.invoicing.voidInvoice({ tenant, id: params.id, requestId: commandId })).invoice!),
  }),
  route({
    method: 'POST', path: '/v1/invoices/:id/resend', summary: "E-mail a finalized invoice to its customer again (the PDF attached); 409 for a draft or void invoice", response: INVOICE_SCHEMA,
    handler: async ({ services, tenant, accountName, commandId, params }) =>
      presentInvoice((await services.invoicing.resendInvoice({ tenant, id: params.id, sellerName: accountName, requestId: commandId })).invoice!),
  }),
]);
