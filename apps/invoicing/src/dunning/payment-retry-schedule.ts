import { invalidArgument } from '@recur/kernel';
import { PAYMENT_RETRIES_MAX, PAYMENT_RETRY_DAY_MAX } from '@recur/vocabulary';

/**
 * Smart retries (docs/api/dunning.md#smart-retries): a `charge_automatically` invoice whose
 * charge failed for a reason that may pass is charged again on these days after the first
 * failure, each at `hour` o'clock in `timeZone`; the reminders start after the last retry.
 */
export interface PaymentRetrySchedule {
  days: number[];
  hour: number;
  timeZone: string;
}

/** +1, +3 and +5 days after the first failure, at 09:00 UTC. */
export const DEFAULT_PAYMENT_RETRY_SCHEDULE: PaymentRetrySchedule = { days: [1, 3, 5], hour: 9, timeZone: 'UTC' };

/** 0–5 days, each 1–30 and later than the one before; an hour 0–23; an IANA time zone. */
export function checkPaymentRetrySchedule(schedule: PaymentRetrySchedule, param = 'payment_retries'): PaymentRetrySchedule {
  const { days, hour, timeZone } = schedule;
  if (days.length > PAYMENT_RETRIES_MAX) throw invalidArgument(`${param}.days_after_failure`, `a payment retry schedule has 0 to ${PAYMENT_RETRIES_MAX} retries`);
  days.forEach((day, index) => {
    if (!Number.isInteger(day) || day < 1 || day > PAYMENT_RETRY_DAY_MAX) throw invalidArgument(`${param}.days_after_failure`, `every retry day must be a whole number from 1 to ${PAYMENT_RETRY_DAY_MAX}`);
    if (index > 0 && day <= days[index - 1]) throw invalidArgument(`${param}.days_after_failure`, 'retry days must strictly increase');
  });
  if (!Number.isInteger(hour) || hour < 0 || hour > 23) throw invalidArgument(`${param}.hour`, 'hour must be a whole number from 0 to 23');
  if (!isTimeZone(timeZone)) throw invalidArgument(`${param}.time_zone`, `'${timeZone}' is not an IANA time zone (such as Africa/Lusaka or UTC)`);
  return { days: [...days], hour, timeZone };
}

export function isTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * When the retries run: for each day d, the calendar day d days after `firstFailure`'s own day
 * in `timeZone`, at `hour`:00 there. `firstFailure` is the invoice's own time (its customer's
 * test clock, if any), so a test clock reaches the retries as it reaches renewals.
 */
export function paymentRetryTimes(firstFailure: Date, schedule: PaymentRetrySchedule): Date[] {
  const { year, month, day } = localParts(firstFailure, schedule.timeZone);
  return schedule.days.map((days) => atLocalTime(year, month, day + days, schedule.hour, schedule.timeZone));
}

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function localParts(instant: Date, timeZone: string): LocalParts {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  }).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((candidate) => candidate.type === type)?.value);
  return { year: part('year'), month: part('month'), day: part('day'), hour: part('hour'), minute: part('minute'), second: part('second') };
}

/** How far `timeZone`'s wall clock is ahead of UTC at `instant`, in milliseconds. */
function zoneOffsetMs(instant: number, timeZone: string): number {
  const local = localParts(new Date(instant), timeZone);
  const wholeSecond = Math.floor(instant / 1_000) * 1_000;
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second) - wholeSecond;
}

/**
 * The instant whose wall clock in `timeZone` reads year-month-day hour:00 (`day` may run past the
 * month's end: Date.UTC carries it). Two passes settle a day on which the zone's offset changes;
 * an hour a daylight-saving change skips lands an hour later.
 */
function atLocalTime(year: number, month: number, day: number, hour: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day, hour);
  const first = wall - zoneOffsetMs(wall, timeZone);
  return new Date(wall - zoneOffsetMs(first, timeZone));
}
