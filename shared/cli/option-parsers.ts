import { InvalidArgumentError } from 'commander';

/**
 * Parsers for option values; commander reports their `InvalidArgumentError` as
 * `error: option '-l, --ledgerId <id>' argument 'x' is invalid. <reason>` and exits 1.
 */

const DECIMAL_DIGITS = /^\d+$/;

/** A ledger or entry id: decimal digits, kept as a string because ids may exceed 2^53. */
export function parseEntryId(value: string): string {
  if (!DECIMAL_DIGITS.test(value))
    throw new InvalidArgumentError('Expected a non-negative integer (decimal digits).');
  return value;
}

/** A count: a decimal integer of at least `minimum`. */
export function integerParser(minimum: number): (value: string) => number {
  return (value) => {
    const count = Number(value);
    if (!DECIMAL_DIGITS.test(value) || !Number.isSafeInteger(count) || count < minimum) {
      throw new InvalidArgumentError(`Expected an integer >= ${minimum}.`);
    }
    return count;
  };
}

/** A comma-separated list (`a,b`); repeating the option appends (`-s a -s b`). Empty items are refused. */
export function parseList(value: string, previous: readonly string[] | undefined): string[] {
  const items = value.split(',').map((item) => item.trim());
  if (items.some((item) => item.length === 0)) {
    throw new InvalidArgumentError('Expected a comma-separated list of non-empty names.');
  }
  return [...(previous ?? []), ...items];
}
