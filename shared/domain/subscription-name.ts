import { ValidationError } from './errors.ts';
import {
  isWellFormed,
  MAX_SUBSCRIPTION_NAME_BYTES,
  MAX_SUBSCRIPTION_NAME_CHARS,
  utf8Bytes,
} from './name-limits.ts';
import { quote } from './quote.ts';

export type InitialPosition = 'Earliest' | 'Latest';

/** Control characters and '/' (a path separator in every REST route that names a subscription). */
const FORBIDDEN = /[\p{Cc}/]/u;

/**
 * A subscription name as ackline stores it: 1 to 256 characters and at most 512 UTF-8 bytes (see
 * name-limits.ts for why), no control characters, no '/', no lone surrogate.
 * @throws ValidationError (400) whose message says which rule the name breaks and why.
 */
export function validateSubscriptionName(name: string): string {
  const refuse = (why: string) => new ValidationError(`Invalid subscription name ${quote(name)}: ${why}`);
  if (typeof name !== 'string' || name.length === 0) throw refuse('it is empty');
  if (FORBIDDEN.test(name)) throw refuse("it contains '/' or a control character");
  if (!isWellFormed(name)) throw refuse('it contains a lone surrogate (not valid Unicode)');
  const chars = [...name].length;
  if (chars > MAX_SUBSCRIPTION_NAME_CHARS) {
    throw refuse(`${chars} characters, at most ${MAX_SUBSCRIPTION_NAME_CHARS} are allowed`);
  }
  const bytes = utf8Bytes(name);
  if (bytes > MAX_SUBSCRIPTION_NAME_BYTES) {
    throw refuse(
      `${bytes} bytes in UTF-8, at most ${MAX_SUBSCRIPTION_NAME_BYTES} are allowed (with the topic, it is part of a DynamoDB key of at most 2,048 bytes)`,
    );
  }
  return name;
}
