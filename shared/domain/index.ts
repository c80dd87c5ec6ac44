// The public API of the pure domain: names, positions, backoff, ack ranges, the cursor, errors.
export { AckRange } from './ack-range.ts';
export { AckRangeSet } from './ack-range-set.ts';
export {
  AckTimeoutPolicy,
  ackTimeoutRedeliveryDelayMs,
  MIN_ACK_TIMEOUT_MS,
  validateAckTimeoutMs,
} from './ack-timeout.ts';
export * from './catalog-errors.ts';
export { Cursor, type CursorInit } from './cursor.ts';
export * from './errors.ts';
export { LedgerIndex, type LedgerInfo, type LedgerLayout } from './ledger-layout.ts';
export { MessageId } from './message-id.ts';
export { javaStringHash, partitionForKey, RoundRobinRouter, signSafeMod } from './message-router.ts';
export { MAX_ID, parseNonNegativeId } from './non-negative-id.ts';
export { Position } from './position.ts';
export {
  DEFAULT_FIXED_DELAY_MS,
  DEFAULT_MAX_DELAY_MS,
  DEFAULT_MIN_DELAY_MS,
  DEFAULT_MULTIPLIER,
  FIXED_REDELIVERY_BACKOFF,
  FixedRedeliveryBackoff,
  FixedRedeliveryBackoffBuilder,
  type JsonValue,
  MULTIPLIER_REDELIVERY_BACKOFF,
  MultiplierRedeliveryBackoff,
  MultiplierRedeliveryBackoffBuilder,
  type RedeliveryBackoff,
  type RedeliveryBackoffJson,
} from './redelivery-backoff.ts';
export { type RedeliveryBackoffFactory, RedeliveryBackoffRegistry } from './redelivery-backoff-registry.ts';
export {
  isCumulativeAckType,
  parseSubscriptionType,
  SUBSCRIPTION_TYPES,
  type SubscriptionType,
} from './subscription-type.ts';
export { type TopicDomain, TopicName } from './topic-name.ts';
