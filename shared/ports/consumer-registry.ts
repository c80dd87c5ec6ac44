import type { HashRange } from '../domain/key-shared-sticky.ts';
import type { RedeliveryBackoffJson } from '../domain/redelivery-backoff.ts';
import type { SubscriptionType } from '../domain/subscription-type.ts';

export interface DeadLetterPolicy {
  readonly maxRedeliverCount: number;
  readonly deadLetterTopic: string;
  readonly initialSubscriptionName?: string;
}

/** A consumer's redelivery settings, stored so the scheduler can apply them later. */
export interface ConsumerPolicy {
  /** 0: no ack timeout. */
  readonly ackTimeoutMs: number;
  readonly ackTimeoutRedeliveryBackoff?: RedeliveryBackoffJson;
  /** Used when no nack backoff is set (Pulsar's negativeAckRedeliveryDelay, default 60 s). */
  readonly negativeAckRedeliveryDelayMs: number;
  readonly negativeAckRedeliveryBackoff?: RedeliveryBackoffJson;
  readonly deadLetterPolicy?: DeadLetterPolicy;
}

/** One partition a consumer reads: its name, index (-1 when not partitioned) and cursor. */
export interface ConsumerPartition {
  readonly topic: string;
  readonly partitionIndex: number;
  readonly cursorId: string;
}

export interface ConsumerRecord {
  readonly consumerId: string;
  readonly consumerName: string;
  /** The role that subscribed; every later call of this consumer must come from it. */
  readonly role: string;
  readonly topic: string;
  readonly subscription: string;
  readonly subscriptionType: SubscriptionType;
  readonly partitions: readonly ConsumerPartition[];
  readonly policy: ConsumerPolicy;
  readonly createdAtMs: number;
  /** 'http' (the default): leased, gone after `leaseMs` without a call; 'lambda': durable. */
  readonly kind?: 'http' | 'lambda';
  /** How long an HTTP consumer stays alive without a call (default 60 s). */
  readonly leaseMs?: number;
  /** Lambda consumers: the function's timeout, after which what an invocation held is redelivered. */
  readonly functionTimeoutMs?: number;
  /** Whether the role that subscribed was a superuser then (dead letters are published as it). */
  readonly superuser?: boolean;
  /**
   * Key_Shared: per cursor id, the last entry dispatched before this consumer joined (Pulsar's
   * recently joined consumers), as a stored position.
   */
  readonly joinedAfter?: Readonly<Record<string, string>>;
  /**
   * Key_Shared sticky (`keySharedMode` STICKY): the hash ranges this consumer owns; no other live
   * member's overlap them. Absent: the subscription's consistent hashing (AUTO_SPLIT) places it.
   */
  readonly hashRanges?: readonly HashRange[];
}

/**
 * HTTP consumers and who may read a subscription: the owner of an Exclusive
 * or Failover subscription (a lease, renewed while the consumer polls), and
 * the live members of a Key_Shared one.
 */
export interface ConsumerRegistry {
  register(record: ConsumerRecord): Promise<void>;
  get(consumerId: string): Promise<ConsumerRecord | undefined>;
  delete(consumerId: string): Promise<void>;
  /** Marks `consumerId` alive until `untilMs` among the subscription's members. */
  heartbeat(subscriptionKey: string, consumerId: string, untilMs: number): Promise<void>;
  leave(subscriptionKey: string, consumerId: string): Promise<void>;
  /** Live members, sorted. */
  members(subscriptionKey: string, nowMs: number): Promise<string[]>;
  /** Members whose lease ended before `nowMs` (gone without closing), sorted. */
  expired(subscriptionKey: string, nowMs: number): Promise<string[]>;
  /** Every member with the end of its lease (epoch ms), sorted by id. One strong Query. */
  leases(subscriptionKey: string): Promise<{ readonly consumerId: string; readonly untilMs: number }[]>;
}

/**
 * The registry with this container's cache of consumer records in front of it
 * (CachingConsumerRegistry, built in the composition root). The ConsumerRegistry methods read and
 * write the store as they say; these two answer from what this container read lately.
 */
export interface CachedConsumerRegistry extends ConsumerRegistry {
  /** The consumer's record as this container read it lately (a `get` when it did not, or too long ago). */
  recent(consumerId: string): Promise<ConsumerRecord | undefined>;
  /** Forgets this container's copy of the record: the next `recent` reads it. */
  forget(consumerId: string): void;
}
