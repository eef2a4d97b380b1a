import type { invoicingV1 } from '@recur/contracts';
import { DUNNING_DAY_MAX, DUNNING_REMINDERS_MAX, PAYMENT_RETRIES_MAX, PAYMENT_RETRY_DAY_MAX } from '@recur/vocabulary';
import { defineRoutes, responseSchema, route } from '../routing/define-routes';
import { SetDunningScheduleDto } from './dunning-schedule.dto';

/** The public JSON of the app's dunning schedule. */
export interface DunningScheduleJson {
  object: 'dunning_schedule';
  livemode: boolean;
  days_after_failure: number[];
  default: boolean;
  updated: number | null;
  payment_retries: { days_after_failure: number[]; hour: number; time_zone: string; default: boolean };
}

export const DUNNING_SCHEDULE_SCHEMA = responseSchema<DunningScheduleJson>('DunningSchedule', {
  type: 'object',
  required: ['object', 'livemode', 'days_after_failure', 'default', 'updated', 'payment_retries'],
  properties: {
    object: { type: 'string', enum: ['dunning_schedule'] },
    livemode: { type: 'boolean' },
    days_after_failure: {
      type: 'array', minItems: 1, maxItems: DUNNING_REMINDERS_MAX, items: { type: 'integer', minimum: 1, maximum: DUNNING_DAY_MAX },
      example: [3, 7, 14], description: 'Reminder n goes out this many days after the failed payment; the last is final (past_due).',
    },
    default: { type: 'boolean', description: "True while the app set none: the service's default (DUNNING_SCHEDULE_DAYS) applies." },
    updated: { type: ['integer', 'null'], description: 'When the app last set it (unix seconds); null for the default.' },
    payment_retries: {
      type: 'object',
      required: ['days_after_failure', 'hour', 'time_zone', 'default'],
      description: 'Smart retries: when a charge_automatically invoice whose charge failed for a reason that may pass is charged again, before the reminders.',
      properties: {
        days_after_failure: {
          type: 'array', maxItems: PAYMENT_RETRIES_MAX, items: { type: 'integer', minimum: 1, maximum: PAYMENT_RETRY_DAY_MAX },
          example: [1, 3, 5], description: 'Retry n runs on the calendar day this many days after the first failure (in time_zone).',
        },
        hour: { type: 'integer', minimum: 0, maximum: 23, example: 9, description: 'The hour of that day, in time_zone.' },
        time_zone: { type: 'string', example: 'Africa/Lusaka', description: 'An IANA time zone.' },
        default: { type: 'boolean', description: "True while the app set none: +1, +3, +5 days at 09:00 UTC." },
      },
    },
  },
});

const present = (schedule: invoicingV1.DunningSchedule | undefined, livemode: boolean): DunningScheduleJson => ({
  object: 'dunning_schedule',
  livemode,
  days_after_failure: [...(schedule?.daysAfterFailure ?? [])],
  default: schedule?.default ?? true,
  updated: schedule?.updated ? Number(schedule.updated) : null,
  payment_retries: {
    days_after_failure: [...(schedule?.paymentRetries?.daysAfterFailure ?? [])],
    hour: schedule?.paymentRetries?.hour ?? 0,
    time_zone: schedule?.paymentRetries?.timeZone ?? 'UTC',
    default: schedule?.paymentRetries?.default ?? true,
  },
});

/** `/v1/dunning-schedule` (beyond the specification: the app's reminder schedule) → InvoicingService. */
export const DUNNING_SCHEDULE_ROUTES = defineRoutes('Dunning', [
  route({
    method: 'GET', path: '/v1/dunning-schedule', summary: "Retrieve the app's dunning schedule", response: DUNNING_SCHEDULE_SCHEMA,
    handler: async ({ services, tenant }) => present((await services.invoicing.getDunningSchedule({ tenant })).schedule, tenant.livemode),
  }),
  route({
    method: 'PUT', path: '/v1/dunning-schedule', summary: "Set the app's dunning schedule (failures from now on)", body: SetDunningScheduleDto, response: DUNNING_SCHEDULE_SCHEMA,
    handler: async ({ services, tenant, commandId, body }) =>
      present((await services.invoicing.setDunningSchedule({
        tenant,
        daysAfterFailure: body.days_after_failure ?? [],
        paymentRetries: body.payment_retries && {
          daysAfterFailure: body.payment_retries.days_after_failure, hour: body.payment_retries.hour ?? 9, timeZone: body.payment_retries.time_zone ?? 'UTC', default: false,
        },
        requestId: commandId,
      })).schedule, tenant.livemode),
  }),
]);
