import { resolveLocale } from '@recur/i18n';
import { CustomerDirectory } from '../customers/customer-directory.client';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { invoicingV1, moneyFromMessage, requireTenant } from '@recur/contracts';
import { checkListPage, hasPrefix, invalidArgument, newId } from '@recur/kernel';
import { Commands } from '../infrastructure/commands';
import { toInvoiceMessage } from '../invoices/invoice.mapper';
import { renderCreditNotePdf } from './credit-note-pdf';
import { toCreditNoteMessage } from './credit-note.mapper';
import { CreditNotesService } from './credit-notes.service';
import { PrismaService } from '../infrastructure/prisma.service';
import { SellerProfilesRepository } from '../seller/seller-profiles.repository';
import { InvoicesRepository } from '../invoices/invoices.repository';

const checkCreditNoteId = (id: string): string => {
  if (!hasPrefix(id, 'cn')) throw invalidArgument('credit_note_id', 'credit_note_id must be a credit note id (cn_…)');
  return id;
};

/** gRPC edge of credit notes: decode, call, encode. No rules live here. */
@Controller()
export class CreditNotesGrpcController {
  constructor(
    private readonly creditNotes: CreditNotesService,
    private readonly commands: Commands,
    private readonly sellers: SellerProfilesRepository,
    private readonly prisma: PrismaService,
    private readonly customers: CustomerDirectory,
    private readonly invoices: InvoicesRepository,
  ) {}

  /** Idempotent by credit note id: it is the command's request id, whatever the caller sent. */
  @GrpcMethod('InvoicingService', 'RecordRefund')
  async recordRefund(request: invoicingV1.RecordRefundRequest): Promise<invoicingV1.RecordRefundResponse> {
    const tenant = requireTenant(request.tenant);
    const creditNoteId = checkCreditNoteId(request.creditNoteId);
    return this.commands.run(tenant, { requestId: creditNoteId }, invoicingV1.RecordRefundResponseSchema, async (tx) => {
      const { creditNote, invoice } = await this.creditNotes.recordRefund(tx, tenant, request.id, {
        creditNoteId,
        paymentId: request.paymentId,
        amount: moneyFromMessage(request.amount, 'amount'),
        reason: request.reason,
      });
      return { creditNote: toCreditNoteMessage(creditNote), invoice: toInvoiceMessage(invoice) };
    });
  }

  /** A recorded command: a repeat with the same request id answers the credit note issued first. */
  @GrpcMethod('InvoicingService', 'IssueCreditNote')
  async issueCreditNote(request: invoicingV1.IssueCreditNoteRequest): Promise<invoicingV1.IssueCreditNoteResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, invoicingV1.IssueCreditNoteResponseSchema, async (tx) => {
      const { creditNote, invoice } = await this.creditNotes.issueCredit(tx, tenant, request.id, {
        creditNoteId: newId('cn'),
        amount: request.amount,
        reason: request.reason,
        memo: request.memo,
        metadata: request.metadata,
        refundsUnderWay: request.refundsUnderWay ? moneyFromMessage(request.refundsUnderWay, 'refunds_under_way') : null,
      });
      return { creditNote: toCreditNoteMessage(creditNote), invoice: toInvoiceMessage(invoice) };
    });
  }

  @GrpcMethod('InvoicingService', 'GetCreditNote')
  async getCreditNote(request: invoicingV1.GetCreditNoteRequest): Promise<MessageInitShape<typeof invoicingV1.GetCreditNoteResponseSchema>> {
    return { creditNote: toCreditNoteMessage(await this.creditNotes.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('InvoicingService', 'ListCreditNotes')
  async listCreditNotes(request: invoicingV1.ListCreditNotesRequest): Promise<MessageInitShape<typeof invoicingV1.ListCreditNotesResponseSchema>> {
    const page = checkListPage(request.page);
    const { creditNotes, page: info } = await this.creditNotes.list(requireTenant(request.tenant), page, { invoiceId: request.invoiceId, customerId: request.customerId });
    return { creditNotes: creditNotes.map(toCreditNoteMessage), page: info };
  }

  @GrpcMethod('InvoicingService', 'RenderCreditNotePdf')
  async renderCreditNotePdf(request: invoicingV1.RenderCreditNotePdfRequest): Promise<MessageInitShape<typeof invoicingV1.RenderCreditNotePdfResponseSchema>> {
    const note = await this.creditNotes.get(requireTenant(request.tenant), request.id);
    const seller = await this.sellers.find(this.prisma, note.tenant.accountId);
    const locale = resolveLocale(await this.customers.preferredLocale(note.tenant, note.customer.id), seller.defaultLocale);
    const invoice = await this.invoices.get(note.tenant, note.invoiceId);
    return { pdf: await renderCreditNotePdf(note, { sellerName: request.sellerName, seller, locale }, invoice.customerDetails), filename: `${note.number}.pdf` };
  }
}
