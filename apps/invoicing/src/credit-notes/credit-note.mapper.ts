import { create } from '@bufbuild/protobuf';
import { creditNoteV1, type CreditNoteJson, presentCreditNote, toMoneyMessage } from '@recur/contracts';
import { type Metadata, unixSeconds } from '@recur/kernel';
import { fromInt64, money, sum, toInt64 } from '@recur/money';
import type { Prisma } from '../generated/prisma/client';
import { fromTaxAmountRow, type TaxAmountRow, toTaxAmountMessage, toTaxAmountRow } from '../tax-rates/tax-rate.mapper';
import type { CreditNoteReason, RefundReason } from '@recur/vocabulary';
import type { CreditNote as CreditNoteRow } from '../generated/prisma/client';
import type { CreditedTo, CreditNote } from './credit-note';

export function fromCreditNoteRow(row: CreditNoteRow): CreditNote {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    number: row.number,
    invoiceId: row.invoiceId,
    invoiceNumber: row.invoiceNumber,
    customer: { id: row.customerId, name: row.customerName, email: row.customerEmail },
    amount: money(fromInt64(row.amount), row.currency),
    taxAmounts: (row.taxAmounts as unknown as TaxAmountRow[]).map((tax) => fromTaxAmountRow(tax, row.currency)),
    reason: row.reason as RefundReason | CreditNoteReason,
    paymentId: row.paymentId,
    creditedTo: row.creditedTo as CreditedTo,
    memo: row.memo,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
  };
}

export function toCreditNoteRow(note: CreditNote): CreditNoteRow {
  return {
    id: note.id,
    accountId: note.tenant.accountId,
    livemode: note.tenant.livemode,
    number: note.number,
    invoiceId: note.invoiceId,
    invoiceNumber: note.invoiceNumber,
    customerId: note.customer.id,
    customerName: note.customer.name,
    customerEmail: note.customer.email,
    currency: note.amount.currency,
    amount: toInt64(note.amount.amountMinor),
    reason: note.reason,
    paymentId: note.paymentId,
    creditedTo: note.creditedTo,
    memo: note.memo,
    metadata: note.metadata as Prisma.JsonValue,
    taxAmounts: note.taxAmounts.map(toTaxAmountRow) as unknown as Prisma.JsonValue,
    createdAt: note.createdAt,
  };
}

export function toCreditNoteMessage(note: CreditNote): creditNoteV1.CreditNote {
  return create(creditNoteV1.CreditNoteSchema, {
    id: note.id,
    livemode: note.tenant.livemode,
    number: note.number,
    invoiceId: note.invoiceId,
    invoiceNumber: note.invoiceNumber,
    customerId: note.customer.id,
    customerName: note.customer.name,
    customerEmail: note.customer.email,
    amount: toMoneyMessage(note.amount),
    reason: note.reason,
    paymentId: note.paymentId,
    created: BigInt(unixSeconds(note.createdAt)),
    taxAmounts: note.taxAmounts.map(toTaxAmountMessage),
    tax: toMoneyMessage(sum(note.amount.currency, note.taxAmounts.map((tax) => tax.amount))),
    creditedTo: note.creditedTo,
    memo: note.memo ?? '',
    metadata: note.metadata,
  });
}

export const toCreditNoteJson = (note: CreditNote): CreditNoteJson => presentCreditNote(toCreditNoteMessage(note));
