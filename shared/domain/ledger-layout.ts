import { AcklineError, NotFoundError } from './errors.ts';
import { Position } from './position.ts';
import { quote } from './quote.ts';

/**
 * A ledger layout breaks an invariant (ledger ids not ascending, negative entry counts, no ledger).
 * Internal: the layout comes from storage, not from a user, so this maps to 500.
 */
export class InvalidLedgerLayoutError extends AcklineError {}

/** A position names no entry of the topic partition (its ledger is unknown or it was never written). */
export class PositionNotFoundError extends NotFoundError {}

/** One ledger of a topic partition: its id and how many entries were written to it so far. */
export interface LedgerInfo {
  readonly ledgerId: bigint;
  readonly entries: bigint;
}

/**
 * A topic partition's ledgers in log order (ascending ledger ids); the last one is the current
 * ledger, still being written. A value: the cursor reads it, never changes it.
 */
export type LedgerLayout = readonly LedgerInfo[];

/**
 * A {@link LedgerLayout} indexed for the cursor: positions become ordinals (how many entries of
 * the layout are at or before them) and back. Building it is linear in the number of ledgers;
 * every lookup is O(log ledgers). Immutable.
 */
export class LedgerIndex {
  private readonly ledgerIds: bigint[];
  private readonly entries: bigint[];
  /** `before[i]`: how many entries the ledgers before ledger i hold. */
  private readonly before: bigint[];
  /** All entries of the layout. */
  readonly totalEntries: bigint;

  /** @throws InvalidLedgerLayoutError when the layout is empty, not ascending, or has negative sizes. */
  constructor(readonly layout: LedgerLayout) {
    if (layout.length === 0) {
      throw new InvalidLedgerLayoutError('Invalid ledger layout: a topic partition has at least one ledger');
    }
    this.ledgerIds = [];
    this.entries = [];
    this.before = [];
    let total = 0n;
    for (const { ledgerId, entries } of layout) {
      const previous = this.ledgerIds[this.ledgerIds.length - 1];
      if (typeof ledgerId !== 'bigint' || ledgerId < 0n || (previous !== undefined && ledgerId <= previous)) {
        throw new InvalidLedgerLayoutError(
          `Invalid ledger layout: ledger ids must be non-negative and ascending, got ${quote(ledgerId)} after ${quote(previous)}`,
        );
      }
      if (typeof entries !== 'bigint' || entries < 0n) {
        throw new InvalidLedgerLayoutError(
          `Invalid ledger layout: ledger ${ledgerId} has ${quote(entries)} entries, expected a non-negative bigint`,
        );
      }
      this.ledgerIds.push(ledgerId);
      this.entries.push(entries);
      this.before.push(total);
      total += entries;
    }
    this.totalEntries = total;
  }

  get firstLedgerId(): bigint {
    return this.ledgerIds[0]!;
  }

  get lastLedgerId(): bigint {
    return this.ledgerIds[this.ledgerIds.length - 1]!;
  }

  /** True when ledger `ledgerId` is in the layout. */
  hasLedger(ledgerId: bigint): boolean {
    const i = this.firstLedgerAtOrAfter(ledgerId);
    return this.ledgerIds[i] === ledgerId;
  }

  /** True when `position` names a written entry. */
  hasEntry(position: Position): boolean {
    const i = this.firstLedgerAtOrAfter(position.ledgerId);
    return (
      this.ledgerIds[i] === position.ledgerId && position.entryId >= 0n && position.entryId < this.entries[i]!
    );
  }

  /**
   * How many entries of the layout are at or before `position`; defined for any position (one in
   * an unknown ledger counts the entries of the ledgers before it).
   */
  ordinal(position: Position): bigint {
    const i = this.firstLedgerAtOrAfter(position.ledgerId);
    if (i === this.ledgerIds.length) {
      return this.totalEntries;
    }
    const before = this.before[i]!;
    if (this.ledgerIds[i] !== position.ledgerId) {
      return before;
    }
    const inLedger = position.entryId + 1n;
    const size = this.entries[i]!;
    return before + (inLedger < 0n ? 0n : inLedger > size ? size : inLedger);
  }

  /** The entry with ordinal `ordinal` (1 is the first entry), or undefined outside 1..totalEntries. */
  positionAt(ordinal: bigint): Position | undefined {
    if (ordinal < 1n || ordinal > this.totalEntries) {
      return undefined;
    }
    // The last ledger with fewer entries before it than `ordinal`: empty ledgers share `before`
    // with the next one, so they are never chosen.
    let low = 0;
    let high = this.before.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if (this.before[mid]! < ordinal) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return Position.of(this.ledgerIds[low]!, ordinal - this.before[low]! - 1n);
  }

  /** The last written entry, or undefined when no ledger holds an entry. */
  lastEntry(): Position | undefined {
    return this.positionAt(this.totalEntries);
  }

  /** Where the next entry will be written: after the last entry of the current ledger. */
  nextWritePosition(): Position {
    return Position.of(this.lastLedgerId, this.entries[this.entries.length - 1]!);
  }

  private firstLedgerAtOrAfter(ledgerId: bigint): number {
    let low = 0;
    let high = this.ledgerIds.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.ledgerIds[mid]! < ledgerId) {
        low = mid + 1;
      } else {
        high = mid;
      }
    }
    return low;
  }
}
