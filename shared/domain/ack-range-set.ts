import { AckRange, rangeBound } from './ack-range.ts';
import type { Position } from './position.ts';

/** One stored range: entries `(lower, upper]` of `ledgerId`. Mutable inside the set only. */
interface RangeRecord {
  readonly ledgerId: bigint;
  lower: bigint;
  upper: bigint;
}

/** Below this many dead slots the array is not compacted: compaction is linear. */
const COMPACTION_THRESHOLD = 1024;

/**
 * The individually acknowledged entries after a cursor's mark-delete position, as Pulsar's
 * `LongPairRangeSet`: sorted, disjoint ranges `(lower..upper]`, so adjacent acknowledgements merge
 * (acking 3:5, then 3:6, leaves the one range `(3:4..3:6]`).
 *
 * Ranges are ledger-local: entry ids count per ledger, so only `L:E` and `L:E+1` are known to be
 * adjacent here; whether the last entry of one ledger touches the first of the next depends on the
 * ledgers of the topic, which the cursor knows. (Pulsar's range sets are ledger-local too.)
 *
 * Cost: a sorted array searched by bisection. `contains` is O(log n) in the number of ranges n;
 * `add` is O(log n) when it extends a range or appends after the last one (acks mostly arrive in
 * order), O(n) in the worst case (an insertion or merge in the middle shifts the array);
 * `removeAtMost` is amortized O(log n + k) for k removed ranges (the front is dropped lazily).
 * `cardinality` is kept as a running count (exact up to 2^53 entries). Memory is linear in n.
 * Not thread-safe; not persisted by itself.
 */
export class AckRangeSet {
  private records: RangeRecord[] = [];
  /** Index of the first live record; the ones before it were removed. */
  private head = 0;
  private entryCount = 0;

  /** A set holding the given positions and ranges. */
  static of(items: Iterable<Position | AckRange>): AckRangeSet {
    const set = new AckRangeSet();
    for (const item of items) {
      set.add(item);
    }
    return set;
  }

  /**
   * Adds one acknowledged position, or a range, merging with the ranges it overlaps or touches.
   * @returns false when everything was already in the set.
   * @throws InvalidPositionError for `L:-1` (names no entry).
   */
  add(item: Position | AckRange): boolean {
    if (item instanceof AckRange) {
      return this.addRecord(item.ledgerId, item.lowerExclusive.entryId, item.upperInclusive.entryId);
    }
    if (item.isBeforeFirst) {
      AckRange.of(item); // throws the error naming the position
    }
    return this.addRecord(item.ledgerId, item.entryId - 1n, item.entryId);
  }

  /** True when `position` is in one of the ranges. O(log n). */
  contains(position: Position): boolean {
    const i = this.firstEndingAtOrAfter(position.ledgerId, position.entryId);
    const record = this.records[i];
    return (
      i < this.records.length &&
      record !== undefined &&
      record.ledgerId === position.ledgerId &&
      record.lower < position.entryId
    );
  }

  /**
   * Removes every position at or before `position` (ranges crossing it are cut), as the cursor
   * does when its mark-delete position moves.
   */
  removeAtMost(position: Position): void {
    const { ledgerId, entryId } = position;
    let i = this.head;
    for (; i < this.records.length; i++) {
      const record = this.records[i]!;
      if (record.ledgerId > ledgerId || (record.ledgerId === ledgerId && record.upper > entryId)) {
        break;
      }
      this.entryCount -= Number(record.upper - record.lower);
    }
    this.head = i;
    const first = this.records[i];
    if (first !== undefined && first.ledgerId === ledgerId && first.lower < entryId) {
      this.entryCount -= Number(entryId - first.lower);
      first.lower = entryId;
    }
    this.compact();
  }

  /** The lowest range, or undefined when the set is empty. */
  firstRange(): AckRange | undefined {
    const record = this.records[this.head];
    return record === undefined ? undefined : toRange(record);
  }

  /** The highest range, or undefined when the set is empty. */
  lastRange(): AckRange | undefined {
    const record = this.size() === 0 ? undefined : this.records[this.records.length - 1];
    return record === undefined ? undefined : toRange(record);
  }

  /** The number of ranges (Pulsar's `size()`), not of positions. */
  size(): number {
    return this.records.length - this.head;
  }

  isEmpty(): boolean {
    return this.size() === 0;
  }

  /** The number of acknowledged positions held. O(1). */
  cardinality(): number {
    return this.entryCount;
  }

  /** Visits the ranges in order. */
  forEach(action: (range: AckRange) => void): void {
    this.forEachWhile((range) => {
      action(range);
      return true;
    });
  }

  /** Visits the ranges in order while `action` returns true (Pulsar's `RangeProcessor`). */
  forEachWhile(action: (range: AckRange) => boolean): void {
    for (let i = this.head; i < this.records.length; i++) {
      if (!action(toRange(this.records[i]!))) {
        return;
      }
    }
  }

  /** The ranges in order. Linear. */
  ranges(): AckRange[] {
    const result: AckRange[] = [];
    for (let i = this.head; i < this.records.length; i++) {
      result.push(toRange(this.records[i]!));
    }
    return result;
  }

  /** An independent copy. Linear. */
  clone(): AckRangeSet {
    const copy = new AckRangeSet();
    copy.records = this.records.slice(this.head).map((record) => ({ ...record }));
    copy.entryCount = this.entryCount;
    return copy;
  }

  /** Pulsar's rendering of `individualDeletedMessages`: `[(3:4..3:7],(3:9..3:10]]`, `[]` when empty. */
  toString(): string {
    const parts: string[] = [];
    for (let i = this.head; i < this.records.length; i++) {
      parts.push(toRange(this.records[i]!).toString());
    }
    return `[${parts.join(',')}]`;
  }

  /** Adds entries `(lower, upper]` of `ledgerId`; the caller checked lower < upper. */
  private addRecord(ledgerId: bigint, lower: bigint, upper: bigint): boolean {
    // Ranges before `start` end before `lower`: neither overlapping nor adjacent.
    const start = this.firstEndingAtOrAfter(ledgerId, lower);
    let end = start;
    let mergedLower = lower;
    let mergedUpper = upper;
    let mergedCount = 0n;
    for (; end < this.records.length; end++) {
      const record = this.records[end]!;
      if (record.ledgerId !== ledgerId || record.lower > upper) {
        break;
      }
      if (record.lower < mergedLower) {
        mergedLower = record.lower;
      }
      if (record.upper > mergedUpper) {
        mergedUpper = record.upper;
      }
      mergedCount += record.upper - record.lower;
    }
    const added = Number(mergedUpper - mergedLower - mergedCount);
    if (added === 0) {
      return false;
    }
    this.entryCount += added;
    if (end === start) {
      const record = { ledgerId, lower: mergedLower, upper: mergedUpper };
      if (start === this.records.length) {
        this.records.push(record);
      } else {
        this.records.splice(start, 0, record);
      }
      return true;
    }
    const first = this.records[start]!;
    first.lower = mergedLower;
    first.upper = mergedUpper;
    if (end - start > 1) {
      this.records.splice(start + 1, end - start - 1);
    }
    return true;
  }

  /** Index of the first live range of ledger > `ledgerId`, or of `ledgerId` with upper >= `entryId`. */
  private firstEndingAtOrAfter(ledgerId: bigint, entryId: bigint): number {
    let low = this.head;
    let high = this.records.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const record = this.records[mid]!;
      if (record.ledgerId < ledgerId || (record.ledgerId === ledgerId && record.upper < entryId)) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    return low;
  }

  private compact(): void {
    if (this.head === this.records.length) {
      this.records = [];
      this.head = 0;
    } else if (this.head > COMPACTION_THRESHOLD && this.head * 2 > this.records.length) {
      this.records = this.records.slice(this.head);
      this.head = 0;
    }
  }
}

function toRange(record: RangeRecord): AckRange {
  return new AckRange(rangeBound(record.ledgerId, record.lower), rangeBound(record.ledgerId, record.upper));
}
