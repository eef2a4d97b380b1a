import { invalidArgument } from '@recur/kernel';
import { money, multiply } from '@recur/money';
import type { LineItem } from './engine';
import type { BillingInterval, PricedComponent } from './model';

/** A span of time in unix seconds, [start, end). */
export interface UsagePeriod {
  start: number;
  end: number;
}

/**
 * Usage of one metric in one period, billed in arrears by the metered component that prices
 * it (the one of the period's price snapshot). `billedBefore` is what earlier invoices already
 * billed of the same period and metric: late records come on top of it, so the included
 * quantity is given once per period and never twice.
 */
export interface UsageCharge {
  component: PricedComponent;
  /** The units to bill now (a non-negative integer). */
  quantity: number;
  /** Units of the same period and metric billed on earlier invoices; default 0. */
  billedBefore?: number;
  /** The period the usage happened in; the invoice line carries it. */
  period: UsagePeriod;
  /** True when the period was invoiced already and these units arrived after (docs/api/usage.md#late-records-the-rule). */
  late?: boolean;
  /**
   * The interval of the period the usage happened in: its included quantity is the component's
   * × that interval's months, also on an invoice of another interval (a period cut short by an
   * interval change, and its late records). Default: the invoice's interval.
   */
  interval?: BillingInterval;
}

/**
 * The units of `used` a metered component bills beyond the included quantity of a period of
 * `months` months (included_quantity is monthly, as every recurring quantity of a plan).
 */
export function billableUnits(component: PricedComponent, used: number, months: number): number {
  return Math.max(0, used - component.includedQuantity * months);
}

/**
 * The line of one usage charge: the units billable now — what the period's total bills beyond
 * the included quantity, less what earlier invoices billed of it — at the component's unit
 * amount. The quantity billed is exact (integers); no rounding.
 */
export function usageLine(charge: UsageCharge, months: number, currency: string): LineItem {
  const { component, quantity } = charge;
  const billedBefore = charge.billedBefore ?? 0;
  if (component.type !== 'metered' || !component.metricName) throw invalidArgument('usage', `component '${component.id}' is not metered`);
  for (const [param, value] of [['quantity', quantity], ['billed_before', billedBefore]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw invalidArgument(`usage[${component.metricName}].${param}`, 'usage must be a non-negative integer');
  }
  const units = billableUnits(component, billedBefore + quantity, months) - billableUnits(component, billedBefore, months);
  const included = component.includedQuantity * months;
  const description = charge.late
    ? `${component.name} (${component.metricName}): ${quantity} more reported after the period was invoiced`
    : `${component.name} (${component.metricName}): ${billedBefore + quantity} used${included > 0 ? `, ${included} included` : ''}`;
  return {
    kind: 'component',
    description,
    quantity: units,
    unitAmount: component.unitAmount,
    flatAmount: 0,
    amount: multiply(money(component.unitAmount, currency), units).amountMinor,
    componentId: component.id,
    metricName: component.metricName,
    period: charge.period,
  };
}
