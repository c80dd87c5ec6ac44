import { InvalidPositionError } from './non-negative-id.ts';
import { Position } from './position.ts';
import { quote } from './quote.ts';

/**
 * A run of acknowledged entries of one ledger, open below and closed above, `(lower..upper]`, as
 * the ranges of Pulsar's `individualDeletedMessages`: `(3:4..3:7]` holds 3:5, 3:6 and 3:7. Immutable.
 * The lower bound of a range starting at a ledger's first entry is `L:-1`.
 */
export class AckRange {
  /** @throws InvalidPositionError unless both bounds are in the same ledger and lower < upper. */
  constructor(
    readonly lowerExclusive: Position,
    readonly upperInclusive: Position,
  ) {
    if (
      lowerExclusive.ledgerId !== upperInclusive.ledgerId ||
      lowerExclusive.entryId >= upperInclusive.entryId
    ) {
      throw new InvalidPositionError(
        `Invalid ack range ${quote(`(${lowerExclusive}..${upperInclusive}]`)}: both ends must be in one ledger and lower < upper`,
      );
    }
  }

  /** The range holding the single entry `position`. */
  static of(position: Position): AckRange {
    if (position.isBeforeFirst) {
      throw new InvalidPositionError(`Invalid ack position ${quote(position)}: it names no entry`);
    }
    return new AckRange(rangeBound(position.ledgerId, position.entryId - 1n), position);
  }

  get ledgerId(): bigint {
    return this.upperInclusive.ledgerId;
  }

  /** How many entries the range holds. */
  get count(): bigint {
    return this.upperInclusive.entryId - this.lowerExclusive.entryId;
  }

  contains(position: Position): boolean {
    return (
      position.ledgerId === this.ledgerId &&
      position.entryId > this.lowerExclusive.entryId &&
      position.entryId <= this.upperInclusive.entryId
    );
  }

  equals(other: AckRange): boolean {
    return (
      this.lowerExclusive.equals(other.lowerExclusive) && this.upperInclusive.equals(other.upperInclusive)
    );
  }

  /** Pulsar's (Guava's) notation, e.g. `(3:4..3:7]`. */
  toString(): string {
    return `(${this.lowerExclusive}..${this.upperInclusive}]`;
  }
}

/** A range bound: an entry, or `L:-1` before the ledger's first entry. */
export function rangeBound(ledgerId: bigint, entryId: bigint): Position {
  return Position.ofStored(ledgerId, entryId);
}
