/** At `dueAtMs`, ring the subscription's doorbell (a timer past SQS's 900 s delay). */
export interface RingJob {
  readonly kind: 'ring';
  readonly cursorId: string;
  readonly dueAtMs: number;
}

/**
 * At `dueAtMs`, release what `consumerId` holds on the cursor (a close's second pass, once every
 * call that raced the close has ended; or the rest of a release its call did not finish), from
 * `from` (a stored position) on.
 */
export interface ReleaseJob {
  readonly kind: 'release';
  readonly cursorId: string;
  /** The topic partition (full name). */
  readonly partition: string;
  readonly consumerId: string;
  readonly from?: string;
  readonly dueAtMs: number;
}

/** At `dueAtMs`, run one step of deletion job `jobId` (see DeletionJobStore); the rest as another job. */
export interface PurgeJob {
  readonly kind: 'purge';
  readonly jobId: string;
  readonly dueAtMs: number;
}

/**
 * At `dueAtMs` (an ack timeout), dead-letter what the tracker entry names if it is still due and
 * its next delivery would pass the maxRedeliverCount of consumer `consumerId`'s dead-letter policy
 * (read from its record then): Pulsar dead-letters on its timer, not on the next receive. The
 * entry is `deliveries` hand-outs of `n` entries from `position` (a stored position).
 */
export interface DeadLetterJob {
  readonly kind: 'deadLetter';
  readonly cursorId: string;
  readonly consumerId: string;
  readonly position: string;
  readonly n: number;
  readonly deliveries: number;
  readonly dueAtMs: number;
}

/**
 * A publish's rings, off its request path (a partition with more subscriptions, times distinct
 * delivery seconds, than a publish rings itself): at `dueAtMs` (the publish), ring every
 * subscription of `partition`. A woken receiver's dispatch reads the new entries and sets the
 * timers of those delayed past now itself (as it does for any delayed entry it reads), so one
 * ring per subscription serves every delay. With more than FANOUT_CHUNK subscriptions the job
 * splits itself into `shard` jobs, each ringing the subscriptions whose cursor id hashes to its
 * index (so a list that changes between the jobs loses no subscription present throughout).
 */
export interface FanoutJob {
  readonly kind: 'fanout';
  /** The topic partition (full name). */
  readonly partition: string;
  /** The subscriptions version the publish's id allocation answered (the list is read again when newer). */
  readonly subscriptionsVersion: string;
  readonly dueAtMs: number;
  readonly shard?: { readonly index: number; readonly of: number };
}

export type ScheduledJob = RingJob | ReleaseJob | PurgeJob | DeadLetterJob | FanoutJob;

/**
 * Every timing decision past what one SQS delay carries: jobs wait on the scheduler's delay queue,
 * hop by hop (at most `maxDelaySeconds` each), and run when due, never early.
 */
export interface Scheduler {
  readonly maxDelaySeconds: number;
  schedule(jobs: readonly ScheduledJob[]): Promise<void>;
}
