import type { CollectionMethod } from '@recur/vocabulary';
import { create } from '@bufbuild/protobuf';
import { planV1, presentSubscription, subscriptionMessagesV1, type SubscriptionJson, toMoneyMessage } from '@recur/contracts';
import { type Metadata, unixSeconds } from '@recur/kernel';
import { money } from '@recur/money';
import type { BillingInterval, PricedPlan } from '@recur/pricing';
import { Prisma, type Subscription as SubscriptionRow } from '../generated/prisma/client';
import type { Discount } from './discount';
import type { PendingChange, PendingItem, PeriodDiscount, Subscription, SubscriptionAddOn, SubscriptionStatus } from './subscription';

/** JSON columns hold dates as ISO strings; these bring them back. */
type Stored<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] };
const fromAddOnsJson = (value: unknown): SubscriptionAddOn[] => (value as Stored<SubscriptionAddOn>[]).map((addOn) => ({ ...addOn, addedAt: new Date(addOn.addedAt) }));
const fromDiscountJson = (value: unknown): Discount | null => {
  const discount = value as Stored<Discount> | null;
  return discount ? { ...discount, start: new Date(discount.start) } : null;
};
const fromPendingChangeJson = (value: unknown): PendingChange | null => {
  const change = value as Stored<PendingChange> | null;
  return change ? { ...change, effectiveAt: new Date(change.effectiveAt), requestedAt: new Date(change.requestedAt) } : null;
};
const json = (value: unknown): Prisma.InputJsonValue => JSON.parse(JSON.stringify(value)) as Prisma.InputJsonValue;

const optionalSeconds = (date: Date | null): bigint | undefined => (date ? BigInt(unixSeconds(date)) : undefined);

export function fromSubscriptionRow(row: SubscriptionRow): Subscription {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    customerId: row.customerId,
    planId: row.planId,
    status: row.status as SubscriptionStatus,
    billingInterval: row.billingInterval as BillingInterval,
    quantity: row.quantity,
    price: row.priceSnapshot as unknown as PricedPlan,
    cycleAnchor: row.cycleAnchor,
    cycleIndex: row.cycleIndex,
    currentPeriodStart: row.currentPeriodStart,
    currentPeriodEnd: row.currentPeriodEnd,
    trialStart: row.trialStart,
    trialEnd: row.trialEnd,
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    cancelledAt: row.cancelledAt,
    endedAt: row.endedAt,
    pausedAt: row.pausedAt,
    resumeAt: row.resumeAt,
    billingCycles: row.billingCycles,
    periodsBilled: row.periodsBilled,
    collectionMethod: row.collectionMethod as CollectionMethod,
    reactivatedFrom: row.reactivatedFrom,
    testClockId: row.testClockId,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    addOns: fromAddOnsJson(row.addOns),
    discount: fromDiscountJson(row.discount),
    pendingChange: fromPendingChangeJson(row.pendingChange),
    pendingItems: row.pendingItems as unknown as PendingItem[],
    periodDiscount: (row.periodDiscount as unknown as PeriodDiscount | null) ?? null,
  };
}

export function toSubscriptionRow(subscription: Subscription): Prisma.SubscriptionCreateInput {
  return {
    id: subscription.id,
    accountId: subscription.tenant.accountId,
    livemode: subscription.tenant.livemode,
    customerId: subscription.customerId,
    planId: subscription.planId,
    status: subscription.status,
    billingInterval: subscription.billingInterval,
    quantity: subscription.quantity,
    priceSnapshot: subscription.price as unknown as Prisma.InputJsonValue,
    cycleAnchor: subscription.cycleAnchor,
    cycleIndex: subscription.cycleIndex,
    currentPeriodStart: subscription.currentPeriodStart,
    currentPeriodEnd: subscription.currentPeriodEnd,
    trialStart: subscription.trialStart,
    trialEnd: subscription.trialEnd,
    cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
    cancelledAt: subscription.cancelledAt,
    endedAt: subscription.endedAt,
    pausedAt: subscription.pausedAt,
    resumeAt: subscription.resumeAt,
    billingCycles: subscription.billingCycles,
    periodsBilled: subscription.periodsBilled,
    collectionMethod: subscription.collectionMethod,
    reactivatedFrom: subscription.reactivatedFrom,
    testClockId: subscription.testClockId,
    metadata: subscription.metadata,
    createdAt: subscription.createdAt,
    updatedAt: subscription.updatedAt,
    addOns: json(subscription.addOns),
    discount: subscription.discount ? json(subscription.discount) : Prisma.DbNull,
    pendingChange: subscription.pendingChange ? json(subscription.pendingChange) : Prisma.DbNull,
    pendingItems: json(subscription.pendingItems),
    periodDiscount: subscription.periodDiscount ? json(subscription.periodDiscount) : Prisma.DbNull,
  };
}

export function toSubscriptionAddonMessage(addOn: SubscriptionAddOn, currency: string): subscriptionMessagesV1.SubscriptionAddon {
  return create(subscriptionMessagesV1.SubscriptionAddonSchema, {
    addonId: addOn.addonId,
    name: addOn.name,
    priceMonthly: toMoneyMessage(money(addOn.priceMonthly, currency)),
    quantity: addOn.quantity,
    added: BigInt(unixSeconds(addOn.addedAt)),
  });
}

function toDiscountMessage(discount: Discount): subscriptionMessagesV1.SubscriptionDiscount {
  return create(subscriptionMessagesV1.SubscriptionDiscountSchema, {
    couponId: discount.coupon.id,
    couponName: discount.coupon.name,
    type: discount.coupon.type,
    value: discount.coupon.value,
    currency: discount.coupon.currency ?? undefined,
    duration: discount.duration,
    durationInPeriods: discount.durationInPeriods ?? undefined,
    periodsRemaining: discount.periodsRemaining ?? undefined,
    promotionCodeId: discount.promotionCodeId,
    promotionCode: discount.promotionCode,
    start: BigInt(unixSeconds(discount.start)),
  });
}

function toPriceSnapshotMessage(price: PricedPlan): subscriptionMessagesV1.PriceSnapshot {
  return create(subscriptionMessagesV1.PriceSnapshotSchema, {
    planName: price.name,
    pricingModel: price.pricingModel,
    amountMonthly: toMoneyMessage(money(price.amountMonthly, price.currency)),
    packageSize: price.packageSize,
    tiers: price.tiers.map((tier) => create(planV1.PlanTierSchema, {
      upTo: tier.upTo === null ? undefined : BigInt(tier.upTo),
      unitAmount: BigInt(tier.unitAmount),
      flatAmount: BigInt(tier.flatAmount),
    })),
    components: price.components.map((component) => create(planV1.PriceComponentSchema, {
      id: component.id,
      type: component.type,
      name: component.name,
      metricName: component.metricName ?? undefined,
      unitAmount: BigInt(component.unitAmount),
      includedQuantity: BigInt(component.includedQuantity),
      usageLimit: component.usageLimit === undefined || component.usageLimit === null ? undefined : BigInt(component.usageLimit),
    })),
  });
}

export function toSubscriptionMessage(subscription: Subscription): subscriptionMessagesV1.Subscription {
  return create(subscriptionMessagesV1.SubscriptionSchema, {
    id: subscription.id,
    livemode: subscription.tenant.livemode,
    customerId: subscription.customerId,
    planId: subscription.planId,
    status: subscription.status,
    billingInterval: subscription.billingInterval,
    quantity: subscription.quantity,
    price: toPriceSnapshotMessage(subscription.price),
    currentPeriodStart: BigInt(unixSeconds(subscription.currentPeriodStart)),
    currentPeriodEnd: BigInt(unixSeconds(subscription.currentPeriodEnd)),
    trialStart: optionalSeconds(subscription.trialStart),
    trialEnd: optionalSeconds(subscription.trialEnd),
    cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
    cancelledAt: optionalSeconds(subscription.cancelledAt),
    endedAt: optionalSeconds(subscription.endedAt),
    pausedAt: optionalSeconds(subscription.pausedAt),
    resumeAt: optionalSeconds(subscription.resumeAt),
    billingCycles: subscription.billingCycles ?? undefined,
    periodsBilled: subscription.periodsBilled,
    collectionMethod: subscription.collectionMethod,
    reactivatedFrom: subscription.reactivatedFrom ?? undefined,
    testClockId: subscription.testClockId ?? undefined,
    metadata: subscription.metadata,
    created: BigInt(unixSeconds(subscription.createdAt)),
    updated: BigInt(unixSeconds(subscription.updatedAt)),
    addOns: subscription.addOns.map((addOn) => toSubscriptionAddonMessage(addOn, subscription.price.currency)),
    discount: subscription.discount ? toDiscountMessage(subscription.discount) : undefined,
    pendingChange: subscription.pendingChange
      ? create(subscriptionMessagesV1.PendingPlanChangeSchema, {
          planId: subscription.pendingChange.planId,
          price: toPriceSnapshotMessage(subscription.pendingChange.price),
          quantity: subscription.pendingChange.quantity,
          effectiveAt: BigInt(unixSeconds(subscription.pendingChange.effectiveAt)),
          requested: BigInt(unixSeconds(subscription.pendingChange.requestedAt)),
        })
      : undefined,
  });
}

export const toSubscriptionJson = (subscription: Subscription): SubscriptionJson => presentSubscription(toSubscriptionMessage(subscription));
