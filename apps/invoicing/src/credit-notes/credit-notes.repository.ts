import { Injectable } from '@nestjs/common';
import { notFound, type Page, type TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { type CreditNote, formatCreditNoteNumber } from './credit-note';
import { fromCreditNoteRow, toCreditNoteRow } from './credit-note.mapper';

type Tx = Prisma.TransactionClient;

export interface CreditNoteFilter {
  invoiceId?: string;
  customerId?: string;
}

/** Credit notes in the service's database; every query is scoped to one tenant. */
@Injectable()
export class CreditNotesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<CreditNote> {
    const row = await tx.creditNote.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('credit_note', id);
    return fromCreditNoteRow(row);
  }

  async find(tx: Tx, tenant: TenantRef, id: string): Promise<CreditNote | undefined> {
    const row = await tx.creditNote.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    return row ? fromCreditNoteRow(row) : undefined;
  }

  async list(tenant: TenantRef, page: Page, filter: CreditNoteFilter): Promise<{ creditNotes: CreditNote[]; total: number }> {
    const where = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      ...(filter.invoiceId === undefined ? {} : { invoiceId: filter.invoiceId }),
      ...(filter.customerId === undefined ? {} : { customerId: filter.customerId }),
    };
    const [rows, total] = await Promise.all([
      this.prisma.creditNote.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: page.offset, take: page.limit }),
      this.prisma.creditNote.count({ where }),
    ]);
    return { creditNotes: rows.map(fromCreditNoteRow), total };
  }

  /** The next credit note number of the tenant: gapless, as invoice numbers are (InvoicesRepository.nextNumber). */
  async nextNumber(tx: Tx, tenant: TenantRef): Promise<string> {
    const [{ last_number }] = await tx.$queryRaw<{ last_number: number }[]>`
      INSERT INTO credit_note_number_counters (account_id, livemode, last_number) VALUES (${tenant.accountId}, ${tenant.livemode}, 1)
      ON CONFLICT (account_id, livemode) DO UPDATE SET last_number = credit_note_number_counters.last_number + 1
      RETURNING last_number`;
    return formatCreditNoteNumber(last_number);
  }

  async insert(tx: Tx, note: CreditNote): Promise<void> {
    const row = toCreditNoteRow(note);
    await tx.creditNote.create({ data: { ...row, taxAmounts: row.taxAmounts as Prisma.InputJsonValue } });
  }
}
