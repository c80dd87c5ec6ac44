import { Position } from '../../domain/position.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { ScheduledJob } from '../../ports/scheduler.ts';
import { doorbellOf } from '../consumers/doorbells.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { releaseConsumerStep } from '../engine/release.ts';
import { runDeadLetterJob } from '../producers/dead-letter-timers.ts';
import { runFanoutJob } from '../producers/publish-fanout.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { runDeletionStep } from './deletion-jobs.ts';

/** A job is run when due within this much: SQS delays are whole seconds, rounded up. */
const DUE_TOLERANCE_MS = 50;

/**
 * The scheduler's step for one job from its delay queue:
 * 1. not yet due: send it on for another hop (SQS delays stop at 900 s);
 * 2. `ring`: ring the subscription's doorbell (a timer came due);
 * 3. `release`: one release step of a gone consumer's held entries; the rest as another job;
 * 4. `purge`: one step of a deletion job (it schedules the next itself);
 * 5. `deadLetter`: an ack timeout after which the delivery would pass its consumer's
 *    maxRedeliverCount: dead-letter what is still due (runDeadLetterJob).
 * 6. `fanout`: a publish's rings to a partition's subscriptions (runFanoutJob).
 * A job whose queue or cursor is gone (its subscription deleted) is done.
 */
export async function runScheduledJob(ports: UseCasePorts, job: ScheduledJob): Promise<'hopped' | 'done'> {
  if (job.dueAtMs > ports.clock.nowMs() + DUE_TOLERANCE_MS) {
    await ports.scheduler.schedule([job]);
    ports.counters?.add('schedulerHops', 1);
    return 'hopped';
  }
  if (job.kind === 'purge') {
    await runDeletionStep(ports, job.jobId);
    return 'done';
  }
  if (job.kind === 'deadLetter') {
    await runDeadLetterJob(ports, job);
    return 'done';
  }
  if (job.kind === 'fanout') {
    await runFanoutJob(ports, job);
    return 'done';
  }
  if (job.kind === 'ring') {
    await ports.deliveryQueue.ring(doorbellOf(job.cursorId), 0).catch(() => undefined);
    return 'done';
  }
  const cursor = {
    partition: TopicName.parse(job.partition),
    cursorId: job.cursorId,
    type: 'Shared' as const,
  };
  const from = job.from === undefined ? undefined : Position.parseStored(job.from);
  const { next } = await releaseConsumerStep(engineOf(ports), cursor, job.consumerId, from);
  if (next) {
    await ports.scheduler.schedule([{ ...job, from: next.toString(), dueAtMs: ports.clock.nowMs() }]);
  }
  await ports.deliveryQueue.ring(doorbellOf(job.cursorId), 0).catch(() => undefined);
  return 'done';
}
