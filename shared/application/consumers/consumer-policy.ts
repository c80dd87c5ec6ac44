import { validateAckTimeoutMs } from '../../domain/ack-timeout.ts';
import { ValidationError } from '../../domain/errors.ts';
import { delayWithJitter, type RedeliveryBackoff } from '../../domain/redelivery-backoff.ts';
import type { RedeliveryBackoffRegistry } from '../../domain/redelivery-backoff-registry.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { ConsumerPolicy, DeadLetterPolicy } from '../../ports/consumer-registry.ts';

/** Pulsar's default `negativeAckRedeliveryDelay`: one minute. */
export const DEFAULT_NEGATIVE_ACK_DELAY_MS = 60_000;

/** A backoff as the consumer API takes it: the Multiplier shorthand or a class name with params. */
export type BackoffInput =
  | {
      readonly minDelayMs?: number;
      readonly maxDelayMs?: number;
      readonly multiplier?: number;
      /** 0 to 1: a random share of each delay added to it (never early). */
      readonly jitter?: number;
    }
  | { readonly className: string; readonly params?: unknown };

export interface ConsumerPolicyInput {
  readonly ackTimeoutMs?: number;
  readonly ackTimeoutRedeliveryBackoff?: BackoffInput;
  readonly negativeAckRedeliveryDelayMs?: number;
  readonly negativeAckRedeliveryBackoff?: BackoffInput;
  readonly deadLetterPolicy?: {
    readonly maxRedeliverCount: number;
    readonly deadLetterTopic?: string;
    readonly initialSubscriptionName?: string;
  };
}

function toBackoff(
  registry: RedeliveryBackoffRegistry,
  input: BackoffInput,
  what: string,
): RedeliveryBackoff {
  try {
    if ('className' in input) return registry.create(input.className, input.params ?? {});
    return registry.create('MultiplierRedeliveryBackoff', input);
  } catch (error) {
    if (error instanceof ValidationError)
      throw new ValidationError(`${what}: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * Validates a consumer's redelivery settings and turns them into the stored
 * policy (every backoff in its JSON form, so the scheduler can rebuild it).
 * Refuses, as PIP-106 does, a fixed nack delay together with a nack backoff.
 */
export function buildConsumerPolicy(
  registry: RedeliveryBackoffRegistry,
  topic: TopicName,
  subscription: string,
  input: ConsumerPolicyInput,
): ConsumerPolicy {
  const ackTimeoutMs = validateAckTimeoutMs(input.ackTimeoutMs ?? 0);
  if (input.negativeAckRedeliveryDelayMs !== undefined && input.negativeAckRedeliveryBackoff !== undefined) {
    throw new ValidationError(
      'negativeAckRedeliveryDelayMs and negativeAckRedeliveryBackoff cannot be used together (PIP-106): set one',
    );
  }
  const nackDelay = input.negativeAckRedeliveryDelayMs ?? DEFAULT_NEGATIVE_ACK_DELAY_MS;
  if (!Number.isSafeInteger(nackDelay) || nackDelay < 0) {
    throw new ValidationError(`negativeAckRedeliveryDelayMs must be an integer >= 0, got ${nackDelay}`);
  }
  const policy: { -readonly [K in keyof ConsumerPolicy]: ConsumerPolicy[K] } = {
    ackTimeoutMs,
    negativeAckRedeliveryDelayMs: nackDelay,
  };
  if (input.ackTimeoutRedeliveryBackoff !== undefined) {
    if (ackTimeoutMs === 0) {
      throw new ValidationError('ackTimeoutRedeliveryBackoff needs an ackTimeoutMs (>= 1000)');
    }
    policy.ackTimeoutRedeliveryBackoff = toBackoff(
      registry,
      input.ackTimeoutRedeliveryBackoff,
      'ackTimeoutRedeliveryBackoff',
    ).toJSON();
  }
  if (input.negativeAckRedeliveryBackoff !== undefined) {
    policy.negativeAckRedeliveryBackoff = toBackoff(
      registry,
      input.negativeAckRedeliveryBackoff,
      'negativeAckRedeliveryBackoff',
    ).toJSON();
  }
  if (input.deadLetterPolicy !== undefined) {
    const { maxRedeliverCount, deadLetterTopic, initialSubscriptionName } = input.deadLetterPolicy;
    if (!Number.isSafeInteger(maxRedeliverCount) || maxRedeliverCount <= 0) {
      throw new ValidationError(
        `deadLetterPolicy.maxRedeliverCount must be an integer > 0, got ${maxRedeliverCount}`,
      );
    }
    // Pulsar's default dead-letter topic: {topic}-{subscription}-DLQ.
    const target = TopicName.parse(
      deadLetterTopic ?? `${topic.partitionedTopicName.toString()}-${subscription}-DLQ`,
    );
    if (!target.isPersistent)
      throw new ValidationError('deadLetterPolicy.deadLetterTopic must be persistent');
    const deadLetter: { -readonly [K in keyof DeadLetterPolicy]: DeadLetterPolicy[K] } = {
      maxRedeliverCount,
      deadLetterTopic: target.toString(),
    };
    if (initialSubscriptionName !== undefined) deadLetter.initialSubscriptionName = initialSubscriptionName;
    policy.deadLetterPolicy = deadLetter;
  }
  return policy;
}

/** How long after a nack the message comes back (PIP-106): the backoff, else the fixed delay. */
export function negativeAckDelayMs(
  registry: RedeliveryBackoffRegistry,
  policy: ConsumerPolicy,
  count: number,
  random: () => number = Math.random,
): number {
  return policy.negativeAckRedeliveryBackoff
    ? delayWithJitter(registry.fromJson(policy.negativeAckRedeliveryBackoff), count, random())
    : policy.negativeAckRedeliveryDelayMs;
}

/** How long an unacknowledged delivery waits before it is redelivered (PIP-130); 0 when disabled. */
export function ackTimeoutDelayMs(
  registry: RedeliveryBackoffRegistry,
  policy: ConsumerPolicy,
  count: number,
  random: () => number = Math.random,
): number {
  if (policy.ackTimeoutMs === 0) return 0;
  const backoff = policy.ackTimeoutRedeliveryBackoff
    ? registry.fromJson(policy.ackTimeoutRedeliveryBackoff)
    : undefined;
  return policy.ackTimeoutMs + (backoff ? delayWithJitter(backoff, count, random()) : 0);
}
