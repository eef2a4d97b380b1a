import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { salesLinkV1 } from '@recur/contracts';
import { CLOCK, type Clock, invalidArgument, newId, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { createCustomer } from '../customers/customer';
import { CustomersRepository } from '../customers/customers.repository';
import type { Prisma } from '../generated/prisma/client';
import { Commands } from '../infrastructure/commands';
import { CatalogPlans } from '../subscriptions/catalog-plans.client';
import { recurringLines } from '../subscriptions/subscription';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { type SaleInvoice, SalesLinkInvoicing } from './sales-link-invoicing.client';
import { assertSellable, createSalesLink, type NewSalesLink, type SalesLink, type SalesLinkCheckout, setActive } from './sales-link';
import { SalesLinksRepository } from './sales-links.repository';

type Tx = Prisma.TransactionClient;

/** One period of the link's plan at its interval (quantity 1, no code), priced by @recur/pricing as invoices are. */
export interface SalesLinkOffer {
  planName: string;
  amount: number;
  currency: string;
}

export interface CheckoutForm {
  checkoutToken: string;
  name: string;
  email: string;
  promotionCode: string;
}

const CHECKOUT_TOKEN_MAX = 100;
/** How long a sale waits for the billing clock to raise its first invoice before answering without it. */
const FIRST_INVOICE_WAIT_MS = 15_000;
const FIRST_INVOICE_POLL_MS = 100;

/**
 * Sales links: the seller's API (create, list, retrieve, activate, deactivate, checkouts) and
 * the hosted checkout's two calls — the offer for the page, and the sale, made once per form
 * token: the customer (reused by e-mail in the app), then for a `plan` link the subscription
 * (the same use case as the API's) and, through the billing clock, its first invoice; for a
 * `one_time` link a one-off invoice of the offer raised through invoicing. Either invoice has
 * billing_reason `sales_link`.
 */
@Injectable()
export class SalesLinksService {
  constructor(
    private readonly links: SalesLinksRepository,
    private readonly customers: CustomersRepository,
    private readonly subscriptions: SubscriptionsService,
    private readonly catalog: CatalogPlans,
    private readonly invoicing: SalesLinkInvoicing,
    private readonly commands: Commands,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: Tx, tenant: TenantRef, fields: NewSalesLink): Promise<SalesLink> {
    const link = createSalesLink(tenant, fields, this.now());
    const plan = await this.catalog.sellable(tenant, fields.planId);
    if (!plan.billingIntervals.includes(link.billingInterval)) {
      throw invalidArgument('billing_interval', `Plan '${plan.id}' is not sold ${link.billingInterval}; it offers ${plan.billingIntervals.join(', ')}`);
    }
    await this.links.insert(tx, link);
    return link;
  }

  get(tenant: TenantRef, id: string): Promise<SalesLink> {
    return this.links.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page): Promise<{ links: SalesLink[]; page: PageInfo }> {
    return this.links.list(tenant, page);
  }

  async setActive(tx: Tx, tenant: TenantRef, id: string, active: boolean): Promise<SalesLink> {
    const link = setActive(await this.links.getForUpdate(tx, tenant, id), active, this.now());
    await this.links.update(tx, link);
    return link;
  }

  async checkouts(tenant: TenantRef, id: string, page: Page): Promise<{ checkouts: SalesLinkCheckout[]; page: PageInfo }> {
    await this.links.get(tenant, id);
    return this.links.checkouts(tenant, id, page);
  }

  /** The sale whose first invoice this is, and its link (the return page sends its buyer to the link's success URL). */
  async checkoutOfInvoice(tenant: TenantRef, invoiceId: string): Promise<{ link: SalesLink; checkout: SalesLinkCheckout }> {
    const checkout = await this.links.checkoutOfInvoice(tenant, invoiceId);
    return { link: await this.links.get(tenant, checkout.salesLinkId), checkout };
  }

  /** The link behind a public token, with its offer (an inactive link too: its page says so). */
  async page(token: string): Promise<{ link: SalesLink; offer: SalesLinkOffer }> {
    return this.offerOf(await this.links.byToken(token));
  }

  private async offerOf(link: SalesLink): Promise<{ link: SalesLink; offer: SalesLinkOffer }> {
    const plan = await this.catalog.sellable(link.tenant, link.planId);
    const lines = recurringLines({ price: plan.price, quantity: 1, billingInterval: link.billingInterval as never, addOns: [] });
    return { link, offer: { planName: plan.price.name, amount: lines.reduce((sum, line) => sum + line.amount, 0), currency: plan.price.currency } };
  }

  /**
   * A buyer's submitted form. The sale is a command keyed by the form's one-time token, so a
   * double submit (or a reload of the answer) gets the first sale back, never a second one.
   */
  async checkOut(token: string, form: CheckoutForm): Promise<{ link: SalesLink; checkout: SalesLinkCheckout }> {
    const link = await this.links.byToken(token);
    if (!form.checkoutToken || form.checkoutToken.length > CHECKOUT_TOKEN_MAX) throw invalidArgument('checkout_token', 'The form has no valid checkout token.');
    const { tenant } = link;
    const requestId = `checkout:${link.id}:${form.checkoutToken}`;
    const { checkout: made } = await this.commands.run(tenant, { requestId }, salesLinkV1.CheckOutSalesLinkResponseSchema, async (tx) => {
      assertSellable(await this.links.getForUpdate(tx, tenant, link.id));
      const customerId = await this.customerFor(tx, tenant, form);
      const code = form.promotionCode.trim();
      if (code && !link.allowPromotionCodes) throw invalidArgument('promotion_code', 'This link does not take promotion codes.');
      if (link.kind === 'one_time') {
        // The invoice is raised after the commit: invoicing looks the (maybe new) customer up here.
        const checkout: SalesLinkCheckout = {
          id: newId('chk'), tenant, salesLinkId: link.id, checkoutToken: form.checkoutToken, customerId, subscriptionId: null,
          invoiceId: null, status: 'open', createdAt: this.now(), completedAt: null,
        };
        await this.links.insertCheckout(tx, checkout);
        return { checkout: { id: checkout.id } };
      }
      const subscription = await this.subscriptions.create(tx, tenant, {
        customerId,
        planId: link.planId,
        billingInterval: link.billingInterval,
        trialDays: link.trialDays > 0 ? link.trialDays : undefined,
        promotionCode: code || undefined,
        firstInvoiceReason: 'sales_link',
      }, requestId);
      const now = this.now();
      // A trial sells without a payment now: the sale is complete when it is made.
      const trialing = subscription.status === 'trialing';
      const checkout: SalesLinkCheckout = {
        id: newId('chk'), tenant, salesLinkId: link.id, checkoutToken: form.checkoutToken, customerId, subscriptionId: subscription.id,
        invoiceId: null, status: trialing ? 'completed' : 'open', createdAt: now, completedAt: trialing ? now : null,
      };
      await this.links.insertCheckout(tx, checkout);
      // The sale's id is all the record keeps: a repeat reads the checkout as it is now.
      return { checkout: { id: checkout.id } };
    });
    const checkout = await this.links.checkout(made!.id);
    if (link.kind === 'one_time') return { link, checkout: await this.invoiceSale(link, checkout) };
    return { link, checkout: await this.awaitFirstInvoice(checkout) };
  }

  /** A one_time sale's invoice: the offer as the page showed it, raised once per sale (a repeat gets the same invoice). */
  private async invoiceSale(link: SalesLink, checkout: SalesLinkCheckout): Promise<SalesLinkCheckout> {
    if (checkout.invoiceId) return checkout;
    const { offer } = await this.offerOf(link);
    const sale: SaleInvoice = {
      tenant: link.tenant, customerId: checkout.customerId, checkoutId: checkout.id, salesLinkId: link.id,
      description: `${link.title} (${offer.planName})`, amount: offer.amount, currency: offer.currency,
    };
    return this.links.recordInvoice(checkout, await this.invoicing.raiseSaleInvoice(sale));
  }

  /** The customer with the form's e-mail in the app (the oldest), or a new one; one per e-mail even when two sales race. */
  private async customerFor(tx: Tx, tenant: TenantRef, form: CheckoutForm): Promise<string> {
    const email = form.email.trim();
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`customer-email:${tenant.accountId}:${tenant.livemode}:${email.toLowerCase()}`}, 0))`;
    const existing = await this.customers.findByEmail(tx, tenant, email);
    if (existing) return existing.id;
    const change = createCustomer(tenant, { name: form.name.trim(), email, testClockId: null }, this.now());
    await this.customers.insert(tx, change);
    return change.customer.id;
  }

  /** The billing clock raises the first invoice right after the commit; the buyer's page waits for it, briefly. */
  private async awaitFirstInvoice(checkout: SalesLinkCheckout): Promise<SalesLinkCheckout> {
    if (checkout.status === 'completed') return checkout;
    // A wait bounded by its number of looks: the engine's clock may be a test's frozen one.
    for (let look = 1; ; look += 1) {
      const recorded = await this.links.recordFirstInvoice(checkout);
      if (recorded.invoiceId || look * FIRST_INVOICE_POLL_MS >= FIRST_INVOICE_WAIT_MS) return recorded;
      await sleep(FIRST_INVOICE_POLL_MS);
    }
  }
}
