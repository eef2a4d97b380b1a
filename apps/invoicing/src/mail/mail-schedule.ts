import { RetrySchedule } from '@recur/jobs';

/**
 * The attempts of an invoice e-mail: twelve in all over about a day (1 s, 5 s, 30 s, 2 min,
 * 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h apart), so an SMTP outage of hours delays mails and a
 * short blip costs seconds.
 */
export const MAIL_SCHEDULE = new RetrySchedule([1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 28_800_000]);
