import type { HashRange } from '../../domain/key-shared-sticky.ts';
import type { Position } from '../../domain/position.ts';
import type { SubscriptionType } from '../../domain/subscription-type.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { Clock } from '../../ports/clock.ts';
import type { DispatchStore } from '../../ports/dispatch-store.ts';
import type { Ledger, ManagedLedgerState, StoredEntry } from '../../ports/ledger.ts';

/** What the delivery engine works with: the cursor's state, the ledger and the server's clock. */
export interface EngineContext {
  readonly store: DispatchStore;
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly limits: EngineLimits;
  /**
   * The partition's ledgers for the dispatcher's idle path, possibly remembered for a moment (see
   * CachedLedger.recentState); default: a fresh `ledger.state` read.
   */
  readonly recentState?: (partition: TopicName) => Promise<ManagedLedgerState | undefined>;
  /**
   * Waits a random moment after the `attempt`-th lost compare-and-set of a claim, so consumers
   * racing for the same head stop colliding in step (full jitter). Default: no wait.
   */
  readonly pauseAfterConflict?: (attempt: number) => Promise<void>;
  /**
   * Each consumer's unacknowledged entries on a partition less those past their ack timeout
   * (heldAgainstCap), counted at most `maxAgeMs` ago (see consumerRoom); default: counted afresh
   * every time.
   */
  readonly unackedByConsumer?: (
    cursor: PartitionCursor,
    maxAgeMs: number,
  ) => Promise<ReadonlyMap<string, number>>;
  /** Adds `count` entries handed to `consumerId` to the count unackedByConsumer remembers, if any. */
  readonly handedTo?: (cursor: PartitionCursor, consumerId: string, count: number) => void;
}

export interface EngineLimits {
  /**
   * An id allocated but not written holds dispatch back until an entry written after it is this
   * old; then it was never a message (its publisher died) and is acknowledged. Longer than any
   * publish can take (API Gateway's 29 s, the data API function's 29 s timeout).
   */
  readonly abandonedIdMs: number;
  /** Compare-and-set attempts of one step before a call gives up for this time. */
  readonly casAttempts: number;
  /** Runs the head holds before the oldest page's runs are spilled (keeps the head near 1 KB). */
  readonly maxHeadRuns: number;
  /** Pulsar's maxUnackedMessagesPerSubscription: first deliveries pause at it (the window bounds it). */
  readonly maxUnackedPerSubscription: number;
  /** Pulsar's maxUnackedMessagesPerConsumer: dispatch to a consumer pauses at it (see consumerRoom). */
  readonly maxUnackedPerConsumer: number;
}

export const DEFAULT_ENGINE_LIMITS: EngineLimits = {
  abandonedIdMs: 60_000,
  casAttempts: 5,
  maxHeadRuns: 12,
  maxUnackedPerSubscription: 200_000,
  maxUnackedPerConsumer: 50_000,
};

/** The subscription on one partition, as the engine addresses it. */
export interface PartitionCursor {
  readonly partition: TopicName;
  readonly cursorId: string;
  readonly type: SubscriptionType;
}

/** A consumer as the dispatcher serves it. */
export interface DispatchConsumer {
  readonly consumerId: string;
  /**
   * The ack timeout of a delivery handed with `redeliveryCount` (ack timeout plus its backoff, or
   * a Lambda consumer's function timeout); 0: none.
   */
  readonly ackTimeoutMs: (redeliveryCount: number) => number;
  /** Exclusive/Failover: how long the consumer stays active without a call. */
  readonly leaseMs: number;
  /**
   * Pulsar's dead-letter policy of this consumer: a redelivery it would be handed with a
   * redeliveryCount above `maxRedeliverCount` goes to the dead-letter topic instead.
   */
  readonly deadLetter?: DeadLetterProducer;
}

/** Pulsar's dead-letter producer, as the engine calls it. */
export interface DeadLetterProducer {
  readonly maxRedeliverCount: number;
  /**
   * Publishes the entries to the dead-letter topic (as the consumer's role, with REAL_TOPIC,
   * ORIGIN_MESSAGE_ID and REAL_SUBSCRIPTION). The engine claims them before (so of the steps
   * racing for an entry one publishes) and acknowledges them after it resolves, so a crash in
   * between publishes a dead letter twice, never loses one (see deadLetterEntries).
   * @throws DeadLetterRefusedError when the role may not produce there: nothing is published.
   */
  publish(entries: readonly StoredEntry[], redeliveryCount: number): Promise<void>;
}

/**
 * A Key_Shared member. `joinedAfter` (see keySharedJoinMark): the last entry dispatched before it
 * joined; entries after it wait for this member until mark-delete reaches it.
 */
export interface KeySharedMember {
  readonly consumerId: string;
  readonly joinedAfter: Position;
  /** A sticky member's hash ranges (`keySharedMode` STICKY): it owns exactly the keys whose slot they hold. */
  readonly hashRanges?: readonly HashRange[];
}

/** One message handed to a consumer. */
export interface Delivery {
  readonly position: Position;
  readonly redeliveryCount: number;
  readonly entry: StoredEntry;
}

/** Most entries one receive hands out from one partition (a run stays within two pages). */
export const MAX_DISPATCH = 100;

/** The payload bytes of `deliveries` (what the delivered counters add). */
export function bytesOf(deliveries: readonly Delivery[]): number {
  return deliveries.reduce((sum, delivery) => sum + Buffer.byteLength(delivery.entry.payload), 0);
}
