import { Inject, Injectable } from '@nestjs/common';
import { type Clock, CLOCK, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';
import { assertMove, type Invoice } from '../invoices/invoice';
import { InvoicesRepository } from '../invoices/invoices.repository';
import { CustomerBalancesService } from '../balances/customer-balances.service';
import { type CreditNote, creditInvoice, type CreditRequest, refundInvoice, type RefundRecord } from './credit-note';
import { type CreditNoteFilter, CreditNotesRepository } from './credit-notes.repository';

type Tx = Prisma.TransactionClient;

/** Credit notes: recording a refund on its invoice, and reading them back. */
@Injectable()
export class CreditNotesService {
  constructor(
    private readonly creditNotes: CreditNotesRepository,
    private readonly invoices: InvoicesRepository,
    private readonly balances: CustomerBalancesService,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  /**
   * Records a refund that succeeded at the provider: the invoice (locked) becomes refunded and
   * a credit note takes the next number. The credit note's id is the refund's, so a repeat
   * answers the credit note issued first.
   */
  async recordRefund(tx: Tx, tenant: TenantRef, invoiceId: string, refund: RefundRecord): Promise<{ creditNote: CreditNote; invoice: Invoice }> {
    const invoice = await this.invoices.getForUpdate(tx, tenant, invoiceId);
    const earlier = await this.creditNotes.find(tx, tenant, refund.creditNoteId);
    if (earlier) return { creditNote: earlier, invoice };
    // Judge the move first: a refused refund never waits for the number counter.
    assertMove(invoice, 'refund');
    const change = refundInvoice(invoice, refund, await this.creditNotes.nextNumber(tx, tenant), this.now());
    await this.creditNotes.insert(tx, change.creditNote);
    await this.invoices.update(tx, change);
    return { creditNote: change.creditNote, invoice: change.invoice };
  }

  /**
   * Issues a credit note that moves no money (docs/api/credit-notes.md) under the invoice's row
   * lock, the one recordRefund takes: it takes the next number of the same gapless sequence, and
   * a paid invoice's credit goes to the customer balance in the same transaction. A refusal after
   * the number was taken rolls the whole transaction back, number included: still gapless.
   */
  async issueCredit(tx: Tx, tenant: TenantRef, invoiceId: string, request: CreditRequest): Promise<{ creditNote: CreditNote; invoice: Invoice }> {
    const invoice = await this.invoices.getForUpdate(tx, tenant, invoiceId);
    // Judge the move first: a refused credit never waits for the number counter.
    assertMove(invoice, 'credit');
    // Lock order: the invoice, the balance, the number counter (docs/api/customer-balance.md#concurrency).
    const balance = invoice.status === 'paid' ? await this.balances.lockForCreditNote(tx, invoice) : null;
    const change = creditInvoice(invoice, request, await this.creditNotes.nextNumber(tx, tenant), this.now());
    // A balance in another currency refuses the credit before anything is written (the transaction rolls back the number).
    if (change.creditNote.creditedTo === 'customer_balance') await this.balances.recordCreditNote(tx, change.creditNote, balance);
    await this.creditNotes.insert(tx, change.creditNote);
    await this.invoices.update(tx, change);
    return { creditNote: change.creditNote, invoice: change.invoice };
  }

  get(tenant: TenantRef, id: string): Promise<CreditNote> {
    return this.creditNotes.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, filter: CreditNoteFilter): Promise<{ creditNotes: CreditNote[]; page: PageInfo }> {
    return this.creditNotes.list(tenant, page, filter);
  }
}
