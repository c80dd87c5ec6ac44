import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/config/load-config.ts';

// Issue 22, criterion 6: with no policy set, retention is Pulsar's broker default 0/0 unless the
// deployment says otherwise (ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES/_SIZE_IN_MB); stored batches
// then carry an expiry, so retention costs no write per entry (docs/design/storage.md#entry-expiry).
const base = {
  ACKLINE_CATALOG_TABLE: 'c',
  ACKLINE_ENTRIES_TABLE: 'e',
  ACKLINE_CURSORS_TABLE: 'k',
  ACKLINE_QUEUE_PREFIX: 'ackline-dev--',
  ACKLINE_SCHEDULER_QUEUE_URL: 'http://localhost/queue',
};

describe('the default retention', () => {
  it("is Pulsar's 0/0 unless configured, with entry expiry on (14 days)", () => {
    const config = loadConfig(base);
    expect(config.defaultRetention).toEqual({ retentionTimeInMinutes: 0, retentionSizeInMB: 0 });
    expect(config.entryExpiry).toEqual({ expireEntries: true, entryExpiryMs: 14 * 86_400_000 });
  });

  it('is the environment’s when set (-1/-1 keeps everything: batches are written without expiry)', () => {
    const env = {
      ...base,
      ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES: '-1',
      ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB: '-1',
    };
    const config = loadConfig(env);
    expect(config.defaultRetention).toEqual({ retentionTimeInMinutes: -1, retentionSizeInMB: -1 });
    expect(config.entryExpiry.expireEntries).toBe(false);
  });

  it.each([
    // [time, size, expiry seconds, batches expire]
    ['60', '-1', undefined, true], // an hour's window: settled topics need no visit to keep it
    [String(3.5 * 24 * 60), '-1', undefined, true], // a quarter of 14 days
    [String(3.5 * 24 * 60 + 1), '-1', undefined, false], // longer: a settled topic is not visited
    ['-1', '100', undefined, false], // kept by size alone: forever for a settled topic
    ['0', '0', '0', false], // expiry off: retention deletes, billed as writes
    ['0', '0', '600', true],
  ])('time %s and size %s with ACKLINE_ENTRY_EXPIRY_SECONDS %s: batches expire %s', (time, size, seconds, expires) => {
    const env = {
      ...base,
      ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES: time,
      ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB: size,
      ...(seconds === undefined ? {} : { ACKLINE_ENTRY_EXPIRY_SECONDS: seconds }),
    };
    expect(loadConfig(env).entryExpiry.expireEntries).toBe(expires);
  });

  it('refuses an entry expiry that is not a whole number of seconds', () => {
    expect(() => loadConfig({ ...base, ACKLINE_ENTRY_EXPIRY_SECONDS: '1.5' })).toThrow(
      /ACKLINE_ENTRY_EXPIRY_SECONDS/,
    );
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
