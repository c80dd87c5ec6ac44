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

export type ScheduledJob = DeliverJob | AckTimeoutJob;

/**
 * Every timing decision past what one SQS delay carries: jobs wait on the
 * scheduler's delay queue, hop by hop (at most `maxDelaySeconds` each), and
 * run when due, never early.
 */
export interface Scheduler {
  readonly maxDelaySeconds: number;
  schedule(jobs: readonly ScheduledJob[]): Promise<void>;
}
