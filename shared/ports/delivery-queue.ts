import type { DeliveryToken } from '../domain/delivery-token.ts';

/** A token received from a subscription queue, with what it takes to delete or release it. */
export interface ReceivedToken {
  readonly token: DeliveryToken;
  readonly receipt: string;
}

export interface TokenToSend {
  readonly token: DeliveryToken;
  /** 0..maxDelaySeconds; longer waits go through the Scheduler. Ordered queues take no delay. */
  readonly delaySeconds: number;
}

/**
 * A subscription queue: one per topic partition and subscription, named by its
 * cursor. `ordered` queues (Exclusive, Failover) keep the partition's order
 * (SQS FIFO, one message group); the others are standard queues, which carry
 * per-message delays.
 */
export interface SubscriptionQueue {
  readonly cursorId: string;
  readonly ordered: boolean;
}

/**
 * The per-subscription delivery queues (one per topic partition and
 * subscription, addressed by the cursor's id). SQS is the delivery and timing
 * mechanism; it is never the record of what was acknowledged.
 */
export interface DeliveryQueue {
  /** The longest delay one send can carry (SQS: 900 s). */
  readonly maxDelaySeconds: number;
  /** Creates the queue and its dead-letter queue (idempotent). */
  create(queue: SubscriptionQueue): Promise<void>;
  delete(queue: SubscriptionQueue): Promise<void>;
  /** Sends in as few batches as the queue service allows (SQS: 10 entries, 1 MiB). */
  send(queue: SubscriptionQueue, tokens: readonly TokenToSend[]): Promise<void>;
  /**
   * Receives up to `max` tokens, hiding them for `visibilitySeconds`; waits up
   * to `waitMs` when none is ready.
   */
  receive(
    queue: SubscriptionQueue,
    max: number,
    visibilitySeconds: number,
    waitMs: number,
  ): Promise<ReceivedToken[]>;
  remove(queue: SubscriptionQueue, receipts: readonly string[]): Promise<void>;
  /** Makes a received token visible again after `seconds` (0: at once). */
  release(queue: SubscriptionQueue, receipt: string, seconds: number): Promise<void>;
  /**
   * How many tokens the queue's dead-letter queue holds (moved there after the
   * queue's maxReceiveCount receives, visible or in flight): tokens that
   * nothing delivers any more until an operator redrives them or rebuilds the
   * queue. Approximate, as SQS counts; 0 when the queue does not exist.
   * Cost: one attribute read (plus the URL lookup once per process).
   */
  deadLetterCount(queue: SubscriptionQueue): Promise<number>;
  /**
   * Rings the subscription's doorbell: a receiver waiting on it wakes, now or after
   * `delaySeconds` (at most maxDelaySeconds): a timer. A ring carries nothing; losing one delays
   * a waiting receiver by at most its poll. Cost: one SendMessage.
   */
  ring(queue: SubscriptionQueue, delaySeconds: number): Promise<void>;
  /**
   * Waits up to `waitMs` (whole seconds, at most 20) for a ring, and takes every ring that came.
   * Cost: one or two ReceiveMessage, one DeleteMessageBatch when rings came.
   * @returns whether a ring came.
   */
  waitForRing(queue: SubscriptionQueue, waitMs: number): Promise<boolean>;
  /**
   * How many tokens wait on the queue, visible or delayed (not those a consumer
   * holds in flight): what a producer of tokens checks before adding more (the
   * backlog feeder's flow control). Approximate, as SQS counts.
   * Cost: one attribute read (plus the URL lookup once per process).
   * @throws NotFoundError when the queue does not exist (its subscription was deleted).
   */
  depth(queue: SubscriptionQueue): Promise<number>;
}
