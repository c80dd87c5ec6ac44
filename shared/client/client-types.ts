import type { JsonValue } from '../domain/redelivery-backoff.ts';

export type { InitialPosition as SubscriptionInitialPosition, SubscriptionType } from './admin-types.ts';

/**
 * Pulsar's `DeadLetterPolicy`: after `maxRedeliverCount` redeliveries a message goes to the dead
 * letter topic instead (default `<topic>-<subscription>-DLQ`), optionally creating
 * `initialSubscriptionName` on it so nothing published there is lost.
 *
 * @example
 * const policy: DeadLetterPolicy = { maxRedeliverCount: 5, deadLetterTopic: 'my-tenant/my-ns/orders-DLQ' };
 */
export interface DeadLetterPolicy {
  /** Redeliveries before a message is dead-lettered; an integer >= 1. */
  readonly maxRedeliverCount: number;
  readonly deadLetterTopic?: string;
  readonly initialSubscriptionName?: string;
}

/**
 * Pulsar's `KeySharedPolicy` for a Key_Shared consumer: `AUTO_SPLIT` (the default: the server places
 * the consumer by consistent hashing) or `STICKY` with the hash ranges (0..65535, inclusive) the
 * consumer owns: a message goes to the consumer whose ranges hold Murmur3_32(key) % 65536, and a
 * key no consumer's ranges hold waits. Overlapping another consumer's ranges is refused (409).
 *
 * @example
 * const policy: KeySharedPolicy = { mode: 'STICKY', hashRanges: [{ start: 0, end: 32767 }] };
 */
export interface KeySharedPolicy {
  readonly mode: 'AUTO_SPLIT' | 'STICKY';
  readonly hashRanges?: readonly { readonly start: number; readonly end: number }[];
}

/**
 * How `consumer.batchReceive()` batches: it resolves with up to `maxNumMessages` messages as soon as
 * a poll brings any, or with none after `timeoutMs`.
 *
 * @example
 * const policy: BatchReceivePolicy = { maxNumMessages: 50, timeoutMs: 500 };
 */
export interface BatchReceivePolicy {
  /** 1..100 (the most one poll brings); default 100. */
  readonly maxNumMessages?: number;
  /** How long to wait for the first message; default 100 ms, as Pulsar. */
  readonly timeoutMs?: number;
}

/** A backoff's parameters in its `{ className, params }` wire form. */
export type RedeliveryBackoffParams = { readonly [key: string]: JsonValue };
