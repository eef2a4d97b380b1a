import { Injectable } from '@nestjs/common';
import { notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, readListPage } from '@recur/persistence';
import type { Prisma, SalesLink as SalesLinkRow, SalesLinkCheckout as CheckoutRow } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { CheckoutStatus, SalesLink, SalesLinkCheckout, SalesLinkKind } from './sales-link';

type Tx = Prisma.TransactionClient;


/** Sales links and their checkouts; every query by id is scoped to one tenant (the token alone finds a link for its page). */
@Injectable()
export class SalesLinksRepository {
  constructor(private readonly prisma: PrismaService) {}

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<SalesLink> {
    const row = await tx.salesLink.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('sales_link', id);
    return fromLinkRow(row);
  }

  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<SalesLink> {
    await tx.$executeRaw`SELECT 1 FROM sales_links WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }

  async byToken(token: string): Promise<SalesLink> {
    const row = token ? await this.prisma.salesLink.findUnique({ where: { token } }) : null;
    if (!row) throw notFound('sales_link', 'by token');
    return fromLinkRow(row);
  }

  async list(tenant: TenantRef, page: Page): Promise<{ links: SalesLink[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode };
    const { rows, page: info } = await readListPage(page, {
      resource: 'sales link', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.salesLink.findMany(read),
      count: (query) => this.prisma.salesLink.count(query),
    });
    return { links: rows.map(fromLinkRow), page: info };
  }

  async insert(tx: Tx, link: SalesLink): Promise<void> {
    await tx.salesLink.create({ data: { ...toLinkFields(link), id: link.id, accountId: link.tenant.accountId, livemode: link.tenant.livemode, token: link.token, createdAt: link.createdAt } });
  }

  async update(tx: Tx, link: SalesLink): Promise<void> {
    await tx.salesLink.update({ where: { id: link.id }, data: { active: link.active, updatedAt: link.updatedAt } });
  }

  async checkouts(tenant: TenantRef, linkId: string, page: Page): Promise<{ checkouts: SalesLinkCheckout[]; page: PageInfo }> {
    const where = { salesLinkId: linkId, accountId: tenant.accountId, livemode: tenant.livemode };
    const { rows, page: info } = await readListPage(page, {
      resource: 'checkout', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.salesLinkCheckout.findMany(read),
      count: (query) => this.prisma.salesLinkCheckout.count(query),
    });
    return { checkouts: rows.map(fromCheckoutRow), page: info };
  }

  async checkout(id: string): Promise<SalesLinkCheckout> {
    const row = await this.prisma.salesLinkCheckout.findUnique({ where: { id } });
    if (!row) throw notFound('checkout', id);
    return fromCheckoutRow(row);
  }

  /** The tenant's sale whose first invoice is `invoiceId`. */
  async checkoutOfInvoice(tenant: TenantRef, invoiceId: string): Promise<SalesLinkCheckout> {
    const row = invoiceId ? await this.prisma.salesLinkCheckout.findFirst({ where: { invoiceId, accountId: tenant.accountId, livemode: tenant.livemode } }) : null;
    if (!row) throw notFound('checkout', `of invoice ${invoiceId}`);
    return fromCheckoutRow(row);
  }

  async insertCheckout(tx: Tx, checkout: SalesLinkCheckout): Promise<void> {
    await tx.salesLinkCheckout.create({
      data: {
        id: checkout.id,
        accountId: checkout.tenant.accountId,
        livemode: checkout.tenant.livemode,
        salesLinkId: checkout.salesLinkId,
        checkoutToken: checkout.checkoutToken,
        customerId: checkout.customerId,
        subscriptionId: checkout.subscriptionId,
        invoiceId: checkout.invoiceId,
        status: checkout.status,
        createdAt: checkout.createdAt,
        completedAt: checkout.completedAt,
      },
    });
  }

  /** Records the first invoice once the billing clock has raised it (null while it has not). */
  async recordFirstInvoice(checkout: SalesLinkCheckout): Promise<SalesLinkCheckout> {
    if (checkout.invoiceId || !checkout.subscriptionId) return checkout;
    const raised = await this.prisma.$queryRaw<{ result: string }[]>`
      SELECT result FROM billing_jobs WHERE subscription_id = ${checkout.subscriptionId} AND kind = 'invoice' AND status = 'done' AND result IS NOT NULL
      ORDER BY run_at LIMIT 1`;
    const invoiceId = raised[0]?.result;
    if (!invoiceId) return checkout;
    await this.prisma.salesLinkCheckout.updateMany({ where: { id: checkout.id, invoiceId: null }, data: { invoiceId } });
    return { ...checkout, invoiceId };
  }

  /** Records the one-off invoice raised for a one_time sale (the same invoice on a repeat: invoicing raises it once per sale). */
  async recordInvoice(checkout: SalesLinkCheckout, invoiceId: string): Promise<SalesLinkCheckout> {
    await this.prisma.salesLinkCheckout.updateMany({ where: { id: checkout.id, invoiceId: null }, data: { invoiceId } });
    return { ...checkout, invoiceId };
  }

  /** The one_time sale of this invoice is paid: completed (once; a repeat changes nothing). */
  async completeByInvoice(tx: Tx, tenant: TenantRef, invoiceId: string, at: Date): Promise<void> {
    await tx.salesLinkCheckout.updateMany({ where: { invoiceId, accountId: tenant.accountId, livemode: tenant.livemode, subscriptionId: null, status: 'open' }, data: { status: 'completed', completedAt: at } });
  }

  /** The sale of this subscription is paid: completed (once; a repeat changes nothing). */
  async complete(tx: Tx, subscriptionId: string, at: Date): Promise<void> {
    await tx.salesLinkCheckout.updateMany({ where: { subscriptionId, status: 'open' }, data: { status: 'completed', completedAt: at } });
  }
}

function toLinkFields(link: SalesLink) {
  return {
    kind: link.kind,
    title: link.title,
    planId: link.planId,
    billingInterval: link.billingInterval,
    trialDays: link.trialDays,
    allowPromotionCodes: link.allowPromotionCodes,
    successUrl: link.successUrl,
    active: link.active,
    updatedAt: link.updatedAt,
  };
}

function fromLinkRow(row: SalesLinkRow): SalesLink {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    kind: row.kind as SalesLinkKind,
    title: row.title,
    planId: row.planId,
    billingInterval: row.billingInterval,
    trialDays: row.trialDays,
    allowPromotionCodes: row.allowPromotionCodes,
    successUrl: row.successUrl,
    active: row.active,
    token: row.token,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function fromCheckoutRow(row: CheckoutRow): SalesLinkCheckout {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    salesLinkId: row.salesLinkId,
    checkoutToken: row.checkoutToken,
    customerId: row.customerId,
    subscriptionId: row.subscriptionId,
    invoiceId: row.invoiceId,
    status: row.status as CheckoutStatus,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
  };
}
