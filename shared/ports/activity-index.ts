import type { SubscriptionType } from '../domain/subscription-type.ts';

/** A subscription (of one topic partition) as the activity index names it. */
export interface IndexedSubscription {
  readonly cursorId: string;
  /** The topic partition (full name). */
  readonly partition: string;
  readonly subscription: string;
  readonly type: SubscriptionType;
}

/** An entry of the index: a subscription maintenance has to look at. */
export interface ActiveSubscription extends IndexedSubscription {
  /** When activity last marked it (epoch ms): removing or deferring it is conditional on this. */
  readonly markedAtMs: number;
  /**
   * Set when maintenance found only a backlog nobody consumes: it visits again then, and reports
   * the backlog's age from `backlogDueSinceMs` meanwhile.
   */
  readonly revisitAtMs?: number;
  readonly backlogDueSinceMs?: number;
}

/** A topic partition with no subscription that had publishes (retention has entries to delete). */
export interface ActivePartition {
  /** The topic partition (full name). */
  readonly partition: string;
  /** When a publish last marked it (epoch ms): removing it is conditional on this. */
  readonly markedAtMs: number;
}

/**
 * The subscriptions that had activity (a publish, a subscribe, a consumer call, an admin
 * acknowledgement) since maintenance last found them settled. Maintenance reads this instead of
 * the whole catalog, so its work per run follows what is active, not everything ever created.
 * Activity marks at most once a minute per subscription and process, so a message's cost is
 * unchanged.
 */
export interface ActivityIndex {
  /** Marks the subscription active now (creates or overwrites its entry). Cost: one write. */
  mark(subscription: IndexedSubscription, nowMs: number): Promise<void>;
  /**
   * Every entry, in cursor id order. Cost on DynamoDB: one Query per shard of the index and one
   * of its unsharded key (17), and one more per 1 MB of a shard's entries (about 150 bytes each).
   */
  list(): Promise<ActiveSubscription[]>;
  /** Removes the entry unless activity marked it again after `markedAtMs`. */
  remove(cursorId: string, markedAtMs: number): Promise<void>;
  /** Sets the entry's revisit time and backlog age, unless activity marked it again after `markedAtMs`. */
  defer(
    cursorId: string,
    markedAtMs: number,
    next: { readonly revisitAtMs: number; readonly backlogDueSinceMs?: number },
  ): Promise<void>;
  /**
   * Marks a partition that has no subscription (as the publishing process knows it) active now:
   * under a retention that deletes what nobody subscribed to (Pulsar's 0/0, when configured), maintenance
   * trims it. Cost: one write.
   */
  markPartition(partition: string, nowMs: number): Promise<void>;
  /** Every partition mark. Cost on DynamoDB: one Query per shard of the partition marks (4). */
  listPartitions(): Promise<ActivePartition[]>;
  /** Removes the partition's mark unless a publish marked it again after `markedAtMs`. */
  removePartition(partition: string, markedAtMs: number): Promise<void>;
  /** Whether every subscription that existed before the index was entered once (a one-time seeding). */
  seeded(): Promise<boolean>;
  markSeeded(): Promise<void>;
}
