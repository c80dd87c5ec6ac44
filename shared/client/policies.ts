import { AcklineAdminArgumentError } from './errors.ts';
import type { JsonValue } from './lossless-json.ts';
import { expectNumber, expectObject } from './response-shapes.ts';

/**
 * Pulsar's RetentionPolicies, of a namespace or a topic: -1 is unlimited, 0 and 0 is no retention.
 *
 * @example
 * const keepADay: RetentionPolicies = { retentionTimeInMinutes: 24 * 60, retentionSizeInMB: -1 };
 */
export interface RetentionPolicies {
  readonly retentionTimeInMinutes: number;
  readonly retentionSizeInMB: number;
}

/** The body of a set-retention call, each figure checked (an integer >= -1). */
export function retentionBody(retention: RetentionPolicies): RetentionPolicies {
  for (const [field, value] of Object.entries(retention)) {
    if (!Number.isSafeInteger(value) || value < -1) {
      throw new AcklineAdminArgumentError(`Invalid ${field} '${value}': expected an integer >= -1`);
    }
  }
  return {
    retentionTimeInMinutes: retention.retentionTimeInMinutes,
    retentionSizeInMB: retention.retentionSizeInMB,
  };
}

/** A get-retention answer: undefined when none is set (the server answers 204). */
export function retentionAnswer(body: JsonValue | undefined): RetentionPolicies | undefined {
  if (body === undefined) return undefined;
  const retention = expectObject(body, 'retention');
  return {
    retentionTimeInMinutes: expectNumber(retention.retentionTimeInMinutes, 'retentionTimeInMinutes'),
    retentionSizeInMB: expectNumber(retention.retentionSizeInMB, 'retentionSizeInMB'),
  };
}

/** A message TTL in seconds, checked: an integer >= 0. */
export function checkedTtlSeconds(ttlInSeconds: number): number {
  if (!Number.isSafeInteger(ttlInSeconds) || ttlInSeconds < 0) {
    throw new AcklineAdminArgumentError(`Invalid message TTL '${ttlInSeconds}': expected an integer >= 0`);
  }
  return ttlInSeconds;
}

/** A get-message-TTL answer in seconds: undefined when none is set. */
export function ttlAnswer(body: JsonValue | undefined): number | undefined {
  return body === undefined ? undefined : expectNumber(body, 'message TTL');
}

/** Pulsar's two subscription limits. */
export type SubscriptionLimit = 'maxSubscriptionsPerTopic' | 'maxConsumersPerSubscription';

/** A subscription limit, checked: an integer >= 0 (0: no limit). */
export function checkedLimit(name: SubscriptionLimit, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new AcklineAdminArgumentError(`Invalid ${name} '${value}': expected an integer >= 0 (0: no limit)`);
  }
  return value;
}

/** A get answer of a subscription limit: undefined when none is set. */
export function limitAnswer(body: JsonValue | undefined, name: SubscriptionLimit): number | undefined {
  return body === undefined ? undefined : expectNumber(body, name);
}
