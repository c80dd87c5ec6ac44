import type { ScheduledJob } from '../ports/scheduler.ts';
import { handleAckTimeout } from './consume-messages.ts';
import { runFeedJob } from './feed-backlog.ts';
import type { UseCasePorts } from './ports.ts';

/** A job is run when due within this much: SQS delays are whole seconds, rounded up. */
const DUE_TOLERANCE_MS = 50;

/**
 * The scheduler's step for one job from its delay queue:
 * 1. not yet due: send it on for another hop (SQS delays stop at 900 s);
 * 2. `deliver`: put the token on its subscription queue now;
 * 3. `ackTimeout`: redeliver the delivery unless acknowledged or redelivered since;
 * 4. `feed`: put the next part of a subscription's backlog on its queue (runFeedJob).
 */
export async function runScheduledJob(ports: UseCasePorts, job: ScheduledJob): Promise<'hopped' | 'done'> {
  if (job.dueAtMs > ports.clock.nowMs() + DUE_TOLERANCE_MS) {
    await ports.scheduler.schedule([job]);
    ports.counters?.add('schedulerHops', 1);
    return 'hopped';
  }
  if (job.kind === 'deliver') {
    await ports.deliveryQueue.send(job.queue, [{ token: job.token, delaySeconds: 0 }]);
  } else if (job.kind === 'feed') {
    await runFeedJob(ports, job);
  } else {
    ports.counters?.add('ackTimeouts', 1);
    await handleAckTimeout(ports, job);
  }
  return 'done';
}
