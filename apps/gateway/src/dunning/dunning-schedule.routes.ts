import type { invoicingV1 } from '@recur/contracts';
import { DUNNING_DAY_MAX, DUNNING_REMINDERS_MAX } from '@recur/vocabulary';
import { defineRoutes, responseSchema, route } from '../routing/define-routes';
import { SetDunningScheduleDto } from './dunning-schedule.dto';

/** The public JSON of the app's dunning schedule. */
export interface DunningScheduleJson {
  object: 'dunning_schedule';
  livemode: boolean;
  days_after_failure: number[];
  default: boolean;
  updated: number | null;
}

export const DUNNING_SCHEDULE_SCHEMA = responseSchema<DunningScheduleJson>('DunningSchedule', {
  type: 'object',
  required: ['object', 'livemode', 'days_after_failure', 'default', 'updated'],
  properties: {
    object: { type: 'string', enum: ['dunning_schedule'] },
    livemode: { type: 'boolean' },
    days_after_failure: {
      type: 'array', minItems: 1, maxItems: DUNNING_REMINDERS_MAX, items: { type: 'integer', minimum: 1, maximum: DUNNING_DAY_MAX },
      example: [3, 7, 14], description: 'Reminder n goes out this many days after the failed payment; the last is final (past_due).',
    },
    default: { type: 'boolean', description: "True while the app set none: the service's default (DUNNING_SCHEDULE_DAYS) applies." },
    updated: { type: ['integer', 'null'], description: 'When the app last set it (unix seconds); null for the default.' },
  },
});

const present = (schedule: invoicingV1.DunningSchedule | undefined, livemode: boolean): DunningScheduleJson => ({
  object: 'dunning_schedule',
  livemode,
  days_after_failure: [...(schedule?.daysAfterFailure ?? [])],
  default: schedule?.default ?? true,
  updated: schedule?.updated ? Number(schedule.updated) : null,
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
      present((await services.invoicing.setDunningSchedule({ tenant, daysAfterFailure: body.days_after_failure, requestId: commandId })).schedule, tenant.livemode),
  }),
]);
