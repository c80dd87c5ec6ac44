import { PreconditionFailedError } from './errors.ts';

/**
 * Pulsar's RetentionPolicies: consumed messages are kept at least `retentionTimeInMinutes` and up
 * to `retentionSizeInMB` (-1: no limit of that kind; 0 and 0: deleted as soon as every
 * subscription consumed them).
 */
export interface RetentionPolicies {
  readonly retentionTimeInMinutes: number;
  readonly retentionSizeInMB: number;
}

/** The policies ackline keeps for a namespace or a topic (Pulsar's names). */
export interface Policies {
  readonly retention?: RetentionPolicies;
  /** Pulsar's message TTL: messages older are acknowledged (expired) on every subscription; 0: none. */
  readonly messageTTLInSeconds?: number;
  /** Pulsar's maxSubscriptionsPerTopic: how many subscriptions a topic (each partition) may have; 0: no limit. */
  readonly maxSubscriptionsPerTopic?: number;
  /** Pulsar's maxConsumersPerSubscription: how many consumers a subscription may have connected; 0: no limit. */
  readonly maxConsumersPerSubscription?: number;
  /** Pulsar's deduplication (`brokerDeduplicationEnabled` as a namespace or topic policy). */
  readonly deduplicationEnabled?: boolean;
}

/** The two subscription limits, by Pulsar's names. */
export type LimitPolicy = 'maxSubscriptionsPerTopic' | 'maxConsumersPerSubscription';

/**
 * What applies when neither the topic nor its namespace sets a limit. Pulsar's broker defaults are
 * 0 (no limit); ackline bounds both: a publish announces to and fans out over every subscription
 * of the partition (1,000 subscription items are one Query page), and a subscription's dispatch
 * and liveness read its consumers' leases (1,000 lease items are one Query page). Set 0 to lift a
 * limit, as in Pulsar.
 */
export const DEFAULT_LIMITS: { readonly [K in LimitPolicy]: number } = {
  maxSubscriptionsPerTopic: 1_000,
  maxConsumersPerSubscription: 1_000,
};

/**
 * What applies when neither the topic nor its namespace sets retention: Pulsar's broker default,
 * 0/0 (defaultRetentionTimeInMinutes, defaultRetentionSizeInMB): an entry goes once every
 * subscription acknowledged it, and at once on a topic with no subscription at all (nothing is
 * retained for nobody). A deployment sets another default (ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES
 * and ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB, the CDK context ackline:defaultRetention*; -1/-1 keeps
 * everything). Retention costs no write per entry: stored batches expire by DynamoDB's TTL and
 * retention only moves the first kept position (docs/design/storage.md#entry-expiry).
 */
export const DEFAULT_RETENTION: RetentionPolicies = { retentionTimeInMinutes: 0, retentionSizeInMB: 0 };

/** Pulsar's validation (412 with Pulsar's reasons). */
export function validateRetention(value: RetentionPolicies): void {
  const { retentionTimeInMinutes: time, retentionSizeInMB: size } = value;
  if (!Number.isSafeInteger(size) || size < -1) {
    throw new PreconditionFailedError('Invalid retention policy: size limit must be >= -1');
  }
  if (!Number.isSafeInteger(time) || time < -1) {
    throw new PreconditionFailedError('Invalid retention policy: time limit must be >= -1');
  }
  if ((time === 0) !== (size === 0)) {
    throw new PreconditionFailedError(
      'Invalid retention policy: Setting a single time or size limit to 0 is invalid when one of the limits has a non-zero value. Use the value of -1 instead of 0 to ignore a specific limit. To disable retention both limits must be set to 0.',
    );
  }
}

export function validateMessageTTL(seconds: number): void {
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new PreconditionFailedError(`Invalid value for message TTL: ${seconds} (must be an integer >= 0)`);
  }
}

/** Pulsar's validation of a limit (412): an integer, 0 (no limit) or more. */
export function validateLimit(name: LimitPolicy, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new PreconditionFailedError(`${name} must be 0 or more, got ${value}`);
  }
}

/** Whether `count` more than fill a limit (0: no limit). */
export function limitReached(limit: number, count: number): boolean {
  return limit > 0 && count >= limit;
}

/** The policies in force on a topic (every one set). */
export interface AppliedPolicies {
  readonly retention: RetentionPolicies;
  readonly messageTTLInSeconds: number;
  readonly maxSubscriptionsPerTopic: number;
  readonly maxConsumersPerSubscription: number;
  /** Off unless the topic or its namespace turns it on (Pulsar's broker default is false). */
  readonly deduplicationEnabled: boolean;
}

/**
 * The policies in force on a topic: the topic's own, else its namespace's, else the defaults
 * (`defaultRetention`: the deployment's, DEFAULT_RETENTION unless configured).
 */
export function appliedPolicies(
  topic: Policies | undefined,
  namespace: Policies | undefined,
  defaultRetention: RetentionPolicies = DEFAULT_RETENTION,
): AppliedPolicies {
  return {
    retention: topic?.retention ?? namespace?.retention ?? defaultRetention,
    messageTTLInSeconds: topic?.messageTTLInSeconds ?? namespace?.messageTTLInSeconds ?? 0,
    maxSubscriptionsPerTopic:
      topic?.maxSubscriptionsPerTopic ??
      namespace?.maxSubscriptionsPerTopic ??
      DEFAULT_LIMITS.maxSubscriptionsPerTopic,
    maxConsumersPerSubscription:
      topic?.maxConsumersPerSubscription ??
      namespace?.maxConsumersPerSubscription ??
      DEFAULT_LIMITS.maxConsumersPerSubscription,
    deduplicationEnabled: topic?.deduplicationEnabled ?? namespace?.deduplicationEnabled ?? false,
  };
}

/** Whether the policies set retention or a message TTL (what maintenance enforces). */
export function setsRetentionOrTTL(policies: Policies): boolean {
  return policies.retention !== undefined || policies.messageTTLInSeconds !== undefined;
}

/** Whether retention keeps everything (both limits -1): nothing to trim. */
export function keepsEverything(retention: RetentionPolicies): boolean {
  return retention.retentionTimeInMinutes < 0 && retention.retentionSizeInMB < 0;
}
