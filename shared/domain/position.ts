import { InvalidPositionError, MAX_ID, parseNonNegativeId } from './non-negative-id.ts';
import { quote } from './quote.ts';

/**
 * The place of one entry in a topic partition's log: `ledgerId:entryId`, as Pulsar's `Position`.
 * Immutable. Positions order by ledger id, then entry id; ledger ids grow along a partition's log,
 * so this is log order.
 *
 * Positions built from user input ({@link Position.parse}, {@link Position.of}) name an entry:
 * both ids in 0..2^63-1. The cursor also needs "before the first entry of ledger L", which Pulsar
 * writes `L:-1`: only {@link Position.beforeFirst} builds that.
 */
export class Position {
  private constructor(
    /** The ledger, unique across the whole deployment. */
    readonly ledgerId: bigint,
    /** The entry inside its ledger, from 0; -1 only for {@link Position.beforeFirst}. */
    readonly entryId: bigint,
  ) {}

  /**
   * Builds a position from user-supplied ids (bigint, safe-integer number, or decimal string).
   * @throws InvalidPositionError when an id is negative, not an integer or above 2^63-1.
   */
  static of(ledgerId: bigint | number | string, entryId: bigint | number | string): Position {
    return new Position(parseNonNegativeId(ledgerId, 'ledgerId'), parseNonNegativeId(entryId, 'entryId'));
  }

  /**
   * Parses `ledgerId:entryId`, e.g. `'3:15'`.
   * @throws InvalidPositionError quoting the input.
   */
  static parse(text: string): Position {
    const parts = typeof text === 'string' ? text.split(':') : [];
    if (parts.length !== 2) {
      throw new InvalidPositionError(`Invalid position ${quote(text)}: expected ledgerId:entryId`);
    }
    try {
      return Position.of(parts[0]!, parts[1]!);
    } catch (error) {
      throw new InvalidPositionError(
        `Invalid position ${quote(text)}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  /**
   * The mark-delete position meaning "nothing of ledger `ledgerId` is acknowledged yet"
   * (Pulsar's `ledgerId:-1`). Internal: never accepted from users.
   */
  static beforeFirst(ledgerId: bigint): Position {
    if (ledgerId < 0n || ledgerId > MAX_ID) {
      throw new InvalidPositionError(`Invalid ledgerId ${quote(ledgerId)}: must be between 0 and ${MAX_ID}`);
    }
    return new Position(ledgerId, -1n);
  }

  /**
   * A position ackline stored itself (mark-delete positions, range bounds, feed progress): as
   * `of`, and entryId -1 gives {@link beforeFirst}. Never for user input.
   * @throws InvalidPositionError as `of` does, for any other negative id.
   */
  static ofStored(ledgerId: bigint | number | string, entryId: bigint | number | string): Position {
    if (entryId === -1n || entryId === -1 || entryId === '-1') {
      return Position.beforeFirst(
        typeof ledgerId === 'bigint' ? ledgerId : Position.of(ledgerId, 0).ledgerId,
      );
    }
    return Position.of(ledgerId, entryId);
  }

  /** {@link parse} for a position ackline stored itself: `L:-1` too (see {@link ofStored}). */
  static parseStored(text: string): Position {
    const [ledgerId, entryId, extra] = text.split(':');
    if (ledgerId !== undefined && entryId === '-1' && extra === undefined)
      return Position.ofStored(ledgerId, entryId);
    return Position.parse(text);
  }

  /** Negative, zero or positive as `a` is before, at or after `b` in log order. */
  static compare(a: Position, b: Position): number {
    if (a.ledgerId !== b.ledgerId) {
      return a.ledgerId < b.ledgerId ? -1 : 1;
    }
    if (a.entryId !== b.entryId) {
      return a.entryId < b.entryId ? -1 : 1;
    }
    return 0;
  }

  /** True for {@link Position.beforeFirst} positions (`L:-1`). */
  get isBeforeFirst(): boolean {
    return this.entryId < 0n;
  }

  compareTo(other: Position): number {
    return Position.compare(this, other);
  }

  equals(other: Position): boolean {
    return this.ledgerId === other.ledgerId && this.entryId === other.entryId;
  }

  /** `ledgerId:entryId`, every digit kept. */
  toString(): string {
    return `${this.ledgerId}:${this.entryId}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

/** The position right after `position` in the same ledger. */
export function nextInLedger(position: Position): Position {
  return Position.of(position.ledgerId, position.entryId + 1n);
}

/** The position before `position` in its ledger (`L:-1` before the first entry). */
export function positionBefore(position: Position): Position {
  return position.entryId === 0n
    ? Position.beforeFirst(position.ledgerId)
    : Position.ofStored(position.ledgerId, position.entryId - 1n);
}
