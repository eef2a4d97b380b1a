import { Injectable } from '@nestjs/common';
import { notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, readListPage } from '@recur/persistence';
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

  async list(tenant: TenantRef, page: Page, filter: CreditNoteFilter): Promise<{ creditNotes: CreditNote[]; page: PageInfo }> {
    const where = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      ...(filter.invoiceId === undefined ? {} : { invoiceId: filter.invoiceId }),
      ...(filter.customerId === undefined ? {} : { customerId: filter.customerId }),
    };
    const { rows, page: info } = await readListPage(page, {
      resource: 'credit note', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.creditNote.findMany(read),
      count: (query) => this.prisma.creditNote.count(query),
    });
    return { creditNotes: rows.map(fromCreditNoteRow), page: info };
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
    await tx.creditNote.create({ data: { ...row, taxAmounts: row.taxAmounts as Prisma.InputJsonValue, metadata: row.metadata as Prisma.InputJsonValue } });
  }
}
