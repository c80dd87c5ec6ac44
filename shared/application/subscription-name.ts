import { ValidationError } from '../domain/errors.ts';

export type InitialPosition = 'Earliest' | 'Latest';

/** Pulsar's subscription names: non-empty, no control characters, and not too long for a key. */
const SUBSCRIPTION_NAME = /^[^\p{Cc}/]{1,256}$/u;

export function validateSubscriptionName(name: string): string {
  if (!SUBSCRIPTION_NAME.test(name)) {
    throw new ValidationError(
      `Invalid subscription name '${name}': 1 to 256 characters, no '/' or control characters`,
    );
  }
  return name;
}
