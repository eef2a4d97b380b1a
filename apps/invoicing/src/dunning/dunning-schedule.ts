import { invalidArgument } from '@recur/kernel';
import { DUNNING_DAY_MAX, DUNNING_REMINDERS_MAX } from '@recur/vocabulary';

/**
 * Dunning: after a payment fails, the customer is reminded on a schedule of days after the
 * failure; each reminder e-mails the payment link and publishes `invoice.dunning_retry`; when
 * the last one goes out unpaid, the invoice's subscription falls past due. Paying stops it.
 */
export const DEFAULT_DUNNING_SCHEDULE_DAYS: readonly number[] = [3, 7, 14];

/** A schedule: 1–10 whole days, each 1–90 and later than the one before (`DUNNING_SCHEDULE_DAYS`, `PUT /v1/dunning-schedule`). */
export function checkDunningSchedule(days: readonly number[], param = 'days'): number[] {
  if (days.length === 0 || days.length > DUNNING_REMINDERS_MAX) throw invalidArgument(param, `a dunning schedule has 1 to ${DUNNING_REMINDERS_MAX} reminders`);
  days.forEach((day, index) => {
    if (!Number.isInteger(day) || day < 1 || day > DUNNING_DAY_MAX) throw invalidArgument(param, `every reminder day must be a whole number from 1 to ${DUNNING_DAY_MAX}`);
    if (index > 0 && day <= days[index - 1]) throw invalidArgument(param, 'reminder days must strictly increase');
  });
  return [...days];
}

/** Reads `3,7,14` (DUNNING_SCHEDULE_DAYS). */
export function parseDunningSchedule(text: string): number[] {
  return checkDunningSchedule(text.split(',').map((part) => (/^\s*\d+\s*$/.test(part) ? Number(part) : Number.NaN)), 'DUNNING_SCHEDULE_DAYS');
}

/** Which reminder this is: `number` of `count`, 1 ≤ number ≤ count ≤ 10. */
export function checkReminder(number: number, count: number): { number: number; count: number } {
  if (!Number.isInteger(count) || count < 1 || count > DUNNING_REMINDERS_MAX) throw invalidArgument('reminder_count', `reminder_count must be 1 to ${DUNNING_REMINDERS_MAX}`);
  if (!Number.isInteger(number) || number < 1 || number > count) throw invalidArgument('reminder_number', 'reminder_number must be 1 to reminder_count');
  return { number, count };
}
