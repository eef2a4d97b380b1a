import { invalidArgument, newId, notFound, type TenantRef } from '@recur/kernel';
import type { PaymentProvider } from '@recur/vocabulary';
import { checkPhoneNumber, checkProvider } from '../payments/payment';

/**
 * Where the payer agreed to be charged on a number: asserted by the merchant through the API, or
 * ticked on one of Recur's pages (an invoice's hosted payment page, a sales link's checkout).
 */
export const CONSENT_SOURCES = ['api', 'payment_page', 'checkout'] as const;
export type ConsentSource = (typeof CONSENT_SOURCES)[number];

/** A payer's mobile-money number, saved with their consent, that automatic collection may charge. */
export interface PaymentMethod {
  id: string;
  tenant: TenantRef;
  customerId: string;
  /** E.164. */
  phoneNumber: string;
  provider: PaymentProvider;
  isDefault: boolean;
  consentAt: Date;
  consentSource: ConsentSource;
  createdAt: Date;
  updatedAt: Date;
  detachedAt: Date | null;
}

export interface NewPaymentMethodFields {
  customerId: string;
  phoneNumber: string;
  provider: string;
  consent: boolean;
  consentSource: string;
  /** When the payer agreed (a page: when they ticked the box and paid); absent: now. */
  consentAt?: Date;
}

/**
 * A new method, checked as a payment's number is (international format, valid, in its provider's
 * country). Without the payer's consent nothing is saved: Recur never pushes a prompt to a number
 * its owner did not agree to (400 consent_required).
 */
export function newPaymentMethod(tenant: TenantRef, fields: NewPaymentMethodFields, now: Date): PaymentMethod {
  if (fields.consent !== true) throw invalidArgument('consent', 'consent must be true: the payer must agree to be charged on this number', 'consent_required');
  if (!(CONSENT_SOURCES as readonly string[]).includes(fields.consentSource)) throw invalidArgument('consent_source', `consent_source must be one of ${CONSENT_SOURCES.join(', ')}`);
  const provider = checkProvider(fields.provider);
  return {
    id: newId('pm'),
    tenant,
    customerId: fields.customerId,
    phoneNumber: checkPhoneNumber(fields.phoneNumber, provider),
    provider,
    isDefault: false,
    consentAt: fields.consentAt ?? now,
    consentSource: fields.consentSource as ConsentSource,
    createdAt: now,
    updatedAt: now,
    detachedAt: null,
  };
}

export const paymentMethodNotFound = (id: string) => notFound('payment_method', id);
