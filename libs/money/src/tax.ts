import { invalidArgument } from '@recur/kernel';
import { add, money, type Money, roundHalfUp, subtract, sum, zero } from './money';

/**
 * Tax arithmetic (docs/api/invoices.md#tax-and-rounding). A rate is an integer number of
 * parts per million of the amount (ppm): 16 % is 160 000 ppm, 7.5 % is 75 000, 18.0001 % is
 * 180 001, so a percentage with up to four decimals is held exactly, with no float anywhere.
 * Every tax amount is rounded once, per line, half up to the minor unit.
 */
export const PPM_PER_PERCENT = 10_000;
export const RATE_PPM_MAX = 100 * PPM_PER_PERCENT;
const PPM = 1_000_000n;

const PERCENTAGE_TEXT = /^(\d{1,3})(?:\.(\d{1,4}))?$/;

/**
 * A percentage from 0 to 100 with at most four decimals, read from its decimal text (a JSON
 * number's shortest text, e.g. 7.5 → "7.5", is exactly what the integrator wrote), as ppm.
 */
export function parsePercentage(value: number | string, param = 'percentage'): number {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  const match = PERCENTAGE_TEXT.exec(text);
  if (!match) throw invalidArgument(param, `${param} must be a number from 0 to 100 with at most four decimals`);
  const ppm = Number(match[1]) * PPM_PER_PERCENT + Number((match[2] ?? '').padEnd(4, '0'));
  if (ppm > RATE_PPM_MAX) throw invalidArgument(param, `${param} must be a number from 0 to 100 with at most four decimals`);
  return ppm;
}

/** The percentage's shortest decimal text: 160 000 → "16", 75 000 → "7.5", 180 001 → "18.0001". */
export function formatPercentage(ratePpm: number): string {
  checkRatePpm(ratePpm);
  const whole = Math.floor(ratePpm / PPM_PER_PERCENT);
  const fraction = String(ratePpm % PPM_PER_PERCENT).padStart(4, '0').replace(/0+$/, '');
  return fraction === '' ? String(whole) : `${whole}.${fraction}`;
}

function checkRatePpm(ratePpm: number): number {
  if (!Number.isInteger(ratePpm) || ratePpm < 0 || ratePpm > RATE_PPM_MAX) throw invalidArgument('rate_ppm', 'a tax rate must be an integer from 0 to 1 000 000 ppm');
  return ratePpm;
}

/** The tax an exclusive rate adds to a net amount: net × rate, half up. 16 % of 1 999 → 319.84 → 320. */
export function exclusiveTax(net: Money, ratePpm: number): Money {
  return money(roundHalfUp(BigInt(net.amountMinor) * BigInt(checkRatePpm(ratePpm)), PPM), net.currency);
}

/**
 * A gross amount that includes tax at `ratePpm`, split into net and tax. The tax is rounded
 * (gross × rate / (1 + rate), half up) and the net is what is left, so net + tax is the gross
 * exactly: 18 % inside 10 000 → tax 1 525.42… → 1 525, net 8 475.
 */
export function splitInclusive(gross: Money, ratePpm: number): { net: Money; tax: Money } {
  const rate = BigInt(checkRatePpm(ratePpm));
  const tax = money(roundHalfUp(BigInt(gross.amountMinor) * rate, PPM + rate), gross.currency);
  return { net: subtract(gross, tax), tax };
}

/**
 * `amount` shared out in proportion to non-negative integer `weights`, by largest remainder:
 * the shares sum to `amount` exactly, and ties go to the earlier weight. All zero weights
 * give all zero shares (and `amount` must then be zero).
 */
export function allocate(amount: Money, weights: readonly number[]): Money[] {
  if (weights.some((weight) => !Number.isSafeInteger(weight) || weight < 0)) throw invalidArgument('weights', 'weights must be non-negative integers');
  const totalWeight = weights.reduce((a, b) => a + BigInt(b), 0n);
  if (totalWeight === 0n) {
    if (amount.amountMinor !== 0) throw invalidArgument('weights', 'a non-zero amount needs a positive weight to go to');
    return weights.map(() => zero(amount.currency));
  }
  const whole = BigInt(amount.amountMinor);
  const sign = whole < 0n ? -1n : 1n;
  const magnitude = whole * sign;
  const floors = weights.map((weight) => (magnitude * BigInt(weight)) / totalWeight);
  const remainders = weights.map((weight, index) => ({ index, remainder: (magnitude * BigInt(weight)) % totalWeight }));
  let left = magnitude - floors.reduce((a, b) => a + b, 0n);
  remainders.sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of remainders) {
    if (left === 0n) break;
    floors[index] += 1n;
    left -= 1n;
  }
  return floors.map((share) => money(Number(share * sign), amount.currency));
}

/** A tax rate's terms as an invoice applies them (what the rate's id stood for at the time). */
export interface TaxRateTerms {
  id: string;
  displayName: string;
  ratePpm: number;
  inclusive: boolean;
}

/** One line's tax: the rate, the amount it was applied to (net of tax), and the tax. */
export interface TaxAmount {
  taxRate: TaxRateTerms;
  taxableAmount: Money;
  amount: Money;
}

export interface TaxableLine {
  amount: Money;
  taxRate: TaxRateTerms | null;
}

export interface TaxedLine {
  /** The line's share of the invoice discount (pro rata to the positive line amounts). */
  discount: Money;
  taxAmounts: TaxAmount[];
}

export interface TaxedInvoice {
  lines: TaxedLine[];
  /** The sum of the line amounts, before discount and exclusive tax (inclusive tax stays inside). */
  subtotal: Money;
  discount: Money;
  /** The tax per rate, in the order rates first appear: the sums of the lines' rounded taxes. */
  totalTaxAmounts: TaxAmount[];
  /** All tax of the invoice, inclusive and exclusive. */
  tax: Money;
  /** subtotal − discount + exclusive tax: what the customer pays. */
  total: Money;
  /** total − all tax. */
  totalExcludingTax: Money;
}

/**
 * Taxes an invoice's lines. The invoice discount is shared out over the positive lines first
 * (tax is owed on what is charged), then each line is taxed at its own rate and rounded on its
 * own; the invoice's figures are sums of the lines', so no minor unit appears or disappears.
 */
export function taxInvoice(currency: string, lines: readonly TaxableLine[], discount: Money): TaxedInvoice {
  const subtotal = sum(currency, lines.map((line) => line.amount));
  const shares = allocate(discount, lines.map((line) => Math.max(line.amount.amountMinor, 0)));
  const totals = new Map<string, TaxAmount>();
  let exclusive = zero(currency);
  let tax = zero(currency);
  const taxedLines = lines.map((line, index): TaxedLine => {
    if (line.taxRate === null) return { discount: shares[index], taxAmounts: [] };
    const charged = subtract(line.amount, shares[index]);
    const { taxableAmount, amount } = line.taxRate.inclusive
      ? ((split) => ({ taxableAmount: split.net, amount: split.tax }))(splitInclusive(charged, line.taxRate.ratePpm))
      : { taxableAmount: charged, amount: exclusiveTax(charged, line.taxRate.ratePpm) };
    if (!line.taxRate.inclusive) exclusive = add(exclusive, amount);
    tax = add(tax, amount);
    const before = totals.get(line.taxRate.id);
    totals.set(line.taxRate.id, before === undefined
      ? { taxRate: line.taxRate, taxableAmount, amount }
      : { taxRate: before.taxRate, taxableAmount: add(before.taxableAmount, taxableAmount), amount: add(before.amount, amount) });
    return { discount: shares[index], taxAmounts: [{ taxRate: line.taxRate, taxableAmount, amount }] };
  });
  const total = add(subtract(subtotal, discount), exclusive);
  return { lines: taxedLines, subtotal, discount, totalTaxAmounts: [...totals.values()], tax, total, totalExcludingTax: subtract(total, tax) };
}
