import { Inject, Injectable } from '@nestjs/common';
import { type Clock, CLOCK, invalidArgument, notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, type PgTransaction, readListPage } from '@recur/persistence';
import { BILLING_JOBS_CHANNEL } from '../billing-clock/billing-jobs.repository';
import type { Prisma, TestClock as TestClockRow } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { TestClock } from './test-clock';

type Tx = Prisma.TransactionClient;

const fromRow = (row: TestClockRow): TestClock => ({
  id: row.id,
  tenant: { accountId: row.accountId, livemode: row.livemode },
  name: row.name,
  frozenTime: row.frozenTime,
  createdAt: row.createdAt,
  deletedAt: row.deletedAt,
});

/** Test clocks, and the moves of the billing clock's rows when a clock advances. */
@Injectable()
export class TestClocksRepository {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  /** A clock of the tenant that is not deleted; NOT_FOUND otherwise. */
  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<TestClock> {
    const row = await tx.testClock.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode, deletedAt: null } });
    if (!row) throw notFound('test_clock', id);
    return fromRow(row);
  }

  /** Locks the clock: advances serialise with each other and with new steps on it. */
  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<TestClock> {
    await tx.$executeRaw`SELECT 1 FROM test_clocks WHERE id = ${id} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }

  /** The clock a new customer is put on: a bad body field when unknown (400 resource_missing, param `test_clock`). */
  async forNewCustomer(tx: PgTransaction, tenant: TenantRef, id: string): Promise<{ id: string }> {
    const [clock] = await tx.query<{ id: string }>(
      'SELECT id FROM test_clocks WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL',
      [id, tenant.accountId, tenant.livemode],
    );
    if (!clock) throw invalidArgument('test_clock', `No such test clock: '${id}'`, 'resource_missing');
    return clock;
  }

  /** The subscription's own time: its customer's clock's frozen time, or real time. */
  async timeOf(tx: Tx, testClockId: string | null): Promise<Date> {
    if (!testClockId) return this.now();
    const row = await tx.testClock.findUnique({ where: { id: testClockId }, select: { frozenTime: true } });
    return row?.frozenTime ?? this.now();
  }

  async list(tenant: TenantRef, page: Page): Promise<{ clocks: TestClock[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, deletedAt: null };
    const { rows, page: info } = await readListPage(page, {
      resource: 'test clock', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.testClock.findMany(read),
      count: (query) => this.prisma.testClock.count(query),
    });
    return { clocks: rows.map(fromRow), page: info };
  }

  /** `advancing` while a move due by the clock's time has not run yet, else `ready`. */
  async statusOf(clockId: string, tx: Tx = this.prisma): Promise<'advancing' | 'ready'> {
    const rows = await tx.$queryRaw<{ advancing: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM billing_jobs WHERE test_clock_id = ${clockId} AND status = 'pending' AND due_at IS NOT NULL) AS advancing`;
    return rows[0]?.advancing ? 'advancing' : 'ready';
  }

  async insert(tx: Tx, clock: TestClock): Promise<void> {
    await tx.testClock.create({
      data: { id: clock.id, accountId: clock.tenant.accountId, livemode: clock.tenant.livemode, name: clock.name, frozenTime: clock.frozenTime, createdAt: clock.createdAt },
    });
  }

  /** Moves the clock and makes every step it has now reached due for the billing clock's workers. */
  async advance(tx: Tx, clock: TestClock): Promise<void> {
    const now = this.now();
    await tx.testClock.update({ where: { id: clock.id }, data: { frozenTime: clock.frozenTime } });
    await tx.$executeRaw`
      UPDATE billing_jobs SET due_at = ${now}, updated_at = ${now}
      WHERE test_clock_id = ${clock.id} AND status = 'pending' AND due_at IS NULL AND run_at <= ${clock.frozenTime}`;
    await tx.$executeRaw`SELECT pg_notify(${BILLING_JOBS_CHANNEL}, '')`;
  }

  /** Deletes the clock; the steps still pending on it never run. */
  async delete(tx: Tx, clock: TestClock): Promise<TestClock> {
    const now = this.now();
    await tx.testClock.update({ where: { id: clock.id }, data: { deletedAt: now } });
    await tx.$executeRaw`UPDATE billing_jobs SET status = 'cancelled', lease_until = NULL, updated_at = ${now} WHERE test_clock_id = ${clock.id} AND status = 'pending'`;
    return { ...clock, deletedAt: now };
  }
}
