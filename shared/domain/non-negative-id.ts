import { ValidationError } from './errors.ts';
import { quote } from './quote.ts';

/**
 * A position, message id or ledger/entry id is not a valid non-negative 64-bit id.
 * @example
 * try { MessageId.parse('1:x:-1'); } catch (error) { console.log(error instanceof InvalidPositionError); } // true
 */
export class InvalidPositionError extends ValidationError {}

/** The largest id Pulsar can hold: ledger and entry ids are Java `long`s (2^63 - 1). */
export const MAX_ID = (1n << 63n) - 1n;

const DECIMAL_DIGITS = /^[0-9]+$/;

/**
 * Parses a ledger or entry id given by a user (path segment, query parameter, JSON field).
 *
 * Accepts a string of decimal digits (every digit kept, so ids above 2^53 round-trip exactly;
 * leading zeros are accepted as Java's `Long.parseLong` does), a JS number only when it is a safe
 * non-negative integer (a larger number has already lost digits), or a bigint; the value must be in
 * 0..2^63-1. Signs, spaces, decimals, exponents and hex are rejected.
 *
 * @param what names the value in the error message, e.g. `'ledgerId'`.
 * @throws InvalidPositionError naming `what` and quoting the input.
 */
export function parseNonNegativeId(value: string | number | bigint, what: string): bigint {
  let id: bigint;
  if (typeof value === 'bigint') {
    id = value;
  } else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new InvalidPositionError(
        `Invalid ${what} ${quote(value)}: a number must be a non-negative safe integer (pass larger ids as decimal strings)`,
      );
    }
    id = BigInt(value);
  } else if (typeof value === 'string') {
    if (!DECIMAL_DIGITS.test(value)) {
      throw new InvalidPositionError(
        `Invalid ${what} ${quote(value)}: expected a non-negative decimal integer`,
      );
    }
    id = BigInt(value);
  } else {
    throw new InvalidPositionError(`Invalid ${what} ${quote(value)}: expected a string, number or bigint`);
  }
  if (id < 0n || id > MAX_ID) {
    throw new InvalidPositionError(`Invalid ${what} ${quote(value)}: must be between 0 and ${MAX_ID}`);
  }
  return id;
}
