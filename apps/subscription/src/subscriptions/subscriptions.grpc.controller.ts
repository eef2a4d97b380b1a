import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, subscriptionV1 } from '@recur/contracts';
import { checkPage, pageInfo } from '@recur/kernel';
import { Commands } from '../infrastructure/commands';
import { toSubscriptionMessage } from './subscription.mapper';
import { SubscriptionsService } from './subscriptions.service';

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
        metadata: request.metadata,
      })),
    }));
  }

  @GrpcMethod('SubscriptionService', 'GetSubscription')
  async getSubscription(request: subscriptionV1.GetSubscriptionRequest): Promise<MessageInitShape<typeof subscriptionV1.GetSubscriptionResponseSchema>> {
    return { subscription: toSubscriptionMessage(await this.subscriptions.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('SubscriptionService', 'ListSubscriptions')
  async listSubscriptions(request: subscriptionV1.ListSubscriptionsRequest): Promise<MessageInitShape<typeof subscriptionV1.ListSubscriptionsResponseSchema>> {
    const page = checkPage(request.page?.limit, request.page?.offset);
    const { subscriptions, total } = await this.subscriptions.list(requireTenant(request.tenant), page, { customerId: request.customerId, status: request.status });
    return { subscriptions: subscriptions.map(toSubscriptionMessage), page: pageInfo(page, subscriptions.length, total) };
  }

  @GrpcMethod('SubscriptionService', 'CancelSubscription')
  async cancelSubscription(request: subscriptionV1.CancelSubscriptionRequest): Promise<subscriptionV1.CancelSubscriptionResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.CancelSubscriptionResponseSchema, async (tx) => ({
      subscription: toSubscriptionMessage(await this.subscriptions.cancel(tx, tenant, request.id, request.atPeriodEnd)),
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
}
