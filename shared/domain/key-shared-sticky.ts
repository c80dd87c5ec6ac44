import { ConflictError, ValidationError } from './errors.ts';
import { murmur3Hash31 } from './murmur3.ts';

/**
 * The hash range of Key_Shared sticky consumers: slots 0..65535, as Pulsar's
 * HashRangeExclusiveStickyKeyConsumerSelector (`DEFAULT_RANGE_SIZE` 2^16).
 */
export const STICKY_RANGE_SIZE = 65_536;

/** A consumer's slots, `start` to `end` inclusive (Pulsar's `IntRange` of `KeySharedMeta.hashRanges`). */
export interface HashRange {
  readonly start: number;
  readonly end: number;
}

/** Pulsar's `ConsumerAssignException` (its ranges overlap another consumer's), answered 409 as ConsumerBusy. */
export class HashRangeConflictError extends ConflictError {}

/**
 * The slot of a key: its 31-bit Murmur3 hash modulo STICKY_RANGE_SIZE, as Pulsar's sticky selector
 * computes `makeStickyKeyHash(key) % rangeSize`. Pure.
 */
export function stickySlot(key: string): number {
  return murmur3Hash31(key) % STICKY_RANGE_SIZE;
}

/** Whether `ranges` hold `slot`. */
export function rangesHold(ranges: readonly HashRange[], slot: number): boolean {
  return ranges.some((range) => range.start <= slot && slot <= range.end);
}

/**
 * Checks one consumer's ranges as Pulsar's `validateKeySharedMeta` does: at least one, each within
 * 0..65535 with start <= end, none overlapping another of the same consumer.
 * @throws ValidationError naming the range.
 */
export function validateHashRanges(ranges: readonly HashRange[]): void {
  if (ranges.length === 0) throw new ValidationError('Ranges for KeyShared policy must not be empty');
  ranges.forEach((range, index) => {
    if (
      !Number.isInteger(range.start) ||
      !Number.isInteger(range.end) ||
      range.start < 0 ||
      range.end >= STICKY_RANGE_SIZE ||
      range.start > range.end
    ) {
      throw new ValidationError(
        `Fixed hash range start > end or out of 0..${STICKY_RANGE_SIZE - 1}: [${range.start}, ${range.end}]`,
      );
    }
    const overlapping = ranges.findIndex((other, j) => j !== index && overlaps(range, other));
    if (overlapping !== -1) {
      throw new ValidationError(
        // Stryker disable next-line OptionalChaining: message text only
        `Ranges of one consumer overlap: [${range.start}, ${range.end}] and [${ranges[overlapping]?.start}, ${ranges[overlapping]?.end}]`,
      );
    }
  });
}

/** The first range of `ranges` that overlaps one of `others`, with it; undefined when none does. */
export function firstOverlap(
  ranges: readonly HashRange[],
  others: readonly HashRange[],
): readonly [HashRange, HashRange] | undefined {
  for (const range of ranges) {
    const other = others.find((candidate) => overlaps(range, candidate));
    if (other) return [range, other];
  }
  return undefined;
}

function overlaps(a: HashRange, b: HashRange): boolean {
  return a.start <= b.end && b.start <= a.end;
}
