import { DomainError, invalidArgument, newId, type TenantRef } from '@recur/kernel';

/**
 * A sandbox test clock. Customers created on it, and every time-driven move of their
 * subscriptions, follow its frozen time; advancing it runs every move due by the new time,
 * in order, as if that time had passed.
 */
export interface TestClock {
  id: string;
  tenant: TenantRef;
  name: string;
  frozenTime: Date;
  createdAt: Date;
  deletedAt: Date | null;
}

export const TEST_CLOCK_NAME_MAX = 256;
/** How far one advance may move a clock: five years of billing is plenty for a test. */
export const TEST_CLOCK_ADVANCE_MAX_MS = 5 * 366 * 86_400_000;
/** frozen_time is unix seconds between 2000-01-01 and 2100-01-01. */
const FROZEN_TIME_MIN = Date.UTC(2000, 0, 1);
const FROZEN_TIME_MAX = Date.UTC(2100, 0, 1);

/** Live apps have no test clocks: their routes answer 404 as if they did not exist. */
export function assertSandbox(tenant: TenantRef): void {
  if (tenant.livemode) throw new DomainError('not_found', 'route_not_found', 'Test clocks exist only in the sandbox.');
}

function checkFrozenTime(frozenTime: Date): Date {
  if (!Number.isFinite(frozenTime.getTime()) || frozenTime.getTime() < FROZEN_TIME_MIN || frozenTime.getTime() >= FROZEN_TIME_MAX) {
    throw invalidArgument('frozen_time', 'frozen_time must be unix seconds between 2000 and 2100');
  }
  return frozenTime;
}

export function createTestClock(tenant: TenantRef, fields: { name: string; frozenTime: Date }, now: Date): TestClock {
  assertSandbox(tenant);
  const name = fields.name.trim();
  if (name.length > TEST_CLOCK_NAME_MAX) throw invalidArgument('name', `name must be at most ${TEST_CLOCK_NAME_MAX} characters`);
  return { id: newId('clock'), tenant, name, frozenTime: checkFrozenTime(fields.frozenTime), createdAt: now, deletedAt: null };
}

export function advanceTestClock(clock: TestClock, frozenTime: Date): TestClock {
  checkFrozenTime(frozenTime);
  if (frozenTime.getTime() <= clock.frozenTime.getTime()) throw invalidArgument('frozen_time', 'frozen_time must be later than the clock\'s current frozen_time');
  if (frozenTime.getTime() - clock.frozenTime.getTime() > TEST_CLOCK_ADVANCE_MAX_MS) throw invalidArgument('frozen_time', 'A test clock advances at most five years at a time');
  return { ...clock, frozenTime };
}
