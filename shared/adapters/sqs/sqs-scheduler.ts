import type { SQSClient } from '@aws-sdk/client-sqs';
import { ValidationError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { Clock } from '../../ports/clock.ts';
import type { DeadLetterJob, FanoutJob, ScheduledJob, Scheduler } from '../../ports/scheduler.ts';
import { sendInBatches } from './send-in-batches.ts';
import { sqsMessageBody } from './sqs-message-body.ts';

/**
 * The scheduler's delay queue on SQS. A job waits `min(maxDelaySeconds,
 * ceil(remaining))` seconds per hop (rounded up: never early); the scheduler
 * function sends it on for another hop until it is due.
 */
export class SqsScheduler implements Scheduler {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly clock: Clock,
    readonly maxDelaySeconds: number = 900,
  ) {}

  /** Sends the jobs in as few SendMessageBatch calls as SQS's limits allow (10 entries, 1 MiB). */
  async schedule(jobs: readonly ScheduledJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = this.clock.nowMs();
    const messages = jobs.map((job) => ({
      MessageBody: sqsMessageBody(encodeJob(job)),
      DelaySeconds: Math.min(this.maxDelaySeconds, Math.max(0, Math.ceil((job.dueAtMs - now) / 1000))),
    }));
    await sendInBatches(this.client, this.queueUrl, messages, 'the scheduler queue');
  }
}

export function encodeJob(job: ScheduledJob): string {
  return JSON.stringify(job);
}

/**
 * The job a scheduler message carries. Strict: a message that is not exactly one of the job
 * kinds, with every field of the right type, is rejected.
 * @throws ValidationError (InvalidPositionError, InvalidTopicNameError) for a malformed job.
 */
export function decodeJob(body: string): ScheduledJob {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw new ValidationError('Scheduled job is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ValidationError('Scheduled job is not an object');
  }
  const { kind, cursorId, dueAtMs } = parsed;
  if (typeof dueAtMs !== 'number' || !Number.isFinite(dueAtMs)) {
    throw new ValidationError('Scheduled job is malformed');
  }
  if (kind === 'purge') {
    const { jobId } = parsed;
    if (typeof jobId !== 'string' || jobId.length === 0) {
      throw new ValidationError('Scheduled purge job is malformed');
    }
    return { kind, jobId, dueAtMs };
  }
  if (kind === 'fanout') return decodeFanoutJob(parsed, dueAtMs);
  if (typeof cursorId !== 'string' || cursorId.length === 0) {
    throw new ValidationError('Scheduled job is malformed');
  }
  if (kind === 'ring') return { kind, cursorId, dueAtMs };
  if (kind === 'release') {
    const { partition, consumerId, from } = parsed;
    if (
      typeof partition !== 'string' ||
      typeof consumerId !== 'string' ||
      (from !== undefined && typeof from !== 'string')
    ) {
      throw new ValidationError('Scheduled release job is malformed');
    }
    TopicName.parse(partition);
    if (from !== undefined) Position.parseStored(from);
    return { kind, cursorId, partition, consumerId, ...(from !== undefined ? { from } : {}), dueAtMs };
  }
  if (kind === 'deadLetter') return decodeDeadLetterJob(parsed, cursorId, dueAtMs);
  throw new ValidationError(`Unknown scheduled job kind ${String(kind)}`);
}

function decodeDeadLetterJob(
  parsed: Record<string, unknown>,
  cursorId: string,
  dueAtMs: number,
): DeadLetterJob {
  const { consumerId, position, n, deliveries } = parsed;
  if (
    typeof consumerId !== 'string' ||
    consumerId.length === 0 ||
    typeof position !== 'string' ||
    !Number.isSafeInteger(n) ||
    (n as number) < 1 ||
    !Number.isSafeInteger(deliveries) ||
    (deliveries as number) < 0
  ) {
    throw new ValidationError('Scheduled dead-letter job is malformed');
  }
  Position.parseStored(position);
  return {
    kind: 'deadLetter',
    cursorId,
    consumerId,
    position,
    n: n as number,
    deliveries: deliveries as number,
    dueAtMs,
  };
}

function decodeFanoutJob(parsed: Record<string, unknown>, dueAtMs: number): FanoutJob {
  const { partition, subscriptionsVersion, shard } = parsed;
  const shardOk =
    shard === undefined ||
    (typeof shard === 'object' &&
      shard !== null &&
      Number.isSafeInteger((shard as { of?: unknown }).of) &&
      Number.isSafeInteger((shard as { index?: unknown }).index) &&
      (shard as { index: number }).index >= 0 &&
      (shard as { index: number }).index < (shard as { of: number }).of);
  if (typeof partition !== 'string' || typeof subscriptionsVersion !== 'string' || !shardOk) {
    throw new ValidationError('Scheduled fanout job is malformed');
  }
  TopicName.parse(partition);
  const { index, of } = (shard ?? {}) as { index?: number; of?: number };
  return {
    kind: 'fanout',
    partition,
    subscriptionsVersion,
    dueAtMs,
    ...(index !== undefined && of !== undefined ? { shard: { index, of } } : {}),
  };
}
