import { BILLING_INTERVALS } from '@recur/pricing';
import { failedPrecondition, invalidArgument, newId, type TenantRef } from '@recur/kernel';
import { randomBytes } from 'node:crypto';

/**
 * What a link sells. `plan`: a subscription to one plan at one interval. `one_time`: one
 * payment of the price of one period of that plan at that interval, on a one-off invoice
 * (no subscription, so no trial and no promotion code: coupons discount subscriptions).
 */
export const SALES_LINK_KINDS = ['plan', 'one_time'] as const;
export type SalesLinkKind = (typeof SALES_LINK_KINDS)[number];

export const SALES_LINK_TITLE_MAX = 200;
export const SALES_LINK_TRIAL_DAYS_MAX = 730;

export interface SalesLink {
  id: string;
  tenant: TenantRef;
  kind: SalesLinkKind;
  title: string;
  planId: string;
  billingInterval: string;
  trialDays: number;
  allowPromotionCodes: boolean;
  successUrl: string;
  active: boolean;
  /** The public url's unguessable part: 32 random bytes, base64url. */
  token: string;
  createdAt: Date;
  updatedAt: Date;
}

export type CheckoutStatus = 'open' | 'completed';

/** One sale made through a link: open until its invoice (a plan's first, or a one-time sale's only one) is paid. */
export interface SalesLinkCheckout {
  id: string;
  tenant: TenantRef;
  salesLinkId: string;
  checkoutToken: string;
  customerId: string;
  /** The subscription a `plan` sale made; null for a `one_time` sale. */
  subscriptionId: string | null;
  invoiceId: string | null;
  status: CheckoutStatus;
  createdAt: Date;
  completedAt: Date | null;
}

export interface NewSalesLink {
  kind: string;
  title: string;
  planId: string;
  billingInterval: string;
  trialDays: number;
  allowPromotionCodes: boolean;
  successUrl: string;
}

/** Checks a new link's own fields (the plan and its intervals are the catalog's: checked by the service). */
export function createSalesLink(tenant: TenantRef, fields: NewSalesLink, now: Date): SalesLink {
  if (!(SALES_LINK_KINDS as readonly string[]).includes(fields.kind)) throw invalidArgument('kind', `kind must be one of ${SALES_LINK_KINDS.join(', ')}`);
  const title = fields.title.trim();
  if (!title || title.length > SALES_LINK_TITLE_MAX) throw invalidArgument('title', `title must be 1 to ${SALES_LINK_TITLE_MAX} characters`);
  if (!(BILLING_INTERVALS as readonly string[]).includes(fields.billingInterval)) {
    throw invalidArgument('billing_interval', `billing_interval must be one of ${BILLING_INTERVALS.join(', ')}`);
  }
  if (!Number.isInteger(fields.trialDays) || fields.trialDays < 0 || fields.trialDays > SALES_LINK_TRIAL_DAYS_MAX) {
    throw invalidArgument('trial_days', `trial_days must be an integer from 0 to ${SALES_LINK_TRIAL_DAYS_MAX}`);
  }
  if (fields.kind === 'one_time' && fields.trialDays > 0) throw invalidArgument('trial_days', 'A one_time link sells without a trial: trial_days must be 0.');
  if (fields.kind === 'one_time' && fields.allowPromotionCodes) {
    throw invalidArgument('allow_promotion_codes', 'A one_time link takes no promotion codes (they discount subscriptions).');
  }
  if (fields.successUrl && !isHttpUrl(fields.successUrl)) throw invalidArgument('success_url', 'success_url must be an http or https URL');
  return {
    id: newId('slink'),
    tenant,
    kind: fields.kind as SalesLinkKind,
    title,
    planId: fields.planId,
    billingInterval: fields.billingInterval,
    trialDays: fields.trialDays,
    allowPromotionCodes: fields.allowPromotionCodes,
    successUrl: fields.successUrl,
    active: true,
    token: randomBytes(32).toString('base64url'),
    createdAt: now,
    updatedAt: now,
  };
}

/** Activating an active link (or deactivating an inactive one) is refused: the caller's view is stale. */
export function setActive(link: SalesLink, active: boolean, now: Date): SalesLink {
  if (link.active === active) {
    throw failedPrecondition(active ? 'sales_link_already_active' : 'sales_link_already_inactive', `Sales link '${link.id}' is already ${active ? 'active' : 'inactive'}.`);
  }
  return { ...link, active, updatedAt: now };
}

/** The placeholder a success URL may hold for the sale's id (as Stripe's `{CHECKOUT_SESSION_ID}`). */
export const CHECKOUT_ID_PLACEHOLDER = '{CHECKOUT_ID}';

/**
 * Where the buyer of `checkout` goes once it is paid (at once for a trial): the link's own
 * success URL, never one from a request, so no page can be made to redirect elsewhere.
 * Empty when the link has none.
 */
export function successUrlOf(link: SalesLink, checkout: SalesLinkCheckout): string {
  return link.successUrl.split(CHECKOUT_ID_PLACEHOLDER).join(encodeURIComponent(checkout.id));
}

/** A sale needs an active link. */
export function assertSellable(link: SalesLink): void {
  if (!link.active) throw failedPrecondition('sales_link_inactive', 'This sales link is no longer available.');
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && value.length <= 2000;
  } catch {
    return false;
  }
}
