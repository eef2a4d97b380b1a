import { checkDunningSchedule, checkReminder, DEFAULT_DUNNING_SCHEDULE_DAYS, parseDunningSchedule } from '../src/dunning/dunning-schedule';
import { invoicingConfigFromEnv } from '../src/invoicing-config';

const base = { SUBSCRIPTION_GRPC_ADDR: '127.0.0.1:1', SMTP_URL: 'smtp://127.0.0.1:2525' };

describe('the dunning schedule', () => {
  it('defaults to 3, 7 and 14 days; DUNNING_SCHEDULE_DAYS replaces it', () => {
    expect(DEFAULT_DUNNING_SCHEDULE_DAYS).toEqual([3, 7, 14]);
    expect(invoicingConfigFromEnv(base).dunningScheduleDays).toEqual([3, 7, 14]);
    expect(invoicingConfigFromEnv({ ...base, DUNNING_SCHEDULE_DAYS: '1, 5,30' }).dunningScheduleDays).toEqual([1, 5, 30]);
  });

  it('is 1 to 10 whole days from 1 to 90, strictly increasing; anything else stops the service at boot', () => {
    expect(checkDunningSchedule([1])).toEqual([1]);
    expect(checkDunningSchedule([1, 2, 3, 4, 5, 6, 7, 8, 9, 90])).toHaveLength(10);
    for (const bad of [[], [0], [91], [-3], [2.5], [7, 3], [3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]) {
      expect(() => checkDunningSchedule(bad)).toThrow(expect.objectContaining({ code: 'parameter_invalid' }));
    }
    for (const text of ['', '3,,7', '3;7', 'three', '-1', '1e1']) expect(() => parseDunningSchedule(text)).toThrow();
    expect(() => invoicingConfigFromEnv({ ...base, DUNNING_SCHEDULE_DAYS: '7,3' })).toThrow(/DUNNING_SCHEDULE_DAYS/);
  });

  it('names a reminder n of N with 1 ≤ n ≤ N ≤ 10', () => {
    expect(checkReminder(3, 3)).toEqual({ number: 3, count: 3 });
    expect(() => checkReminder(0, 3)).toThrow(expect.objectContaining({ param: 'reminder_number' }));
    expect(() => checkReminder(4, 3)).toThrow(expect.objectContaining({ param: 'reminder_number' }));
    expect(() => checkReminder(1, 11)).toThrow(expect.objectContaining({ param: 'reminder_count' }));
  });
});
