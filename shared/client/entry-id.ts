import { AcklineAdminArgumentError } from './errors.ts';

/**
 * A ledger or entry id. Ids are Java `long`s and may exceed 2^53: pass them as decimal strings or
 * bigints; a number is accepted only when it is a safe non-negative integer (a larger one has
 * already lost digits).
 */
export type EntryIdInput = string | bigint | number;

const DECIMAL_DIGITS = /^\d+$/;

/**
 * Checks an id and returns its exact decimal digits; never goes through `Number`.
 *
 * @example
 * entryIdText('18446744073709551615', 'ledgerId'); // '18446744073709551615'
 */
export function entryIdText(id: EntryIdInput, what: string): string {
  if (typeof id === 'bigint') {
    if (id < 0n) throw new AcklineAdminArgumentError(`Invalid ${what} '${id}': it must not be negative`);
    return id.toString();
  }
  if (typeof id === 'number') {
    if (!Number.isSafeInteger(id) || id < 0) {
      throw new AcklineAdminArgumentError(
        `Invalid ${what} '${id}': a number must be a non-negative safe integer (pass larger ids as strings)`,
      );
    }
    return String(id);
  }
  if (!DECIMAL_DIGITS.test(id)) {
    throw new AcklineAdminArgumentError(`Invalid ${what} '${id}': expected decimal digits only`);
  }
  return id;
}

/** Checks a count (messages, partitions) is an integer of at least `minimum`. */
export function checkCount(count: number, what: string, minimum: number): number {
  if (!Number.isSafeInteger(count) || count < minimum) {
    throw new AcklineAdminArgumentError(`Invalid ${what} '${count}': expected an integer >= ${minimum}`);
  }
  return count;
}
