import { describe, expect, it } from 'vitest';
import { SQS_MAX_MESSAGE_BYTES } from '../../../../shared/adapters/sqs/sqs-limits.ts';
import { decodeJob, encodeJob, encodeJobWithinLimit } from '../../../../shared/adapters/sqs/sqs-scheduler.ts';
import type { DeliveryToken } from '../../../../shared/domain/delivery-token.ts';
import { ValidationError } from '../../../../shared/domain/errors.ts';
import type { FeedJob, ScheduledJob } from '../../../../shared/ports/scheduler.ts';

const token: DeliveryToken = {
  topic: 'persistent://public/default/orders-partition-1',
  ledgerId: '9007199254740993',
  entryId: '4',
  redeliveryCount: 2,
  message: { payload: 'héllo', key: 'k', properties: { a: 'b' }, publishTimeMs: 1_700_000_000_000 },
};

const feed: FeedJob = {
  kind: 'feed',
  partition: 'persistent://public/default/orders-partition-1',
  subscription: 'billing',
  queue: { cursorId: 'c-1', ordered: false },
  jobId: 'job-2',
  previousJobId: 'job-1',
  after: { ledgerId: '3', entryId: '999' },
  // Above 2^53: ids travel as strings, exactly.
  until: { ledgerId: '9223372036854775807', entryId: '9007199254740993' },
  dueAtMs: 1_700_000_000_123,
};

describe('scheduler job codec', () => {
  it.each<[string, ScheduledJob]>([
    ['a deliver job', { kind: 'deliver', queue: { cursorId: 'c-1', ordered: true }, token, dueAtMs: 5 }],
    [
      'an ackTimeout job',
      {
        kind: 'ackTimeout',
        consumerId: 'consumer-1',
        queue: { cursorId: 'c-1', ordered: false },
        receipt: 'receipt-1',
        token,
        dueAtMs: 6,
      },
    ],
    ['a feed job', feed],
    [
      "a recovery's first feed job",
      {
        kind: 'feed',
        partition: 'persistent://public/default/orders',
        subscription: 'audit',
        queue: { cursorId: 'c-2', ordered: true },
        jobId: 'job-1',
        after: { ledgerId: '1', entryId: '0' },
        until: { ledgerId: '2', entryId: '5' },
        acknowledgeUnwritten: true,
        dueAtMs: 7,
      },
    ],
  ])('round-trips %s exactly', (_, job) => {
    expect(decodeJob(encodeJob(job))).toStrictEqual(job);
  });

  it('writes a feed job with its fields only (no token), and acknowledgeUnwritten only when set', () => {
    expect(JSON.parse(encodeJob(feed))).toStrictEqual({
      kind: 'feed',
      partition: feed.partition,
      subscription: 'billing',
      queue: { cursorId: 'c-1', ordered: false },
      jobId: 'job-2',
      previousJobId: 'job-1',
      after: { ledgerId: '3', entryId: '999' },
      until: feed.until,
      dueAtMs: feed.dueAtMs,
    });
    expect(JSON.parse(encodeJob({ ...feed, acknowledgeUnwritten: false }))).not.toHaveProperty(
      'acknowledgeUnwritten',
    );
    expect(JSON.parse(encodeJob({ ...feed, previousJobId: undefined }))).not.toHaveProperty('previousJobId');
  });

  const wire = (changes: Record<string, unknown>): string =>
    JSON.stringify({ ...JSON.parse(encodeJob(feed)), ...changes });

  it.each([
    ['not JSON', '{'],
    ['JSON null', 'null'],
    ['a JSON array', '[]'],
    ['an unknown kind', wire({ kind: 'compact' })],
    ['no queue', wire({ queue: undefined })],
    ['a queue without ordered', wire({ queue: { cursorId: 'c-1' } })],
    ['dueAtMs as a string', wire({ dueAtMs: '5' })],
    ['a feed job without partition', wire({ partition: undefined })],
    ['a feed job naming no valid topic', wire({ partition: 'persistent://only-tenant' })],
    ['a feed job without subscription', wire({ subscription: undefined })],
    ['a feed job with an empty subscription', wire({ subscription: '' })],
    ['a feed job without jobId', wire({ jobId: undefined })],
    ['a feed job with an empty jobId', wire({ jobId: '' })],
    ['a feed job with a numeric jobId', wire({ jobId: 7 })],
    ['a feed job with an empty previousJobId', wire({ previousJobId: '' })],
    ['a feed job with previousJobId null', wire({ previousJobId: null })],
    ['a feed job without after', wire({ after: undefined })],
    ['a feed job without until', wire({ until: undefined })],
    ['a feed job with numeric ids', wire({ after: { ledgerId: 3, entryId: 999 } })],
    ['a feed job with an entry id below -1', wire({ after: { ledgerId: '3', entryId: '-2' } })],
    ['a feed job with awaitUnwrittenUntilMs not a number', wire({ awaitUnwrittenUntilMs: '5' })],
    ['a feed job with a non-decimal id', wire({ until: { ledgerId: '0x10', entryId: '1' } })],
    [
      'a feed job with an id above 2^63-1',
      wire({ until: { ledgerId: '9223372036854775808', entryId: '1' } }),
    ],
    ['a feed job with acknowledgeUnwritten not a boolean', wire({ acknowledgeUnwritten: 'yes' })],
    ['a deliver job without token', JSON.stringify({ kind: 'deliver', queue: feed.queue, dueAtMs: 1 })],
    [
      'an ackTimeout job without receipt',
      JSON.stringify({
        ...JSON.parse(encodeJob({ kind: 'deliver', queue: feed.queue, token, dueAtMs: 1 })),
        kind: 'ackTimeout',
        consumerId: 'c',
      }),
    ],
  ])('rejects %s with a ValidationError', (_, body) => {
    expect(() => decodeJob(body)).toThrow(ValidationError);
  });

  describe('within the SQS message limit', () => {
    const KIB = 1024;
    const withPayload = (payload: string): DeliveryToken => ({
      ...token,
      message: { payload, key: 'k', publishTimeMs: 1, deliverAtMs: 9 },
    });
    const ackTimeout = (t: DeliveryToken): ScheduledJob => ({
      kind: 'ackTimeout',
      consumerId: 'consumer-1',
      queue: { cursorId: 'c-1', ordered: false },
      receipt: 'r'.repeat(1024),
      token: t,
      dueAtMs: 6,
    });
    const deliver = (t: DeliveryToken): ScheduledJob => ({
      kind: 'deliver',
      queue: feed.queue,
      token: t,
      dueAtMs: 5,
    });

    it.each<[string, (t: DeliveryToken) => ScheduledJob, string]>([
      ['an ackTimeout job with a 256 KiB payload', ackTimeout, 'x'.repeat(256 * KIB)],
      ['a deliver job with a 256 KiB payload', deliver, 'x'.repeat(256 * KIB)],
      ['a deliver job with 1 MiB of multi-byte characters', deliver, 'é'.repeat(256 * KIB)],
    ])('keeps the message inline when it fits: %s', (_, job, payload) => {
      const body = encodeJobWithinLimit(job(withPayload(payload)), SQS_MAX_MESSAGE_BYTES);
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(SQS_MAX_MESSAGE_BYTES);
      expect(decodeJob(body)).toStrictEqual(job(withPayload(payload)));
    });

    it.each<[string, (t: DeliveryToken) => ScheduledJob, string]>([
      // JSON escapes a control character as six bytes: 190 KiB of them encode to 1.1 MiB.
      ['an ackTimeout job whose payload escapes past 1 MiB', ackTimeout, '\u0001'.repeat(190 * KIB)],
      ['a deliver job whose payload escapes past 1 MiB', deliver, '"'.repeat(520 * KIB)],
      ['a payload just over the limit', deliver, 'x'.repeat(SQS_MAX_MESSAGE_BYTES)],
    ])('sends the token by reference, keeping key and deliverAt, when it would not fit: %s', (_, job, payload) => {
      const body = encodeJobWithinLimit(job(withPayload(payload)), SQS_MAX_MESSAGE_BYTES);
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(SQS_MAX_MESSAGE_BYTES);
      const { message: _message, ...reference } = token;
      expect(decodeJob(body)).toStrictEqual(job({ ...reference, key: 'k', deliverAtMs: 9 }));
    });

    it('leaves a feed job as it is', () => {
      expect(encodeJobWithinLimit(feed, 100)).toBe(encodeJob(feed));
    });
  });
});
