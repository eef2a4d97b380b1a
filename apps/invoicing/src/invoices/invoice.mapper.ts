import { create } from '@bufbuild/protobuf';
import { invoiceV1, type InvoiceJson, presentInvoice, toMoneyMessage } from '@recur/contracts';
import { type CollectionMethod, type InvoiceStatus } from '@recur/vocabulary';
import { type Metadata, unixSeconds } from '@recur/kernel';
import { fromInt64, money, subtract, toInt64 } from '@recur/money';
import type { Invoice as InvoiceRow, InvoiceLine as InvoiceLineRow, Prisma } from '../generated/prisma/client';
import { type CustomerDetails, type Invoice, type InvoiceLine, isFinalInvoice } from './invoice';
import { fromTaxAmountRow, type TaxAmountRow, toTaxAmountMessage, toTaxAmountRow } from '../tax-rates/tax-rate.mapper';
import type { TaxExemptStatus } from '@recur/vocabulary';

export type InvoiceRowWithLines = InvoiceRow & { lines: InvoiceLineRow[] };

const seconds = (date: Date | null): bigint => (date ? BigInt(unixSeconds(date)) : 0n);

/**
 * What refunds gave back of a row's amount paid. A row refunded before amount_refunded existed
 * (or by a release that wrote only the status) reads as refunded in full, which it is.
 */
function refundedOf(row: InvoiceRow): bigint {
  return row.status === 'refunded' && row.amountRefunded === 0n ? row.amountPaid : row.amountRefunded;
}

export function fromInvoiceRow(row: InvoiceRowWithLines): Invoice {
  const amount = (value: bigint) => money(fromInt64(value), row.currency);
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    number: row.number,
    status: row.status as InvoiceStatus,
    customer: { id: row.customerId, name: row.customerName, email: row.customerEmail },
    subscriptionId: row.subscriptionId,
    billingReason: row.billingReason,
    collectionMethod: row.collectionMethod as CollectionMethod,
    currency: row.currency,
    description: row.description,
    lines: [...row.lines]
      .sort((a, b) => a.position - b.position)
      .map((line) => ({
        id: line.id,
        kind: line.kind,
        description: line.description,
        quantity: fromInt64(line.quantity, 'quantity'),
        amount: amount(line.amount),
        periodStart: line.periodStart,
        periodEnd: line.periodEnd,
        taxAmounts: (line.taxAmounts as unknown as TaxAmountRow[]).map((tax) => fromTaxAmountRow(tax, row.currency)),
      })),
    subtotal: amount(row.subtotal),
    discount: amount(row.discount),
    tax: amount(row.tax),
    totalTaxAmounts: (row.totalTaxAmounts as unknown as TaxAmountRow[]).map((tax) => fromTaxAmountRow(tax, row.currency)),
    customerTaxExempt: row.customerTaxExempt as TaxExemptStatus,
    total: amount(row.total),
    amountDue: amount(row.amountDue),
    amountPaid: amount(row.amountPaid),
    amountRefunded: amount(refundedOf(row)),
    amountCredited: amount(row.amountCredited),
    startingBalance: amount(row.startingBalance),
    endingBalance: amount(row.endingBalance),
    dueDate: row.dueDate.toISOString().slice(0, 10),
    periodStart: row.periodStart ?? row.finalPeriodStart,
    periodEnd: row.periodEnd,
    paymentUrl: row.paymentUrl,
    paymentToken: row.paymentToken,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    finalizedAt: row.finalizedAt,
    paidAt: row.paidAt,
    voidedAt: row.voidedAt,
    paymentAttemptCount: row.paymentAttemptCount,
    paymentRetryAt: row.paymentRetryAt ?? [],
    customerDetails: fromCustomerDetailsRow(row.customerDetails as CustomerDetailsRow | null),
    creditRefundInvoiceId: row.creditRefundInvoiceId,
  };
}

/** The customer_details column: the public JSON's snake_case names. */
interface CustomerDetailsRow {
  address: { line1: string | null; line2: string | null; city: string | null; region: string | null; postal_code: string | null; country: string | null } | null;
  phone: string | null;
  tax_ids: { type: string; value: string }[];
}

function fromCustomerDetailsRow(row: CustomerDetailsRow | null): CustomerDetails | null {
  if (!row) return null;
  const { address } = row;
  return {
    address: address ? { line1: address.line1, line2: address.line2, city: address.city, region: address.region, postalCode: address.postal_code, country: address.country } : null,
    phone: row.phone,
    taxIds: row.tax_ids.map(({ type, value }) => ({ type, value })),
  };
}

function toCustomerDetailsRow(details: CustomerDetails): CustomerDetailsRow {
  const { address } = details;
  return {
    address: address ? { line1: address.line1, line2: address.line2, city: address.city, region: address.region, postal_code: address.postalCode, country: address.country } : null,
    phone: details.phone,
    tax_ids: details.taxIds.map(({ type, value }) => ({ type, value })),
  };
}

/** The columns a change may rewrite (lines never change after creation). */
export function toInvoiceColumns(invoice: Invoice): Omit<Prisma.InvoiceUncheckedCreateInput, 'lines'> {
  return {
    id: invoice.id,
    accountId: invoice.tenant.accountId,
    livemode: invoice.tenant.livemode,
    number: invoice.number,
    status: invoice.status,
    customerId: invoice.customer.id,
    customerName: invoice.customer.name,
    customerEmail: invoice.customer.email,
    subscriptionId: invoice.subscriptionId,
    billingReason: invoice.billingReason,
    collectionMethod: invoice.collectionMethod,
    currency: invoice.currency,
    description: invoice.description,
    subtotal: toInt64(invoice.subtotal.amountMinor),
    discount: toInt64(invoice.discount.amountMinor),
    tax: toInt64(invoice.tax.amountMinor),
    totalTaxAmounts: invoice.totalTaxAmounts.map(toTaxAmountRow) as unknown as Prisma.InputJsonValue,
    customerTaxExempt: invoice.customerTaxExempt,
    // Left out while null: a draft's column stays NULL, and once recorded it never changes.
    customerDetails: invoice.customerDetails === null ? undefined : toCustomerDetailsRow(invoice.customerDetails) as unknown as Prisma.InputJsonValue,
    total: toInt64(invoice.total.amountMinor),
    amountDue: toInt64(invoice.amountDue.amountMinor),
    amountPaid: toInt64(invoice.amountPaid.amountMinor),
    amountRefunded: toInt64(invoice.amountRefunded.amountMinor),
    amountCredited: toInt64(invoice.amountCredited.amountMinor),
    creditRefundInvoiceId: invoice.creditRefundInvoiceId,
    startingBalance: toInt64(invoice.startingBalance.amountMinor),
    endingBalance: toInt64(invoice.endingBalance.amountMinor),
    dueDate: new Date(`${invoice.dueDate}T00:00:00Z`),
    // A final invoice's period start is its key column (final_period_start), not the period invoice's.
    ...(isFinalInvoice(invoice) ? { periodStart: null, finalPeriodStart: invoice.periodStart } : { periodStart: invoice.periodStart, finalPeriodStart: null }),
    periodEnd: invoice.periodEnd,
    paymentUrl: invoice.paymentUrl,
    paymentToken: invoice.paymentToken,
    metadata: invoice.metadata,
    createdAt: invoice.createdAt,
    updatedAt: invoice.updatedAt,
    finalizedAt: invoice.finalizedAt,
    paidAt: invoice.paidAt,
    voidedAt: invoice.voidedAt,
    paymentAttemptCount: invoice.paymentAttemptCount,
    paymentRetryAt: invoice.paymentRetryAt,
  };
}

export function toInvoiceLineRows(invoice: Invoice): Prisma.InvoiceLineCreateManyInput[] {
  return invoice.lines.map((line, position) => ({
    id: line.id,
    invoiceId: invoice.id,
    accountId: invoice.tenant.accountId,
    livemode: invoice.tenant.livemode,
    position,
    kind: line.kind,
    description: line.description,
    quantity: toInt64(line.quantity, 'quantity'),
    amount: toInt64(line.amount.amountMinor),
    periodStart: line.periodStart,
    periodEnd: line.periodEnd,
    taxAmounts: line.taxAmounts.map(toTaxAmountRow) as unknown as Prisma.InputJsonValue,
  }));
}

export function toLineMessage(line: InvoiceLine): invoiceV1.InvoiceLine {
  return create(invoiceV1.InvoiceLineSchema, {
    id: line.id,
    kind: line.kind,
    description: line.description,
    quantity: toInt64(line.quantity, 'quantity'),
    amount: toMoneyMessage(line.amount),
    periodStart: seconds(line.periodStart),
    periodEnd: seconds(line.periodEnd),
    taxAmounts: line.taxAmounts.map(toTaxAmountMessage),
  });
}

export function toInvoiceMessage(invoice: Invoice): invoiceV1.Invoice {
  return create(invoiceV1.InvoiceSchema, {
    id: invoice.id,
    livemode: invoice.tenant.livemode,
    number: invoice.number ?? '',
    status: invoice.status,
    customerId: invoice.customer.id,
    subscriptionId: invoice.subscriptionId ?? '',
    billingReason: invoice.billingReason,
    collectionMethod: invoice.collectionMethod,
    currency: invoice.currency,
    lines: invoice.lines.map(toLineMessage),
    subtotal: toMoneyMessage(invoice.subtotal),
    discount: toMoneyMessage(invoice.discount),
    total: toMoneyMessage(invoice.total),
    totalTaxAmounts: invoice.totalTaxAmounts.map(toTaxAmountMessage),
    tax: toMoneyMessage(invoice.tax),
    totalExcludingTax: toMoneyMessage(subtract(invoice.total, invoice.tax)),
    customerTaxExempt: invoice.customerTaxExempt,
    customerDetails: invoice.customerDetails === null ? undefined : {
      address: invoice.customerDetails.address === null ? undefined : {
        line1: invoice.customerDetails.address.line1 ?? '', line2: invoice.customerDetails.address.line2 ?? '', city: invoice.customerDetails.address.city ?? '',
        region: invoice.customerDetails.address.region ?? '', postalCode: invoice.customerDetails.address.postalCode ?? '', country: invoice.customerDetails.address.country ?? '',
      },
      phone: invoice.customerDetails.phone ?? '',
      taxIds: invoice.customerDetails.taxIds.map(({ type, value }) => ({ type, value })),
    },
    amountDue: toMoneyMessage(invoice.amountDue),
    amountPaid: toMoneyMessage(invoice.amountPaid),
    amountRefunded: toMoneyMessage(invoice.amountRefunded),
    amountCredited: toMoneyMessage(invoice.amountCredited),
    creditRefundInvoiceId: invoice.creditRefundInvoiceId ?? '',
    startingBalance: toMoneyMessage(invoice.startingBalance),
    endingBalance: toMoneyMessage(invoice.endingBalance),
    dueDate: invoice.dueDate,
    periodStart: seconds(invoice.periodStart),
    periodEnd: seconds(invoice.periodEnd),
    description: invoice.description ?? '',
    customerName: invoice.customer.name,
    customerEmail: invoice.customer.email,
    paymentUrl: invoice.paymentUrl ?? '',
    created: seconds(invoice.createdAt),
    finalizedAt: seconds(invoice.finalizedAt),
    paidAt: seconds(invoice.paidAt),
    voidedAt: seconds(invoice.voidedAt),
    metadata: invoice.metadata,
  });
}

export const toInvoiceJson = (invoice: Invoice): InvoiceJson => presentInvoice(toInvoiceMessage(invoice));
