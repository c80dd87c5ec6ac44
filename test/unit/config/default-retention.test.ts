import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/config/load-config.ts';

// Issue 22, criterion 6: with no policy set, retention is Pulsar's broker default 0/0 unless the
// deployment says otherwise (ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES/_SIZE_IN_MB).
const base = {
  ACKLINE_CATALOG_TABLE: 'c',
  ACKLINE_ENTRIES_TABLE: 'e',
  ACKLINE_CURSORS_TABLE: 'k',
  ACKLINE_QUEUE_PREFIX: 'ackline-dev--',
  ACKLINE_SCHEDULER_QUEUE_URL: 'http://localhost/queue',
};

describe('the default retention', () => {
  it("is Pulsar's 0/0 unless configured", () => {
    expect(loadConfig(base).defaultRetention).toEqual({ retentionTimeInMinutes: 0, retentionSizeInMB: 0 });
  });

  it('is the environment’s when set', () => {
    const env = {
      ...base,
      ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES: '-1',
      ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB: '-1',
    };
    expect(loadConfig(env).defaultRetention).toEqual({ retentionTimeInMinutes: -1, retentionSizeInMB: -1 });
  });

  it.each([
    ['10', '0'],
    ['-2', '-1'],
    ['x', '-1'],
  ])('refuses time %s and size %s as Pulsar refuses such a policy', (time, size) => {
    const env = {
      ...base,
      ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES: time,
      ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB: size,
    };
    expect(() => loadConfig(env)).toThrow(/ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES/);
  });
});
