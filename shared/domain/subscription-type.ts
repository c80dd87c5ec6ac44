import { ValidationError } from './errors.ts';
import { quote } from './quote.ts';

/** A subscription type is not one of Pulsar's (Exclusive, Failover, Shared, Key_Shared). */
export class InvalidSubscriptionTypeError extends ValidationError {}

/** Pulsar's subscription types, spelled as Pulsar spells them. Fixed when a subscription is created. */
export type SubscriptionType = 'Exclusive' | 'Failover' | 'Shared' | 'Key_Shared';

export const SUBSCRIPTION_TYPES: readonly SubscriptionType[] = [
  'Exclusive',
  'Failover',
  'Shared',
  'Key_Shared',
];

/**
 * Parses a subscription type; the spelling must be exact (`Key_Shared`, not `key_shared`).
 * @throws InvalidSubscriptionTypeError quoting the input and listing the valid types.
 */
export function parseSubscriptionType(text: string): SubscriptionType {
  const type = SUBSCRIPTION_TYPES.find((candidate) => candidate === text);
  if (type === undefined) {
    throw new InvalidSubscriptionTypeError(
      `Invalid subscription type ${quote(text)}: expected one of ${SUBSCRIPTION_TYPES.join(', ')}`,
    );
  }
  return type;
}

/**
 * True for the types that may acknowledge cumulatively (Exclusive, Failover); Pulsar refuses
 * cumulative acks on Shared and Key_Shared. ackline's admin acknowledgement of single messages
 * answers 412 for these types.
 */
export function isCumulativeAckType(type: SubscriptionType): boolean {
  return type === 'Exclusive' || type === 'Failover';
}
