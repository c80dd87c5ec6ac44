/**
 * A subscription queue: one per topic partition and subscription, named by its cursor. The
 * delivery engine uses standard queues only (`ordered` false: doorbells keep no order); an
 * `ordered` one would be SQS FIFO.
 */
export interface SubscriptionQueue {
  readonly cursorId: string;
  readonly ordered: boolean;
}

/**
 * The per-subscription doorbell queues (one per topic partition and subscription, addressed by
 * the cursor's id): they wake receivers and realise timers, and carry nothing else; the cursor is
 * the record of what was delivered and acknowledged.
 */
export interface DeliveryQueue {
  /** The longest delay one ring can carry (SQS: 900 s). */
  readonly maxDelaySeconds: number;
  /** Creates the queue and its dead-letter queue (idempotent). */
  create(queue: SubscriptionQueue): Promise<void>;
  delete(queue: SubscriptionQueue): Promise<void>;
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
   * Only a wait of a second or more can show that nothing rang: under a second it is SQS short
   * polls, which sample some of SQS's servers and may miss a ring that is there.
   * Cost: one or two ReceiveMessage, one DeleteMessageBatch when rings came.
   * @returns whether a ring came.
   */
  waitForRing(queue: SubscriptionQueue, waitMs: number): Promise<boolean>;
  /**
   * Takes and deletes rings already there, without waiting (a receive that woke on a ring and
   * found the subscription caught up: the rings left are stale, and each would end a long poll at
   * once). Takes what short polls find, so it never shows that no ring is left.
   * Cost: one ReceiveMessage, plus one ReceiveMessage and one DeleteMessageBatch per 10 rings
   * taken (at most 100 rings a call).
   * @returns how many rings it took.
   */
  drainRings(queue: SubscriptionQueue): Promise<number>;
}
