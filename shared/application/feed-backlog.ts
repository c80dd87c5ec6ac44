import { NotFoundError } from '../domain/errors.ts';
import { Position } from '../domain/position.ts';
import { TopicName } from '../domain/topic-name.ts';
import type { FeedJob, JobPosition } from '../ports/scheduler.ts';
import type { SubscriptionRecord } from '../ports/topic-catalog.ts';
import { backfill, queueOf } from './delivery.ts';
import type { UseCasePorts } from './ports.ts';

/**
 * Backlog entries a subscribe (or a queue rebuild) enqueues itself, so the
 * first receive finds messages, before the feeder takes over. Kept small: a
 * subscribe answers within API Gateway's 29 s, once per partition.
 */
export const INLINE_BACKFILL = 1_000;
/**
 * Backlog entries one feed job enqueues at most (about 200 batch sends). Its
 * time is bounded too (FEED_TIME_BUDGET_MS).
 */
export const FEED_BATCH = 2_000;
/**
 * A feed job starts no new slice of 100 entries after this long, so that ten
 * jobs in one scheduler invocation finish well inside its 10 s timeout on a
 * small function. Measured on the embedded stack: 2,000 entries cost the
 * client about 0.75 s of CPU (SQS and DynamoDB calls, token encoding).
 */
export const FEED_TIME_BUDGET_MS = 3_000;
/**
 * Flow control: a feed job waits while the subscription queue holds more than
 * this many tokens (visible or delayed), so a slow consumer's queue does not
 * take the whole backlog at once.
 */
export const FEED_HIGH_WATER = 10_000;
/** How long a feed job waits when the queue is above FEED_HIGH_WATER. */
export const FEED_RETRY_MS = 10_000;
/**
 * How long a new subscription's feed waits for an entry allocated before its
 * announcement but not yet written: twice the longest a publishing function
 * runs (29 s), after which no publisher can still write it.
 */
export const UNWRITTEN_GRACE_MS = 60_000;
/** How long a feed waiting for such an entry pauses before it looks again. */
export const UNWRITTEN_RETRY_MS = 1_000;

/**
 * Puts a subscription's backlog on its queue: the first INLINE_BACKFILL
 * entries (or `inlineLimit`) now, the rest through the scheduler, FEED_BATCH entries per feed
 * job (see runFeedJob). The feeder owes the entries up to the last one
 * written when this call reads the ledgers; later ones get their tokens from
 * publish's fan-out (see backfill). Tokens go on the queue in log order, each
 * part after the one before. A new feed is recorded on the subscription
 * (TopicCatalog.recordFeedProgress): a feed started earlier stops at its next
 * job.
 * @returns how many tokens were enqueued now.
 */
export async function feedBacklog(
  ports: UseCasePorts,
  partition: TopicName,
  subscription: SubscriptionRecord,
  options: {
    readonly acknowledgeUnwritten?: boolean;
    /** How many entries to enqueue now (default INLINE_BACKFILL; a partitioned topic's subscribe shares it). */
    readonly inlineLimit?: number;
    /** The last entry owed (default: the last one allocated when the ledgers are read now). */
    readonly until?: Position;
    /** See BackfillOptions.awaitUnwrittenUntilMs: a new subscription's feed. */
    readonly awaitUnwrittenUntilMs?: number;
  } = {},
): Promise<number> {
  const result = await backfill(ports, partition, subscription, {
    limit: options.inlineLimit ?? INLINE_BACKFILL,
    ...(options.until ? { until: options.until } : {}),
    ...(options.awaitUnwrittenUntilMs !== undefined
      ? { awaitUnwrittenUntilMs: options.awaitUnwrittenUntilMs }
      : {}),
    ...(options.acknowledgeUnwritten ? { acknowledgeUnwritten: true } : {}),
  });
  if (result.next && result.until) {
    const jobId = ports.ids.newId();
    const started = await ports.catalog.recordFeedProgress(
      partition,
      subscription.name,
      subscription.cursorId,
      undefined,
      { jobId, after: result.next },
    );
    // Not started: the subscription was deleted meanwhile, nothing is owed.
    if (started) {
      const job: FeedJob = {
        kind: 'feed',
        partition: partition.toString(),
        subscription: subscription.name,
        queue: queueOf(subscription),
        jobId,
        after: jobPosition(result.next),
        until: jobPosition(result.until),
        dueAtMs: ports.clock.nowMs() + (result.waiting ? UNWRITTEN_RETRY_MS : 0),
        ...(options.acknowledgeUnwritten ? { acknowledgeUnwritten: true } : {}),
        ...(options.awaitUnwrittenUntilMs !== undefined
          ? { awaitUnwrittenUntilMs: options.awaitUnwrittenUntilMs }
          : {}),
      };
      await ports.scheduler.schedule([job]);
    }
  }
  return result.enqueued;
}

/**
 * The feeder's step, run by the scheduler for a `feed` job:
 * 1. the subscription is gone, or was deleted and recreated (another cursor):
 *    drop the job;
 * 2. the subscription's feed progress names another job: drop it (a copy of
 *    a job that already ran, a feed started over by a rebuild); unless it
 *    names the job that scheduled this one, which has not recorded its claim
 *    yet (or died before it): take over, claiming from it;
 * 3. the queue holds more than FEED_HIGH_WATER tokens: run the same job again
 *    in FEED_RETRY_MS (the cursor is not read meanwhile);
 * 4. enqueue up to FEED_BATCH backlog entries after `after` (up to `until`,
 *    for about FEED_TIME_BUDGET_MS at most), skipping what was acknowledged
 *    since, and stopping before an entry still being written (a new
 *    subscription's feed, see UNWRITTEN_GRACE_MS); schedule the job for the
 *    rest, due now (UNWRITTEN_RETRY_MS after a stop); then claim: the progress
 *    names that job (a conditional write, so of two copies of this job one
 *    goes on and the other's job is dropped).
 * At least once: a job that fails after enqueuing runs again, and copies
 * running at once both enqueue the part, which can deliver those entries
 * twice; the feed never forks, so the rest of the backlog is not doubled.
 */
export async function runFeedJob(ports: UseCasePorts, job: FeedJob): Promise<'dropped' | 'waiting' | 'fed'> {
  const partition = TopicName.parse(job.partition);
  const after = positionOf(job.after);
  const until = positionOf(job.until);
  const { cursorId } = job.queue;
  const current = async () => {
    const subscription = await ports.catalog.getSubscription(partition, job.subscription);
    return subscription?.cursorId === cursorId ? subscription : undefined;
  };
  const subscription = await current();
  if (!subscription) return 'dropped';
  const progress = await ports.catalog.getFeedProgress(partition, job.subscription, cursorId);
  if (progress?.jobId !== job.jobId) {
    const takeOver =
      job.previousJobId !== undefined &&
      progress?.jobId === job.previousJobId &&
      (await ports.catalog.recordFeedProgress(partition, job.subscription, cursorId, job.previousJobId, {
        jobId: job.jobId,
        after,
      }));
    if (!takeOver) return 'dropped';
  }
  try {
    if ((await ports.deliveryQueue.depth(job.queue)) > FEED_HIGH_WATER) {
      await ports.scheduler.schedule([{ ...job, dueAtMs: ports.clock.nowMs() + FEED_RETRY_MS }]);
      return 'waiting';
    }
    const result = await backfill(ports, partition, subscription, {
      after,
      until,
      limit: FEED_BATCH,
      deadlineMs: ports.clock.nowMs() + FEED_TIME_BUDGET_MS,
      ...(job.acknowledgeUnwritten ? { acknowledgeUnwritten: true } : {}),
      ...(job.awaitUnwrittenUntilMs !== undefined
        ? { awaitUnwrittenUntilMs: job.awaitUnwrittenUntilMs }
        : {}),
    });
    ports.counters?.add('backlogFed', result.enqueued);
    const next: FeedJob | undefined = result.next && {
      ...job,
      jobId: ports.ids.newId(),
      previousJobId: job.jobId,
      after: jobPosition(result.next),
      dueAtMs: ports.clock.nowMs() + (result.waiting ? UNWRITTEN_RETRY_MS : 0),
    };
    if (next) await ports.scheduler.schedule([next]);
    // When the feed is complete the progress names a job that never runs: a copy of this one stops.
    const claimed = await ports.catalog.recordFeedProgress(partition, job.subscription, cursorId, job.jobId, {
      jobId: next?.jobId ?? ports.ids.newId(),
      after: result.next ?? until,
    });
    return claimed ? 'fed' : 'dropped';
  } catch (error) {
    // Deleted meanwhile (its cursor or queue went first): nothing is owed any more.
    if (error instanceof NotFoundError && !(await current())) return 'dropped';
    throw error;
  }
}

function jobPosition(position: Position): JobPosition {
  return { ledgerId: position.ledgerId.toString(), entryId: position.entryId.toString() };
}

/** Entry id -1: before the ledger's first entry (a feed waiting for the first one). */
function positionOf(position: JobPosition): Position {
  return Position.ofStored(position.ledgerId, position.entryId);
}
