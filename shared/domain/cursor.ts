import type { AckRange } from './ack-range.ts';
import { AckRangeSet } from './ack-range-set.ts';
import { ValidationError } from './errors.ts';
import { LedgerIndex, type LedgerLayout, PositionNotFoundError } from './ledger-layout.ts';
import { InvalidPositionError } from './non-negative-id.ts';
import { Position } from './position.ts';
import { quote } from './quote.ts';

/** What a cursor is built from: the stored state plus the partition's current ledgers. */
export interface CursorInit {
  readonly layout: LedgerLayout;
  /** Everything at or before it is acknowledged. `L:-1` means "before the first entry of L". */
  readonly markDeletePosition: Position;
  /** Individually acknowledged entries or ranges; those at or before the mark-delete are ignored. */
  readonly acknowledged?: AckRangeSet | Iterable<Position | AckRange>;
}

/**
 * A subscription's position in a topic partition, as Pulsar's `ManagedCursor`: the mark-delete
 * position (everything at or before it is acknowledged) plus the individually acknowledged ranges
 * after it (`individualDeletedMessages`). When the first acknowledged range touches the
 * mark-delete position, the mark-delete position moves to its end, across ledger boundaries and
 * over empty ledgers.
 *
 * Pure and in memory: not persisted (the application stores the mark-delete position and the
 * acknowledged positions), not thread-safe. Costs are those of {@link AckRangeSet} plus O(log L)
 * for L ledgers; `backlog()` is O(log L).
 *
 * @example
 * const cursor = Cursor.atEarliest([{ ledgerId: 3n, entries: 10n }]);
 * cursor.acknowledge(Position.of(3n, 1n));
 * cursor.individuallyDeletedMessages(); // '[(3:0..3:1]]'
 * cursor.acknowledge(Position.of(3n, 0n));
 * cursor.markDeletePosition.toString(); // '3:1'
 */
export class Cursor {
  private readonly ledgers: LedgerIndex;
  private markDeleted: Position;
  private readonly acked: AckRangeSet;

  /**
   * @throws InvalidLedgerLayoutError for a malformed layout.
   * @throws PositionNotFoundError when the mark-delete position is neither a written entry, nor
   * `L:-1` of a ledger, nor in a ledger absent from the layout (trimmed, or between two ledgers) and
   * before the last entry; or when an acknowledged position after it names no written entry.
   */
  constructor(init: CursorInit) {
    this.ledgers = new LedgerIndex(init.layout);
    const markDelete = init.markDeletePosition;
    if (!this.isStoredMarkDeleteValid(markDelete)) {
      throw new PositionNotFoundError(
        `Mark-delete position ${quote(markDelete)} names no entry of the topic partition`,
      );
    }
    this.markDeleted = markDelete;
    const acknowledged = init.acknowledged ?? [];
    this.acked = acknowledged instanceof AckRangeSet ? acknowledged.clone() : AckRangeSet.of(acknowledged);
    this.acked.removeAtMost(markDelete);
    this.acked.forEach((range) => {
      if (!this.ledgers.hasEntry(range.upperInclusive)) {
        throw new PositionNotFoundError(
          `Acknowledged range ${quote(range)} names entries that were never written to the topic partition`,
        );
      }
    });
    this.advanceMarkDelete();
  }

  /** A new subscription at Earliest: nothing acknowledged, mark-delete `firstLedger:-1`. */
  static atEarliest(layout: LedgerLayout): Cursor {
    const ledgers = new LedgerIndex(layout);
    return new Cursor({ layout, markDeletePosition: Position.beforeFirst(ledgers.firstLedgerId) });
  }

  /** A new subscription at Latest: everything written so far counts as acknowledged. */
  static atLatest(layout: LedgerLayout): Cursor {
    const ledgers = new LedgerIndex(layout);
    return new Cursor({
      layout,
      markDeletePosition: ledgers.lastEntry() ?? Position.beforeFirst(ledgers.lastLedgerId),
    });
  }

  /** The same acknowledgement state over a newer layout of the same partition (more entries, ledgers). */
  withLayout(layout: LedgerLayout): Cursor {
    return new Cursor({ layout, markDeletePosition: this.markDeleted, acknowledged: this.acked });
  }

  /** Everything at or before it is acknowledged. */
  get markDeletePosition(): Position {
    return this.markDeleted;
  }

  /** The next entry to read after the mark-delete position; past the end, where the next write goes. */
  get readPosition(): Position {
    return (
      this.ledgers.positionAt(this.ledgers.ordinal(this.markDeleted) + 1n) ?? this.ledgers.nextWritePosition()
    );
  }

  /**
   * Acknowledges one entry individually. Idempotent: at or before the mark-delete position, or
   * already acknowledged, it changes nothing.
   * @returns true when the entry was not acknowledged before.
   * @throws PositionNotFoundError when `position` names no written entry.
   */
  acknowledge(position: Position): boolean {
    if (position.isBeforeFirst) {
      throw new InvalidPositionError(`Cannot acknowledge ${quote(position)}: it names no entry`);
    }
    if (position.compareTo(this.markDeleted) <= 0) {
      return false;
    }
    if (!this.ledgers.hasEntry(position)) {
      throw new PositionNotFoundError(
        `Cannot acknowledge ${quote(position)}: no such entry in the topic partition`,
      );
    }
    if (!this.acked.add(position)) {
      return false;
    }
    this.advanceMarkDelete();
    return true;
  }

  /**
   * Acknowledges cumulatively: everything at or before `position`. Never moves backwards: an
   * earlier position changes nothing. `position` may be `L:-1` for a ledger of the layout.
   * @returns true when the mark-delete position moved.
   * @throws PositionNotFoundError when `position` is neither a written entry nor `L:-1` of a ledger.
   */
  markDelete(position: Position): boolean {
    if (position.compareTo(this.markDeleted) <= 0) {
      return false;
    }
    if (!this.isMarkDeleteTarget(position)) {
      throw new PositionNotFoundError(
        `Cannot mark-delete up to ${quote(position)}: no such entry in the topic partition`,
      );
    }
    this.markDeleted = position;
    this.acked.removeAtMost(position);
    this.advanceMarkDelete();
    return true;
  }

  /** True when `position` is at or before the mark-delete position or individually acknowledged. */
  isAcknowledged(position: Position): boolean {
    return position.compareTo(this.markDeleted) <= 0 || this.acked.contains(position);
  }

  /**
   * How many written entries after the mark-delete position are not acknowledged. O(log ledgers).
   * A number: exact up to 2^53 entries, far above what one partition holds.
   */
  backlog(): number {
    return (
      Number(this.ledgers.totalEntries - this.ledgers.ordinal(this.markDeleted)) - this.acked.cardinality()
    );
  }

  /**
   * The `n`th unacknowledged entry after the mark-delete position, 1-based (Pulsar's peek
   * `messagePosition`), or undefined when the backlog is shorter. Linear in the number of ranges.
   * @throws ValidationError when `n` is not a positive integer.
   */
  nthBacklogPosition(n: number): Position | undefined {
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new ValidationError(`Invalid backlog position ${quote(n)}: expected an integer >= 1`);
    }
    let remaining = BigInt(n);
    let ordinal = this.ledgers.ordinal(this.markDeleted);
    let found: Position | undefined;
    this.acked.forEachWhile((range) => {
      const gap = this.ledgers.ordinal(range.lowerExclusive) - ordinal;
      if (remaining <= gap) {
        found = this.ledgers.positionAt(ordinal + remaining);
        return false;
      }
      remaining -= gap;
      ordinal = this.ledgers.ordinal(range.upperInclusive);
      return true;
    });
    return found ?? this.ledgers.positionAt(ordinal + remaining);
  }

  /**
   * The first `count` unacknowledged entries after the mark-delete position, in order (fewer when
   * the backlog is shorter), as Pulsar's skip walks them. Linear in `count` plus the ranges passed.
   * @throws ValidationError when `count` is not a non-negative integer.
   */
  firstBacklogPositions(count: number): Position[] {
    return this.backlogPositionsAfter(this.markDeleted, count);
  }

  /**
   * The first `count` unacknowledged entries strictly after `after` (and after the mark-delete
   * position), in order; fewer when the backlog ends sooner. `after` may be any position: `L:-1`,
   * an acknowledged entry, one in a ledger absent from the layout (the walk resumes at the next
   * entry the layout holds). This is how a backlog is read in bounded steps (the queue feeder).
   * Linear in `count` plus the acknowledged ranges up to the last position returned (those before
   * `after` included).
   * @throws ValidationError when `count` is not a non-negative integer.
   */
  backlogPositionsAfter(after: Position, count: number): Position[] {
    if (!Number.isSafeInteger(count) || count < 0) {
      throw new ValidationError(`Invalid number of messages ${quote(count)}: expected an integer >= 0`);
    }
    const positions: Position[] = [];
    const markDeleted = this.ledgers.ordinal(this.markDeleted);
    const start = this.ledgers.ordinal(after);
    let ordinal = start > markDeleted ? start : markDeleted;
    const take = (untilOrdinal: bigint): void => {
      while (positions.length < count && ordinal < untilOrdinal) {
        ordinal += 1n;
        positions.push(this.ledgers.positionAt(ordinal)!);
      }
    };
    this.acked.forEachWhile((range) => {
      take(this.ledgers.ordinal(range.lowerExclusive));
      if (positions.length === count) {
        return false;
      }
      // A range may end before `after`: the walk never moves back.
      const upper = this.ledgers.ordinal(range.upperInclusive);
      if (upper > ordinal) ordinal = upper;
      return true;
    });
    take(this.ledgers.totalEntries);
    return positions;
  }

  /** The acknowledged ranges after the mark-delete position, in order (for persistence and stats). */
  acknowledgedRanges(): AckRange[] {
    return this.acked.ranges();
  }

  /** Pulsar's internal-stats rendering, e.g. `[(3:4..3:7],(3:9..3:10]]`; `[]` when there are none. */
  individuallyDeletedMessages(): string {
    return this.acked.toString();
  }

  /** Moves the mark-delete position over every acknowledged range that touches it. */
  private advanceMarkDelete(): void {
    for (;;) {
      const first = this.acked.firstRange();
      if (first === undefined) {
        return;
      }
      // Touching: no written entry lies between the mark-delete position and the range. The
      // ordinals see through ledger boundaries and empty ledgers.
      if (this.ledgers.ordinal(first.lowerExclusive) > this.ledgers.ordinal(this.markDeleted)) {
        return;
      }
      this.markDeleted = first.upperInclusive;
      this.acked.removeAtMost(first.upperInclusive);
    }
  }

  /** A written entry, or `L:-1` of a ledger of the layout. */
  private isMarkDeleteTarget(position: Position): boolean {
    return position.isBeforeFirst
      ? this.ledgers.hasLedger(position.ledgerId)
      : this.ledgers.hasEntry(position);
  }

  /**
   * A stored mark-delete may also sit in a ledger that is no longer in the layout: one trimmed
   * away since, or one between two ledgers of the layout.
   */
  private isStoredMarkDeleteValid(position: Position): boolean {
    if (this.ledgers.hasLedger(position.ledgerId)) {
      return this.isMarkDeleteTarget(position);
    }
    if (position.ledgerId < this.ledgers.firstLedgerId) {
      return true;
    }
    const last = this.ledgers.lastEntry();
    return last !== undefined && position.compareTo(last) < 0;
  }
}
