import { create } from '@bufbuild/protobuf';
import { paymentsV1, type PaymentJson, presentPayment, toMoneyMessage } from '@recur/contracts';
import { unixSeconds } from '@recur/kernel';
import { fromInt64, money, toInt64 } from '@recur/money';
import type { PaymentProvider, PaymentStatus } from '@recur/vocabulary';
import type { Payment as PaymentRow, Prisma } from '../generated/prisma/client';
import type { AdapterName, PageConsentSource, Payment, PaymentChannel } from './payment';

const seconds = (date: Date | null): bigint => (date ? BigInt(unixSeconds(date)) : 0n);

export function fromPaymentRow(row: PaymentRow): Payment {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    invoiceId: row.invoiceId,
    invoiceNumber: row.invoiceNumber,
    status: row.status as PaymentStatus,
    amount: money(fromInt64(row.amount), row.currency),
    phoneNumber: row.phoneNumber,
    provider: row.provider as PaymentProvider,
    adapter: row.adapter as AdapterName,
    channel: row.channel as PaymentChannel,
    providerPaymentId: row.providerPaymentId,
    pageToken: row.pageToken,
    redirectUrl: row.redirectUrl,
    failureCode: row.failureCode,
    failureMessage: row.failureMessage,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    settledAt: row.settledAt,
    unappliedReason: row.unappliedReason,
    refundId: row.refundId,
    customerId: row.customerId,
    saveMethodSource: row.saveMethodSource as PageConsentSource | null,
  };
}

/** The columns of a payment (the janitor's columns are the repository's). */
export function toPaymentColumns(payment: Payment): Omit<Prisma.PaymentUncheckedCreateInput, 'dueAt' | 'leaseUntil' | 'attempts' | 'lastError' | 'invoiceAppliedAt'> {
  return {
    id: payment.id,
    accountId: payment.tenant.accountId,
    livemode: payment.tenant.livemode,
    invoiceId: payment.invoiceId,
    invoiceNumber: payment.invoiceNumber,
    status: payment.status,
    amount: toInt64(payment.amount.amountMinor),
    currency: payment.amount.currency,
    phoneNumber: payment.phoneNumber,
    provider: payment.provider,
    adapter: payment.adapter,
    channel: payment.channel,
    providerPaymentId: payment.providerPaymentId,
    pageToken: payment.pageToken,
    redirectUrl: payment.redirectUrl,
    failureCode: payment.failureCode,
    failureMessage: payment.failureMessage,
    createdAt: payment.createdAt,
    updatedAt: payment.updatedAt,
    settledAt: payment.settledAt,
    unappliedReason: payment.unappliedReason,
    refundId: payment.refundId,
    customerId: payment.customerId,
    saveMethodSource: payment.saveMethodSource,
  };
}

export function toPaymentMessage(payment: Payment): paymentsV1.Payment {
  return create(paymentsV1.PaymentSchema, {
    id: payment.id,
    livemode: payment.tenant.livemode,
    invoiceId: payment.invoiceId,
    invoiceNumber: payment.invoiceNumber,
    status: payment.status,
    amount: toMoneyMessage(payment.amount),
    phoneNumber: payment.phoneNumber,
    provider: payment.provider,
    redirectUrl: payment.redirectUrl,
    failureCode: payment.failureCode ?? '',
    failureMessage: payment.failureMessage ?? '',
    created: seconds(payment.createdAt),
    settledAt: seconds(payment.settledAt),
    unappliedReason: payment.unappliedReason ?? '',
    refundId: payment.refundId ?? '',
    customerId: payment.customerId,
    saveMethodSource: payment.saveMethodSource ?? '',
  });
}

export const toPaymentJson = (payment: Payment): PaymentJson => presentPayment(toPaymentMessage(payment));
