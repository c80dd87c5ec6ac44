import type { DeliveryToken } from '../domain/delivery-token.ts';
import type { SubscriptionQueue } from './delivery-queue.ts';

/** Deliver `token` to the subscription queue at `dueAtMs`. */
export interface DeliverJob {
  readonly kind: 'deliver';
  readonly queue: SubscriptionQueue;
  readonly token: DeliveryToken;
  readonly dueAtMs: number;
}

/** At `dueAtMs`, redeliver the delivery unless it was acknowledged or redelivered since (PIP-130). */
export interface AckTimeoutJob {
  readonly kind: 'ackTimeout';
  readonly consumerId: string;
  readonly queue: SubscriptionQueue;
  readonly receipt: string;
  readonly token: DeliveryToken;
  readonly dueAtMs: number;
}

/** A position as jobs carry it (JSON has no bigint), as tokens do. */
export interface JobPosition {
  readonly ledgerId: string;
  readonly entryId: string;
}

/**
 * At `dueAtMs`, put the next part of a subscription's backlog on its queue:
 * the entries after `after` up to `until`, a bounded number per job, then
 * schedule the job for the rest (the backlog feeder). Dropped when the
 * subscription is gone or was recreated (another cursor, so another queue),
 * or when the subscription's feed progress names another job (a copy of a
 * job that already ran, a feed started over).
 */
export interface FeedJob {
  readonly kind: 'feed';
  /** The topic partition (full name). */
  readonly partition: string;
  readonly subscription: string;
  /** The subscription's queue; its cursorId names the subscription's cursor. */
  readonly queue: SubscriptionQueue;
  /** This job, as the subscription's feed progress names the job entitled to feed next. */
  readonly jobId: string;
  /** The job that scheduled this one (none for a feed's first job). */
  readonly previousJobId?: string;
  /** The last entry already fed (entryId -1: none of that ledger yet): the job feeds what comes after it. */
  readonly after: JobPosition;
  /**
   * The last entry the feeder owes, fixed when the feed started: every later
   * entry was allocated after the subscription was announced to publishers,
   * so publish's fan-out sends its token.
   */
  readonly until: JobPosition;
  /** Entries allocated but never written are acknowledged (recovery after a crash, no publish in flight). */
  readonly acknowledgeUnwritten?: boolean;
  /**
   * A new subscription's feed: entries allocated but not yet written are waited
   * for until this time (epoch ms), then acknowledged as never written.
   */
  readonly awaitUnwrittenUntilMs?: number;
  readonly dueAtMs: number;
}

export type ScheduledJob = DeliverJob | AckTimeoutJob | FeedJob;

/**
 * Every timing decision past what one SQS delay carries: jobs wait on the
 * scheduler's delay queue, hop by hop (at most `maxDelaySeconds` each), and
 * run when due, never early.
 */
export interface Scheduler {
  readonly maxDelaySeconds: number;
  schedule(jobs: readonly ScheduledJob[]): Promise<void>;
}
