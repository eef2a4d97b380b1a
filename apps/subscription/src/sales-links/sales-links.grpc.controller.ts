import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, salesLinkV1, toMoneyMessage, toTenantMessage } from '@recur/contracts';
import { checkListPage, unixSeconds } from '@recur/kernel';
import { money } from '@recur/money';
import { Commands } from '../infrastructure/commands';
import { type SalesLink, type SalesLinkCheckout, successUrlOf } from './sales-link';
import { SalesLinksService } from './sales-links.service';

/** gRPC edge of the sales link use cases: decode, call, encode. No rules live here. */
@Controller()
export class SalesLinksGrpcController {
  constructor(
    private readonly salesLinks: SalesLinksService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('SubscriptionService', 'CreateSalesLink')
  async createSalesLink(request: salesLinkV1.CreateSalesLinkRequest): Promise<salesLinkV1.CreateSalesLinkResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, salesLinkV1.CreateSalesLinkResponseSchema, async (tx) => ({
      salesLink: toSalesLinkMessage(await this.salesLinks.create(tx, tenant, {
        kind: request.kind,
        title: request.title,
        planId: request.planId,
        billingInterval: request.billingInterval,
        trialDays: request.trialDays,
        allowPromotionCodes: request.allowPromotionCodes,
        successUrl: request.successUrl,
      })),
    }));
  }

  @GrpcMethod('SubscriptionService', 'GetSalesLink')
  async getSalesLink(request: salesLinkV1.GetSalesLinkRequest): Promise<MessageInitShape<typeof salesLinkV1.GetSalesLinkResponseSchema>> {
    return { salesLink: toSalesLinkMessage(await this.salesLinks.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('SubscriptionService', 'ListSalesLinks')
  async listSalesLinks(request: salesLinkV1.ListSalesLinksRequest): Promise<MessageInitShape<typeof salesLinkV1.ListSalesLinksResponseSchema>> {
    const page = checkListPage(request.page);
    const { links, page: info } = await this.salesLinks.list(requireTenant(request.tenant), page);
    return { salesLinks: links.map(toSalesLinkMessage), page: info };
  }

  @GrpcMethod('SubscriptionService', 'SetSalesLinkActive')
  async setSalesLinkActive(request: salesLinkV1.SetSalesLinkActiveRequest): Promise<salesLinkV1.SetSalesLinkActiveResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, salesLinkV1.SetSalesLinkActiveResponseSchema, async (tx) => ({
      salesLink: toSalesLinkMessage(await this.salesLinks.setActive(tx, tenant, request.id, request.active)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'ListSalesLinkCheckouts')
  async listSalesLinkCheckouts(request: salesLinkV1.ListSalesLinkCheckoutsRequest): Promise<MessageInitShape<typeof salesLinkV1.ListSalesLinkCheckoutsResponseSchema>> {
    const page = checkListPage(request.page);
    const { checkouts, page: info } = await this.salesLinks.checkouts(requireTenant(request.tenant), request.id, page);
    return { checkouts: checkouts.map(toCheckoutMessage), page: info };
  }

  @GrpcMethod('SubscriptionService', 'GetSalesLinkPage')
  async getSalesLinkPage(request: salesLinkV1.GetSalesLinkPageRequest): Promise<MessageInitShape<typeof salesLinkV1.GetSalesLinkPageResponseSchema>> {
    const { link, offer } = await this.salesLinks.page(request.token);
    return {
      tenant: toTenantMessage(link.tenant),
      salesLink: toSalesLinkMessage(link),
      offer: { planName: offer.planName, amount: toMoneyMessage(money(offer.amount, offer.currency)) },
    };
  }

  @GrpcMethod('SubscriptionService', 'CheckOutSalesLink')
  async checkOutSalesLink(request: salesLinkV1.CheckOutSalesLinkRequest): Promise<MessageInitShape<typeof salesLinkV1.CheckOutSalesLinkResponseSchema>> {
    const { link, checkout } = await this.salesLinks.checkOut(request.token, {
      checkoutToken: request.checkoutToken, name: request.name, email: request.email, promotionCode: request.promotionCode,
    });
    return { tenant: toTenantMessage(link.tenant), checkout: toCheckoutMessage(checkout), successUrl: successUrlOf(link, checkout) };
  }

  @GrpcMethod('SubscriptionService', 'GetCheckoutOfInvoice')
  async getCheckoutOfInvoice(request: salesLinkV1.GetCheckoutOfInvoiceRequest): Promise<MessageInitShape<typeof salesLinkV1.GetCheckoutOfInvoiceResponseSchema>> {
    const { link, checkout } = await this.salesLinks.checkoutOfInvoice(requireTenant(request.tenant), request.invoiceId);
    return { checkout: toCheckoutMessage(checkout), successUrl: successUrlOf(link, checkout) };
  }
}

function toSalesLinkMessage(link: SalesLink): MessageInitShape<typeof salesLinkV1.SalesLinkSchema> {
  return {
    id: link.id,
    livemode: link.tenant.livemode,
    kind: link.kind,
    title: link.title,
    planId: link.planId,
    billingInterval: link.billingInterval,
    trialDays: link.trialDays,
    allowPromotionCodes: link.allowPromotionCodes,
    successUrl: link.successUrl,
    active: link.active,
    token: link.token,
    created: BigInt(unixSeconds(link.createdAt)),
    updated: BigInt(unixSeconds(link.updatedAt)),
  };
}

function toCheckoutMessage(checkout: SalesLinkCheckout): MessageInitShape<typeof salesLinkV1.SalesLinkCheckoutSchema> {
  return {
    id: checkout.id,
    livemode: checkout.tenant.livemode,
    salesLinkId: checkout.salesLinkId,
    customerId: checkout.customerId,
    subscriptionId: checkout.subscriptionId ?? '',
    invoiceId: checkout.invoiceId ?? '',
    status: checkout.status,
    created: BigInt(unixSeconds(checkout.createdAt)),
    completed: checkout.completedAt ? BigInt(unixSeconds(checkout.completedAt)) : 0n,
  };
}
