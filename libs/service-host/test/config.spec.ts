import { ConfigError } from '@recur/kernel';
import { serviceConfigFromEnv } from '../src/config';

const env = { DATABASE_URL: 'postgresql://recur@db/recur_catalog' };

describe('OUTBOX_RETENTION_HOURS', () => {
  it('defaults to the relay’s 24 hours and takes whole hours from 1', () => {
    expect(serviceConfigFromEnv(env).outboxRetentionHours).toBe(24);
    expect(serviceConfigFromEnv({ ...env, OUTBOX_RETENTION_HOURS: '1' }).outboxRetentionHours).toBe(1);
    expect(serviceConfigFromEnv({ ...env, OUTBOX_RETENTION_HOURS: '168' }).outboxRetentionHours).toBe(168);
  });

  it.each(['0', '-4', '1.5', 'a day'])('stops the boot on %p, naming the variable', (value) => {
    expect(() => serviceConfigFromEnv({ ...env, OUTBOX_RETENTION_HOURS: value })).toThrow(ConfigError);
    expect(() => serviceConfigFromEnv({ ...env, OUTBOX_RETENTION_HOURS: value })).toThrow(/OUTBOX_RETENTION_HOURS/);
  });
});
