import { describe, expect, it } from 'vitest';
import { decodeJob, encodeJob } from '../../../../shared/adapters/sqs/sqs-scheduler.ts';
import { ValidationError } from '../../../../shared/domain/errors.ts';
import type { ScheduledJob } from '../../../../shared/ports/scheduler.ts';

const release: ScheduledJob = {
  kind: 'release',
  cursorId: 'c-1',
  partition: 'persistent://public/default/orders-partition-1',
  consumerId: 'consumer-1',
  // Above 2^53: positions travel as strings, exactly.
  from: '9007199254740993:4',
  dueAtMs: 1_700_000_000_123,
};

const deadLetter: ScheduledJob = {
  kind: 'deadLetter',
  cursorId: 'c-1',
  consumerId: 'consumer-1',
  position: '9007199254740993:4',
  n: 3,
  deliveries: 3,
  dueAtMs: 1_700_000_000_123,
};

const fanout: ScheduledJob = {
  kind: 'fanout',
  partition: 'persistent://public/default/orders-partition-1',
  subscriptionsVersion: '7',
  dueAtMs: 1_700_000_000_000,
};

describe('scheduler job codec', () => {
  it.each<[string, ScheduledJob]>([
    ['a ring job', { kind: 'ring', cursorId: 'c-1', dueAtMs: 1_700_000_000_000 }],
    ['a release job', release],
    ['a release job from the start', { ...release, from: undefined } as unknown as ScheduledJob],
    ['a dead-letter job', deadLetter],
    ['a fan-out job', fanout],
    ['a fan-out shard job', { ...fanout, shard: { index: 2, of: 3 } } as ScheduledJob],
  ])('round-trips %s', (_, job) => {
    expect(decodeJob(encodeJob(job))).toEqual(JSON.parse(JSON.stringify(job)));
  });

  it.each<[string, string]>([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['an unknown kind', JSON.stringify({ kind: 'deliver', cursorId: 'c', dueAtMs: 1 })],
    ['a ring job without cursor', JSON.stringify({ kind: 'ring', dueAtMs: 1 })],
    ['a ring job with a non-finite time', '{"kind":"ring","cursorId":"c","dueAtMs":"soon"}'],
    ['a release job without consumer', JSON.stringify({ ...release, consumerId: undefined })],
    ['a release job with a bad partition', JSON.stringify({ ...release, partition: 'persistent://a' })],
    ['a release job with a bad position', JSON.stringify({ ...release, from: '1:x' })],
    ['a dead-letter job without consumer', JSON.stringify({ ...deadLetter, consumerId: undefined })],
    ['a dead-letter job with a bad position', JSON.stringify({ ...deadLetter, position: '1:x' })],
    ['a dead-letter job of no entries', JSON.stringify({ ...deadLetter, n: 0 })],
    ['a dead-letter job with a fractional count', JSON.stringify({ ...deadLetter, deliveries: 1.5 })],
    ['a fan-out job with a bad partition', JSON.stringify({ ...fanout, partition: 'persistent://a' })],
    ['a fan-out job without version', JSON.stringify({ ...fanout, subscriptionsVersion: undefined })],
    ['a fan-out job with a fractional shard', JSON.stringify({ ...fanout, shard: { index: 0.5, of: 3 } })],
    ['a fan-out job with a shard past its count', JSON.stringify({ ...fanout, shard: { index: 3, of: 3 } })],
  ])('rejects %s with a ValidationError', (_, body) => {
    expect(() => decodeJob(body)).toThrow(ValidationError);
  });
});
