import { Inject, Injectable } from '@nestjs/common';
import { type Clock, CLOCK, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';
import { advanceTestClock, assertSandbox, createTestClock, type TestClock } from './test-clock';
import { TestClocksRepository } from './test-clocks.repository';

type Tx = Prisma.TransactionClient;

export interface TestClockView {
  clock: TestClock;
  status: 'advancing' | 'ready';
}

/** Sandbox test clock use cases; every one answers 404 to a live tenant. */
@Injectable()
export class TestClocksService {
  constructor(
    private readonly clocks: TestClocksRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: Tx, tenant: TenantRef, fields: { name: string; frozenTime: Date }): Promise<TestClockView> {
    const clock = createTestClock(tenant, fields, this.now());
    await this.clocks.insert(tx, clock);
    return { clock, status: 'ready' };
  }

  async get(tenant: TenantRef, id: string): Promise<TestClockView> {
    assertSandbox(tenant);
    const clock = await this.clocks.get(tenant, id);
    return { clock, status: await this.clocks.statusOf(clock.id) };
  }

  async list(tenant: TenantRef, page: Page): Promise<{ clocks: TestClockView[]; page: PageInfo }> {
    assertSandbox(tenant);
    const { clocks, page: info } = await this.clocks.list(tenant, page);
    return { clocks: await Promise.all(clocks.map(async (clock) => ({ clock, status: await this.clocks.statusOf(clock.id) }))), page: info };
  }

  async advance(tx: Tx, tenant: TenantRef, id: string, frozenTime: Date): Promise<TestClockView> {
    assertSandbox(tenant);
    const clock = advanceTestClock(await this.clocks.getForUpdate(tx, tenant, id), frozenTime);
    await this.clocks.advance(tx, clock);
    return { clock, status: await this.clocks.statusOf(clock.id, tx) };
  }

  async delete(tx: Tx, tenant: TenantRef, id: string): Promise<TestClockView> {
    assertSandbox(tenant);
    const clock = await this.clocks.delete(tx, await this.clocks.getForUpdate(tx, tenant, id));
    return { clock, status: 'ready' };
  }
}
