import { type CreditNoteJson, fromGrpcError, presentCreditNote, presentRefund, type RefundJson } from '@recur/contracts';
import { CREDIT_NOTE_REASONS_SHOWN, REFUND_REASONS_SHOWN } from '@recur/vocabulary';
import { listEnvelope, pageRequest } from '../http/list';
import { AlternativeAnswer, defineRoutes, fileRoute, listRoute, responseSchema, routeWithAlternative } from '../routing/define-routes';
import { CreateRefundDto, ListRefundsQueryDto } from './refunds.dto';
import { TAX_AMOUNT_SCHEMA } from '../tax-rates/tax-rates.routes';

export const CREDIT_NOTE_SCHEMA = responseSchema<CreditNoteJson>('CreditNote', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'number', 'invoice', 'invoice_number', 'customer', 'customer_name', 'customer_email', 'amount', 'currency', 'total_tax_amounts', 'tax', 'reason', 'payment', 'credited_to', 'memo', 'metadata', 'created'],
  properties: {
    id: { type: 'string', example: 'cn_4f9XkQ2mZ8aBcD1eF3gH5jKl', description: 'The credit note, also the refund (when it is a refund\'s).' },
    object: { type: 'string', enum: ['credit_note'] },
    livemode: { type: 'boolean' },
    number: { type: 'string', example: 'CN-000001', description: 'Gapless per app, its own sequence.' },
    invoice: { type: 'string', description: 'The refunded or credited invoice.' },
    invoice_number: { type: 'string', example: 'INV-000001' },
    customer: { type: 'string' },
    customer_name: { type: 'string' },
    customer_email: { type: 'string' },
    amount: { type: 'integer', description: 'The amount refunded or credited (refunds and credits of an invoice never exceed its total), in minor units of `currency`.' },
    currency: { type: 'string', example: 'zmw' },
    total_tax_amounts: { type: 'array', items: TAX_AMOUNT_SCHEMA, description: "The invoice's tax given back, per rate, in proportion to `amount` (included in it): docs/api/refunds.md#tax-carried-back." },
    tax: { type: 'integer', description: 'The sum of total_tax_amounts, in minor units.' },
    reason: { type: 'string', enum: [...CREDIT_NOTE_REASONS_SHOWN], description: 'A refund\'s reason, or a credit\'s (`order_change`, `product_unsatisfactory`, …): docs/api/credit-notes.md.' },
    payment: { type: 'string', description: 'The refunded payment (`pay_…`); empty (`""`) for a credit note that moved no money (`credited_to` is not `refund`).' },
    credited_to: { type: 'string', enum: ['refund', 'amount_due', 'customer_balance'], description: '`refund`: money went back; `amount_due`: the open invoice owes less; `customer_balance`: the paid invoice\'s credit went to the customer balance (docs/api/credit-notes.md).' },
    memo: { type: ['string', 'null'], description: 'The note printed on the credit note.' },
    metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'The integrator\'s key-value data (`{}` on a refund\'s credit note).' },
    created: { type: 'integer', description: 'Unix seconds.' },
  },
});

export const PENDING_REFUND_SCHEMA = responseSchema<RefundJson>('Refund', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'status', 'invoice', 'payment', 'amount', 'currency', 'reason', 'failure_code', 'failure_message', 'created'],
  properties: {
    id: { type: 'string', example: 'cn_4f9XkQ2mZ8aBcD1eF3gH5jKl', description: 'The refund; its credit note takes this id once the provider completes it.' },
    object: { type: 'string', enum: ['refund'] },
    livemode: { type: 'boolean' },
    status: {
      type: 'string', enum: ['pending', 'processing', 'succeeded', 'failed'],
      description: '`processing`: accepted by the provider, its final status awaited; `failed`: the provider failed it (no credit note, the invoice stays paid); `pending`/`succeeded`: for a moment, before the provider answers / the credit note is issued.',
    },
    invoice: { type: 'string', description: 'The invoice being refunded (paid until the refund completes).' },
    payment: { type: 'string', description: 'The refunded payment (`pay_…`).' },
    amount: { type: 'integer', description: 'The amount being refunded, in minor units of `currency`.' },
    currency: { type: 'string', example: 'zmw' },
    reason: { type: 'string', enum: [...REFUND_REASONS_SHOWN], description: '`unapplied_payment`: an automatic refund (`re_…`, no credit note) of a payment that succeeded for an invoice that no longer owed it.' },
    failure_code: { type: ['string', 'null'], description: "The provider's failure code of a failed refund, lowercase (e.g. `recipient_not_allowed_to_receive`)." },
    failure_message: { type: ['string', 'null'] },
    created: { type: 'integer', description: 'Unix seconds.' },
  },
});

/** `/v1/refunds` → PaymentsService (refund at the provider) and InvoicingService (credit notes). */
export const REFUND_ROUTES = defineRoutes('Refunds', [
  routeWithAlternative({
    method: 'POST', path: '/v1/refunds', summary: 'Refund a paid invoice, in full or in part', body: CreateRefundDto, response: CREDIT_NOTE_SCHEMA, status: 201,
    alternative: { status: 202, description: 'Accepted by the provider, not yet completed (live apps): the credit note of the same id follows (credit_note.created, and invoice.refunded once all of it is refunded).', response: PENDING_REFUND_SCHEMA },
    handler: async ({ services, tenant, commandId, body }) => {
      const { creditNote, refund } = await services.payments.refundInvoice({
        tenant, invoiceId: body.invoice_id, reason: body.reason, requestId: commandId, ...(body.amount === undefined ? {} : { amount: BigInt(body.amount) }),
      });
      return creditNote ? presentCreditNote(creditNote) : new AlternativeAnswer(presentRefund(refund!, tenant.livemode));
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/refunds', summary: 'List credit notes', query: ListRefundsQueryDto, response: CREDIT_NOTE_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { creditNotes, page } = await services.invoicing.listCreditNotes({
        tenant, page: pageRequest(query), invoiceId: query.invoice, customerId: query.customer,
      });
      return listEnvelope('/v1/refunds', creditNotes.map(presentCreditNote), query, page);
    },
  }),
  routeWithAlternative({
    method: 'GET', path: '/v1/refunds/:id', summary: 'Retrieve a credit note (or its refund while it has none)', response: CREDIT_NOTE_SCHEMA,
    alternative: { status: 200, description: 'A refund without a credit note: processing at the provider, or failed there.', response: PENDING_REFUND_SCHEMA },
    handler: async ({ services, tenant, params }) => {
      try {
        return presentCreditNote((await services.invoicing.getCreditNote({ tenant, id: params.id })).creditNote!);
      } catch (error) {
        // No credit note (yet): the refund of that id, processing or failed at the provider (404 if none).
        if (fromGrpcError(error).kind !== 'not_found') throw error;
        return new AlternativeAnswer(presentRefund((await services.payments.getRefund({ tenant, id: params.id })).refund!, tenant.livemode));
      }
    },
  }),
  fileRoute({
    method: 'GET', path: '/v1/refunds/:id/pdf', summary: 'Download a credit note as PDF', contentType: 'application/pdf',
    handler: async ({ services, tenant, accountName, params }) => {
      const { pdf, filename } = await services.invoicing.renderCreditNotePdf({ tenant, id: params.id, sellerName: accountName });
      return { content: pdf, filename };
    },
  }),
]);
