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
}

/**
 * An HTTP consumer's receive call that is waiting for messages (a long poll that found nothing
 * yet): Pulsar's flow permits of a consumer that pulls. Recorded with the lease when the call
 * starts to wait, cleared when it returns with messages; past `untilMs` the call has returned.
 */
export interface WaitingReceive {
  /** The call's `maxMessages`: how many it takes at most. */
  readonly maxMessages: number;
  /** When it started to wait (epoch ms). */
  readonly sinceMs: number;
  /** When its wait ends at the latest (epoch ms). */
  readonly untilMs: number;
}

/** A member of a subscription: the end of its lease and, while one waits, its receive call. */
export interface MemberLease {
  readonly consumerId: string;
  readonly untilMs: number;
  readonly receive?: WaitingReceive;
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
  /**
   * Marks `consumerId` alive until `untilMs` among the subscription's members. `receive`: the
   * receive call of it that waits now, or null when none does any more; absent: left as it was
   * (a renewal from a heartbeat or another call must not clear a wait under way). One write.
   */
  heartbeat(
    subscriptionKey: string,
    consumerId: string,
    untilMs: number,
    options?: { readonly receive?: WaitingReceive | null },
  ): Promise<void>;
  leave(subscriptionKey: string, consumerId: string): Promise<void>;
  /** Live members, sorted. */
  members(subscriptionKey: string, nowMs: number): Promise<string[]>;
  /** Members whose lease ended before `nowMs` (gone without closing), sorted. */
  expired(subscriptionKey: string, nowMs: number): Promise<string[]>;
  /**
   * Every member with the end of its lease (epoch ms) and its waiting receive, sorted by id. One
   * strong Query.
   */
  leases(subscriptionKey: string): Promise<MemberLease[]>;
}
