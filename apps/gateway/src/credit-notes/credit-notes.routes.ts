import * as grpc from '@grpc/grpc-js';
import { presentCreditNote } from '@recur/contracts';
import { DomainError } from '@recur/kernel';
import { listEnvelope, pageRequest } from '../http/list';
import { ListRefundsQueryDto } from '../refunds/refunds.dto';
import { CREDIT_NOTE_SCHEMA } from '../refunds/refunds.routes';
import { defineRoutes, fileRoute, listRoute, route } from '../routing/define-routes';
import { CreateCreditNoteDto } from './credit-notes.dto';

/**
 * `/v1/credit-notes` (docs/api/credit-notes.md): credit notes that move no money, created through
 * PaymentsService (decided under the invoice's lock refunds take), and every credit note —
 * refunds' included — read from InvoicingService.
 */
export const CREDIT_NOTE_ROUTES = defineRoutes('Credit notes', [
  route({
    method: 'POST', path: '/v1/credit-notes', summary: 'Credit an invoice without moving money', body: CreateCreditNoteDto, response: CREDIT_NOTE_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      try {
        const { creditNote } = await services.payments.creditInvoice({
          tenant, invoiceId: body.invoice, reason: body.reason, memo: body.memo ?? '', metadata: body.metadata ?? {}, requestId: commandId, ...(body.amount === undefined ? {} : { amount: BigInt(body.amount) }),
        });
        return presentCreditNote(creditNote!);
      } catch (error) {
        // A payments release without CreditInvoice (a rolling upgrade): 503 with its own code (docs/api/credit-notes.md#upgrades).
        if ((error as grpc.ServiceError).code === grpc.status.UNIMPLEMENTED && !(error as grpc.ServiceError).metadata?.get('recur-error-code')?.length) {
          throw new DomainError('unavailable', 'credit_notes_unavailable', 'Credit notes that move no money are not available until every billing service is upgraded; retry later.');
        }
        throw error;
      }
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/credit-notes', summary: 'List credit notes (refunds\' included)', query: ListRefundsQueryDto, response: CREDIT_NOTE_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { creditNotes, page } = await services.invoicing.listCreditNotes({ tenant, page: pageRequest(query), invoiceId: query.invoice, customerId: query.customer });
      return listEnvelope('/v1/credit-notes', creditNotes.map(presentCreditNote), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/credit-notes/:id', summary: 'Retrieve a credit note', response: CREDIT_NOTE_SCHEMA,
    handler: async ({ services, tenant, params }) => presentCreditNote((await services.invoicing.getCreditNote({ tenant, id: params.id })).creditNote!),
  }),
  fileRoute({
    method: 'GET', path: '/v1/credit-notes/:id/pdf', summary: 'Download a credit note as PDF', contentType: 'application/pdf',
    handler: async ({ services, tenant, accountName, params }) => {
      const { pdf, filename } = await services.invoicing.renderCreditNotePdf({ tenant, id: params.id, sellerName: accountName });
      return { content: pdf, filename };
    },
  }),
]);
