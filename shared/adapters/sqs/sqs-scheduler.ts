import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { decodeDeliveryToken, encodeDeliveryToken } from '../../domain/delivery-token.ts';
import { ValidationError } from '../../domain/errors.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ScheduledJob, Scheduler } from '../../ports/scheduler.ts';

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

  async schedule(jobs: readonly ScheduledJob[]): Promise<void> {
    const now = this.clock.nowMs();
    for (let i = 0; i < jobs.length; i += 10) {
      let entries = jobs.slice(i, i + 10).map((job, index) => ({
        Id: String(index),
        MessageBody: encodeJob(job),
        DelaySeconds: Math.min(this.maxDelaySeconds, Math.max(0, Math.ceil((job.dueAtMs - now) / 1000))),
      }));
      for (let attempt = 0; entries.length > 0; attempt++) {
        const result = await this.client.send(
          new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }),
        );
        const failed = new Set((result.Failed ?? []).map((failure) => failure.Id));
        if (failed.size > 0 && attempt >= 4) throw new Error(`Scheduling failed for ${failed.size} jobs`);
        entries = entries.filter((entry) => failed.has(entry.Id));
      }
    }
  }
}

export function encodeJob(job: ScheduledJob): string {
  const { token, ...rest } = job;
  return JSON.stringify({ ...rest, token: JSON.parse(encodeDeliveryToken(token)) });
}

export function decodeJob(body: string): ScheduledJob {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw new ValidationError('Scheduled job is not JSON');
  }
  const token = decodeDeliveryToken(JSON.stringify(parsed.token));
  const queue = parsed.queue as { cursorId?: unknown; ordered?: unknown } | undefined;
  if (
    typeof queue?.cursorId !== 'string' ||
    typeof queue.ordered !== 'boolean' ||
    typeof parsed.dueAtMs !== 'number'
  ) {
    throw new ValidationError('Scheduled job is malformed');
  }
  const target = { cursorId: queue.cursorId, ordered: queue.ordered };
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
