import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/config/load-config.ts';

// With no policy set, retention keeps everything (-1/-1) unless the deployment sets Pulsar's 0/0 or
// another default (ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES/_SIZE_IN_MB): a delete costs DynamoDB
// write units like the write did (docs/design/storage.md#retention-and-maintenance-cost).
const base = {
  ACKLINE_CATALOG_TABLE: 'c',
  ACKLINE_ENTRIES_TABLE: 'e',
  ACKLINE_CURSORS_TABLE: 'k',
  ACKLINE_QUEUE_PREFIX: 'ackline-dev--',
  ACKLINE_SCHEDULER_QUEUE_URL: 'http://localhost/queue',
};

describe('the default retention', () => {
  it('keeps everything unless configured', () => {
    expect(loadConfig(base).defaultRetention).toEqual({ retentionTimeInMinutes: -1, retentionSizeInMB: -1 });
  });

  it('is the environment’s when set (Pulsar’s 0/0, say)', () => {
    const env = {
      ...base,
      ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES: '0',
      ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB: '0',
    };
    expect(loadConfig(env).defaultRetention).toEqual({ retentionTimeInMinutes: 0, retentionSizeInMB: 0 });
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
