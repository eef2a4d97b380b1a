import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { type commonV1, type invoicingV1, requireTenant, subscriptionMessagesV1, subscriptionV1 } from '@recur/contracts';
import { checkListPage } from '@recur/kernel';
import { Commands } from '../infrastructure/commands';
import { toSubscriptionAddonMessage, toSubscriptionMessage } from './subscription.mapper';
import { type PeriodInvoice, type Subscription, type SubscriptionAddOn } from './subscription';
import { SubscriptionsService, upcomingLines } from './subscriptions.service';

const fromSeconds = (seconds: bigint): Date => new Date(Number(seconds) * 1000);
const optionalSeconds = (seconds: bigint | undefined): Date | undefined => (seconds === undefined ? undefined : fromSeconds(seconds));

/** gRPC edge of the subscription use cases: decode, call, encode. No rules live here. */
@Controller()
export class SubscriptionsGrpcController {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('SubscriptionService', 'CreateSubscription')
  async createSubscription(request: subscriptionV1.CreateSubscriptionRequest): Promise<subscriptionV1.CreateSubscriptionResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.CreateSubscriptionResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.create(tx, tenant, {
        customerId: request.customerId,
        planId: request.planId,
        billingInterval: request.billingInterval,
        quantity: request.quantity,
        trialDays: request.trialDays,
        trialEnd: optionalSeconds(request.trialEnd),
        billingCycles: request.billingCycles,
        collectionMethod: request.collectionMethod,
        metadata: request.metadata,
        addOns: request.addOns.map((addOn) => ({ addonId: addOn.addonId, quantity: addOn.quantity })),
        promotionCode: request.promotionCode,
      }, request.requestId)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'GetSubscription')
  async getSubscription(request: subscriptionV1.GetSubscriptionRequest): Promise<MessageInitShape<typeof subscriptionV1.GetSubscriptionResponseSchema>> {
    return { subscription: toSubscriptionMessage(await this.subscriptions.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('SubscriptionService', 'ListSubscriptions')
  async listSubscriptions(request: subscriptionV1.ListSubscriptionsRequest): Promise<MessageInitShape<typeof subscriptionV1.ListSubscriptionsResponseSchema>> {
    const page = checkListPage(request.page);
    const { subscriptions, page: info } = await this.subscriptions.list(requireTenant(request.tenant), page, { customerId: request.customerId, status: request.status });
    return { subscriptions: subscriptions.map(toSubscriptionMessage), page: info };
  }

  @GrpcMethod('SubscriptionService', 'CancelSubscription')
  async cancelSubscription(request: subscriptionV1.CancelSubscriptionRequest): Promise<subscriptionV1.CancelSubscriptionResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.CancelSubscriptionResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.cancel(tx, tenant, request.id, request.atPeriodEnd, request.prorate, request.refund)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'PauseSubscription')
  async pauseSubscription(request: subscriptionV1.PauseSubscriptionRequest): Promise<subscriptionV1.PauseSubscriptionResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.PauseSubscriptionResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.pause(tx, tenant, request.id, optionalSeconds(request.resumeAt) ?? null)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'ResumeSubscription')
  async resumeSubscription(request: subscriptionV1.ResumeSubscriptionRequest): Promise<subscriptionV1.ResumeSubscriptionResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.ResumeSubscriptionResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.resume(tx, tenant, request.id)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'ReactivateSubscription')
  async reactivateSubscription(request: subscriptionV1.ReactivateSubscriptionRequest): Promise<subscriptionV1.ReactivateSubscriptionResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.ReactivateSubscriptionResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.reactivate(tx, tenant, request.id)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'ExtendTrial')
  async extendTrial(request: subscriptionV1.ExtendTrialRequest): Promise<subscriptionV1.ExtendTrialResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.ExtendTrialResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.extendTrial(tx, tenant, request.id, fromSeconds(request.trialEnd))),
    }));
  }

  @GrpcMethod('SubscriptionService', 'ChangeSubscriptionPlan')
  async changeSubscriptionPlan(request: subscriptionV1.ChangeSubscriptionPlanRequest): Promise<subscriptionV1.ChangeSubscriptionPlanResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.ChangeSubscriptionPlanResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.changePlan(tx, tenant, request.id, { planId: request.planId, quantity: request.quantity, effective: request.effective })),
    }));
  }

  @GrpcMethod('SubscriptionService', 'CancelPendingChange')
  async cancelPendingChange(request: subscriptionV1.CancelPendingChangeRequest): Promise<subscriptionV1.CancelPendingChangeResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.CancelPendingChangeResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.cancelPendingChange(tx, tenant, request.id)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'ChangeBillingInterval')
  async changeBillingInterval(request: subscriptionV1.ChangeBillingIntervalRequest): Promise<subscriptionV1.ChangeBillingIntervalResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.ChangeBillingIntervalResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.changeBillingInterval(tx, tenant, request.id, request.billingInterval)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'ApplyPromotionCode')
  async applyPromotionCode(request: subscriptionV1.ApplyPromotionCodeRequest): Promise<subscriptionV1.ApplyPromotionCodeResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.ApplyPromotionCodeResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.applyPromotionCode(tx, tenant, request.id, request.promotionCode, request.requestId)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'RemovePromotionCode')
  async removePromotionCode(request: subscriptionV1.RemovePromotionCodeRequest): Promise<subscriptionV1.RemovePromotionCodeResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.RemovePromotionCodeResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.removePromotionCode(tx, tenant, request.id)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'GetUpcomingInvoice')
  async getUpcomingInvoice(request: subscriptionV1.GetUpcomingInvoiceRequest): Promise<MessageInitShape<typeof subscriptionV1.GetUpcomingInvoiceResponseSchema>> {
    const { subscription, invoice, tax } = await this.subscriptions.upcomingInvoice(requireTenant(request.tenant), request.id);
    return { upcomingInvoice: toUpcomingInvoiceMessage(subscription, invoice, tax) };
  }

  @GrpcMethod('SubscriptionService', 'AddSubscriptionAddon')
  async addSubscriptionAddon(request: subscriptionV1.AddSubscriptionAddonRequest): Promise<subscriptionV1.AddSubscriptionAddonResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.AddSubscriptionAddonResponseSchema, async (tx) =>
      addOnAnswer(await this.subscriptions.addAddOn(tx, tenant, request.id, request.addonId, request.quantity)));
  }

  @GrpcMethod('SubscriptionService', 'UpdateSubscriptionAddon')
  async updateSubscriptionAddon(request: subscriptionV1.UpdateSubscriptionAddonRequest): Promise<subscriptionV1.UpdateSubscriptionAddonResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.UpdateSubscriptionAddonResponseSchema, async (tx) =>
      addOnAnswer(await this.subscriptions.updateAddOn(tx, tenant, request.id, request.addonId, request.quantity)));
  }

  @GrpcMethod('SubscriptionService', 'RemoveSubscriptionAddon')
  async removeSubscriptionAddon(request: subscriptionV1.RemoveSubscriptionAddonRequest): Promise<subscriptionV1.RemoveSubscriptionAddonResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.RemoveSubscriptionAddonResponseSchema, async (tx) =>
      addOnAnswer(await this.subscriptions.removeAddOn(tx, tenant, request.id, request.addonId)));
  }
}

const addOnAnswer = ({ subscription, addOn }: { subscription: Subscription; addOn: SubscriptionAddOn }) => ({
  subscription: toSubscriptionMessage(subscription),
  addOn: toSubscriptionAddonMessage(addOn, subscription.price.currency),
});

function toUpcomingInvoiceMessage(subscription: Subscription, invoice: PeriodInvoice, tax: invoicingV1.PreviewInvoiceTaxResponse): MessageInitShape<typeof subscriptionMessagesV1.UpcomingInvoiceSchema> {
  const minor = (amount: commonV1.Money | undefined) => amount?.amountMinor ?? 0n;
  return {
    subscriptionId: subscription.id,
    customerId: subscription.customerId,
    currency: invoice.price.currency,
    billingReason: invoice.billingReason,
    periodStart: BigInt(Math.floor(invoice.periodStart.getTime() / 1000)),
    periodEnd: BigInt(Math.floor(invoice.periodEnd.getTime() / 1000)),
    lines: upcomingLines(invoice).map((line, index) => ({
      kind: line.kind, description: line.description, quantity: BigInt(line.quantity), amount: BigInt(line.amount),
      periodStart: BigInt(line.period?.start ?? 0), periodEnd: BigInt(line.period?.end ?? 0), taxAmounts: tax.lines[index]?.taxAmounts ?? [],
    })),
    subtotal: BigInt(invoice.price.subtotal),
    discount: BigInt(invoice.price.discount),
    totalTaxAmounts: tax.totalTaxAmounts,
    tax: minor(tax.tax),
    total: minor(tax.total),
    totalExcludingTax: minor(tax.totalExcludingTax),
    customerTaxExempt: tax.customerTaxExempt,
    // An invoicing release that previews no balance sends none: the invoice will consume none as far as the preview knows.
    startingBalance: minor(tax.startingBalance),
    endingBalance: minor(tax.endingBalance),
    amountDue: tax.amountDue ? minor(tax.amountDue) : (minor(tax.total) > 0n ? minor(tax.total) : 0n),
  };
}
