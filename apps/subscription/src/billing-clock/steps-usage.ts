import type { PrismaService } from '../infrastructure/prisma.service';
import { nextLifecycleStep, type PeriodUsage, usagePeriodToBill } from '../subscriptions/subscription';
import { fromSubscriptionRow } from '../subscriptions/subscription.mapper';
import type { ClaimedStep } from './billing-clock.worker';
import { stepKey } from './billing-jobs.repository';
import type { BillingUsage, UsageQuery } from './usage-metering.client';

/** The usage a lifecycle step bills, and the period it was measured for (re-checked under the step's lock). */
export interface StepUsage {
  periodStart: Date;
  lines: PeriodUsage;
}

/** The fields of a claimed step this reads. */
type Step = Pick<ClaimedStep, 'id' | 'kind' | 'step_key' | 'account_id' | 'livemode' | 'subscription_id'>;

/**
 * The usage each lifecycle step of a batch bills (docs/api/usage.md#billing-in-arrears), measured before the
 * batch's transaction in ONE GetPeriodUsage call, only for subscriptions whose next move bills
 * a closed period with metered components. The billing key names the period, so a step that
 * runs again (its batch failed, its worker died) is answered the same usage.
 */
export async function usageOfSteps(prisma: PrismaService, usage: BillingUsage, steps: Step[]): Promise<Map<string, StepUsage>> {
  const subscriptionIds = steps.flatMap((step) => (step.subscription_id ? [step.subscription_id] : []));
  const rows = await prisma.subscription.findMany({ where: { id: { in: subscriptionIds } } });
  const byId = new Map(rows.map((row) => [row.id, fromSubscriptionRow(row)]));
  const wanted: { stepId: string; query: UsageQuery }[] = [];
  for (const step of steps) {
    const subscription = step.subscription_id ? byId.get(step.subscription_id) : undefined;
    if (!subscription || subscription.tenant.accountId !== step.account_id || subscription.tenant.livemode !== step.livemode) continue;
    const expected = nextLifecycleStep(subscription);
    if (!expected || stepKey(expected.kind, subscription.id, expected.runAt) !== step.step_key) continue;
    const toBill = usagePeriodToBill(subscription);
    if (toBill) wanted.push({ stepId: step.id, query: { tenant: subscription.tenant, subscriptionId: subscription.id, ...toBill } });
  }
  if (wanted.length === 0) return new Map();
  const answers = await usage.periodUsage(wanted.map(({ query }) => query));
  return new Map(wanted.map(({ stepId, query }, index) => [stepId, { periodStart: query.period.start, lines: answers[index] }]));
}
