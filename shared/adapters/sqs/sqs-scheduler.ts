import type { SQSClient } from '@aws-sdk/client-sqs';
import { decodeDeliveryToken, encodeDeliveryToken, encodeWithinLimit } from '../../domain/delivery-token.ts';
import { ValidationError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { Clock } from '../../ports/clock.ts';
import type { SubscriptionQueue } from '../../ports/delivery-queue.ts';
import type { FeedJob, JobPosition, ScheduledJob, Scheduler } from '../../ports/scheduler.ts';
import { sendInBatches } from './send-in-batches.ts';
import { SQS_MAX_MESSAGE_BYTES } from './sqs-limits.ts';
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

  /**
   * Sends the jobs in as few SendMessageBatch calls as SQS's limits allow (10
   * entries, 1 MiB); a job whose token would make it larger than
   * SQS_MAX_MESSAGE_BYTES carries the token without its inline message.
   */
  async schedule(jobs: readonly ScheduledJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = this.clock.nowMs();
    const messages = jobs.map((job) => ({
      MessageBody: encodeJobWithinLimit(job, SQS_MAX_MESSAGE_BYTES),
      DelaySeconds: Math.min(this.maxDelaySeconds, Math.max(0, Math.ceil((job.dueAtMs - now) / 1000))),
    }));
    await sendInBatches(this.client, this.queueUrl, messages, 'the scheduler queue');
  }
}

/** `encodeJob(job)` as an SQS body, with the job's token by reference when the whole job would be over `maxBytes`. */
export function encodeJobWithinLimit(job: ScheduledJob, maxBytes: number): string {
  if (job.kind === 'feed') return sqsMessageBody(encodeJob(job));
  return encodeWithinLimit(job.token, maxBytes, (token) => sqsMessageBody(encodeJob({ ...job, token })));
}

export function encodeJob(job: ScheduledJob): string {
  if (job.kind === 'feed') {
    const wire: Record<string, unknown> = {
      kind: job.kind,
      partition: job.partition,
      subscription: job.subscription,
      queue: { cursorId: job.queue.cursorId, ordered: job.queue.ordered },
      jobId: job.jobId,
      after: { ledgerId: job.after.ledgerId, entryId: job.after.entryId },
      until: { ledgerId: job.until.ledgerId, entryId: job.until.entryId },
      dueAtMs: job.dueAtMs,
    };
    if (job.previousJobId !== undefined) wire.previousJobId = job.previousJobId;
    if (job.acknowledgeUnwritten) wire.acknowledgeUnwritten = true;
    if (job.awaitUnwrittenUntilMs !== undefined) wire.awaitUnwrittenUntilMs = job.awaitUnwrittenUntilMs;
    return JSON.stringify(wire);
  }
  const { token, ...rest } = job;
  return JSON.stringify({ ...rest, token: JSON.parse(encodeDeliveryToken(token)) });
}

/**
 * The job a scheduler message carries. Strict: a message that is not exactly
 * one of the job kinds, with every field of the right type, is rejected.
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
  const queue = parsed.queue as { cursorId?: unknown; ordered?: unknown } | undefined;
  if (
    typeof queue?.cursorId !== 'string' ||
    typeof queue.ordered !== 'boolean' ||
    typeof parsed.dueAtMs !== 'number' ||
    !Number.isFinite(parsed.dueAtMs)
  ) {
    throw new ValidationError('Scheduled job is malformed');
  }
  const target = { cursorId: queue.cursorId, ordered: queue.ordered };
  if (parsed.kind === 'feed') {
    return decodeFeedJob(parsed, target, parsed.dueAtMs);
  }
  const token = decodeDeliveryToken(JSON.stringify(parsed.token));
  if (parsed.kind === 'deliver') {
    return { kind: 'deliver', queue: target, token, dueAtMs: parsed.dueAtMs };
  }
  if (
    parsed.kind === 'ackTimeout' &&
    typeof parsed.consumerId === 'string' &&
    typeof parsed.receipt === 'string'
  ) {
    return {
      kind: 'ackTimeout',
      consumerId: parsed.consumerId,
      queue: target,
      receipt: parsed.receipt,
      token,
      dueAtMs: parsed.dueAtMs,
    };
  }
  throw new ValidationError(`Unknown scheduled job kind ${String(parsed.kind)}`);
}

function decodeFeedJob(parsed: Record<string, unknown>, queue: SubscriptionQueue, dueAtMs: number): FeedJob {
  const { partition, subscription, jobId, previousJobId, acknowledgeUnwritten, awaitUnwrittenUntilMs } =
    parsed;
  if (
    typeof partition !== 'string' ||
    typeof subscription !== 'string' ||
    subscription.length === 0 ||
    typeof jobId !== 'string' ||
    jobId.length === 0 ||
    (previousJobId !== undefined && (typeof previousJobId !== 'string' || previousJobId.length === 0)) ||
    (acknowledgeUnwritten !== undefined && typeof acknowledgeUnwritten !== 'boolean') ||
    (awaitUnwrittenUntilMs !== undefined &&
      (typeof awaitUnwrittenUntilMs !== 'number' || !Number.isFinite(awaitUnwrittenUntilMs)))
  ) {
    throw new ValidationError('Scheduled feed job is malformed');
  }
  TopicName.parse(partition);
  const job: { -readonly [K in keyof FeedJob]: FeedJob[K] } = {
    kind: 'feed',
    partition,
    subscription,
    queue,
    jobId,
    after: jobPosition(parsed.after, 'after'),
    until: jobPosition(parsed.until, 'until'),
    dueAtMs,
  };
  if (previousJobId !== undefined) job.previousJobId = previousJobId;
  if (acknowledgeUnwritten) job.acknowledgeUnwritten = true;
  if (awaitUnwrittenUntilMs !== undefined) job.awaitUnwrittenUntilMs = awaitUnwrittenUntilMs as number;
  return job;
}

/** A position field of a job: an entry (non-negative decimal ids), or entryId -1 (before the first), as strings. */
function jobPosition(value: unknown, what: string): JobPosition {
  const position = value as { ledgerId?: unknown; entryId?: unknown } | undefined;
  if (typeof position?.ledgerId !== 'string' || typeof position.entryId !== 'string') {
    throw new ValidationError(`Scheduled feed job has no valid ${what} position`);
  }
  const parsed = Position.ofStored(position.ledgerId, position.entryId);
  return { ledgerId: parsed.ledgerId.toString(), entryId: parsed.entryId.toString() };
}
