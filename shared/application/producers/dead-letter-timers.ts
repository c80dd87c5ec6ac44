import { DeadLetterRefusedError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../ports/consumer-registry.ts';
import type { TrackerEntry } from '../../ports/dispatch-store.ts';
import type { DeadLetterJob } from '../../ports/scheduler.ts';
import { deadLetterOnTimer } from '../engine/dead-letter-timer.ts';
import { cursorOf, engineOf } from '../engine/engine-ports.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { deadLetterProducerOf } from './dead-letter-producer.ts';

/**
 * The server's dead-letter timers (Pulsar dead-letters on its ack-timeout timer, not on the next
 * receive). A dispatch that hands a consumer its last delivery allowed by its dead-letter policy
 * (redeliveryCount = maxRedeliverCount) with an ack timeout answers that timeout's tracker entry;
 * the scheduler runs a `deadLetter` job when it is due, which dead-letters the entries if they are
 * still unacknowledged then, whether or not any consumer polls.
 * Cost: one scheduler message per such delivery run (SendMessageBatch, 10 a request).
 */
export async function scheduleDeadLetterTimers(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
  timers: readonly TrackerEntry[],
): Promise<void> {
  if (timers.length === 0) return;
  await ports.scheduler.schedule(
    timers.map((timer) => ({
      kind: 'deadLetter' as const,
      cursorId: partition.cursorId,
      consumerId: consumer.consumerId,
      position: timer.position.toString(),
      n: timer.n,
      deliveries: timer.deliveries,
      dueAtMs: timer.dueAtMs,
    })),
  );
}

/**
 * The scheduler's `deadLetter` job:
 * 1. the consumer's record gives its dead-letter policy (stored with the consumer at subscribe);
 *    a consumer that is gone has had what it held released, and the next consumer's policy
 *    applies to it when it is picked up, as in Pulsar (the policy is the consumer's);
 * 2. what the job's tracker entry names and is still due with its count is published to the
 *    dead-letter topic as the consumer's role, and acknowledged (once, whatever races it);
 * 3. part of it not due yet (its ack timeout, or another step's claim, runs later): the job runs
 *    again then. A refused dead letter (the role may no longer produce there) is left to the
 *    consumer's next receive, which answers the refusal.
 */
export async function runDeadLetterJob(ports: UseCasePorts, job: DeadLetterJob): Promise<void> {
  const consumer = await ports.consumers.get(job.consumerId);
  const partition = consumer?.partitions.find((candidate) => candidate.cursorId === job.cursorId);
  if (!consumer || !partition) return;
  const deadLetter = deadLetterProducerOf(ports, consumer, partition);
  if (!deadLetter) return;
  const entry: TrackerEntry = {
    dueAtMs: job.dueAtMs,
    position: Position.parseStored(job.position),
    deliveries: job.deliveries,
    n: job.n,
  };
  let retryAtMs: number | undefined;
  try {
    ({ retryAtMs } = await deadLetterOnTimer(engineOf(ports), {
      cursor: cursorOf(consumer, partition),
      entry,
      deadLetter,
    }));
  } catch (error) {
    if (error instanceof DeadLetterRefusedError) return;
    throw error;
  }
  if (retryAtMs !== undefined) await ports.scheduler.schedule([{ ...job, dueAtMs: retryAtMs }]);
}
