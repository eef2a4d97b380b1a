import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, subscriptionMessagesV1, subscriptionV1 } from '@recur/contracts';
import { checkListPage, unixSeconds } from '@recur/kernel';
import { Commands } from '../infrastructure/commands';
import { type TestClockView, TestClocksService } from './test-clocks.service';

const fromSeconds = (seconds: bigint): Date => new Date(Number(seconds) * 1000);

function toTestClockMessage({ clock, status }: TestClockView): subscriptionMessagesV1.TestClock {
  return create(subscriptionMessagesV1.TestClockSchema, {
    id: clock.id,
    name: clock.name,
    frozenTime: BigInt(unixSeconds(clock.frozenTime)),
    status,
    created: BigInt(unixSeconds(clock.createdAt)),
    deletedAt: clock.deletedAt ? BigInt(unixSeconds(clock.deletedAt)) : undefined,
  });
}

/** gRPC edge of the test clock use cases. */
@Controller()
export class TestClocksGrpcController {
  constructor(
    private readonly clocks: TestClocksService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('SubscriptionService', 'CreateTestClock')
  async createTestClock(request: subscriptionV1.CreateTestClockRequest): Promise<subscriptionV1.CreateTestClockResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.CreateTestClockResponseSchema, async (tx) => ({
      testClock: toTestClockMessage(await this.clocks.create(tx, tenant, { name: request.name, frozenTime: fromSeconds(request.frozenTime) })),
    }));
  }

  @GrpcMethod('SubscriptionService', 'GetTestClock')
  async getTestClock(request: subscriptionV1.GetTestClockRequest): Promise<MessageInitShape<typeof subscriptionV1.GetTestClockResponseSchema>> {
    return { testClock: toTestClockMessage(await this.clocks.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('SubscriptionService', 'ListTestClocks')
  async listTestClocks(request: subscriptionV1.ListTestClocksRequest): Promise<MessageInitShape<typeof subscriptionV1.ListTestClocksResponseSchema>> {
    const page = checkListPage(request.page);
    const { clocks, page: info } = await this.clocks.list(requireTenant(request.tenant), page);
    return { testClocks: clocks.map(toTestClockMessage), page: info };
  }

  @GrpcMethod('SubscriptionService', 'AdvanceTestClock')
  async advanceTestClock(request: subscriptionV1.AdvanceTestClockRequest): Promise<subscriptionV1.AdvanceTestClockResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.AdvanceTestClockResponseSchema, async (tx) => ({
      testClock: toTestClockMessage(await this.clocks.advance(tx, tenant, request.id, fromSeconds(request.frozenTime))),
    }));
  }

  @GrpcMethod('SubscriptionService', 'DeleteTestClock')
  async deleteTestClock(request: subscriptionV1.DeleteTestClockRequest): Promise<subscriptionV1.DeleteTestClockResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.DeleteTestClockResponseSchema, async (tx) => ({
      testClock: toTestClockMessage(await this.clocks.delete(tx, tenant, request.id)),
    }));
  }
}
