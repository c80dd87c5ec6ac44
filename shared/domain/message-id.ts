import { InvalidPositionError, parseNonNegativeId } from './non-negative-id.ts';
import { Position } from './position.ts';
import { quote } from './quote.ts';

export { parseNonNegativeId } from './non-negative-id.ts';

const MAX_PARTITION_INDEX = 2 ** 31 - 1;
const PARTITION_INDEX = /^(-1|[0-9]+)$/;

/**
 * A message's id as Pulsar clients see it: `ledgerId:entryId:partitionIndex`, where
 * `partitionIndex` is -1 for a non-partitioned topic. Immutable.
 *
 * @example
 * const id = MessageId.parse('12:3:-1');
 * await consumer.acknowledge(id);
 */
export class MessageId {
  private constructor(
    readonly ledgerId: bigint,
    readonly entryId: bigint,
    /** The partition of a partitioned topic, or -1. */
    readonly partitionIndex: number,
  ) {}

  /** The message id of the entry at `position` in partition `partitionIndex` (-1: not partitioned). */
  static of(position: Position, partitionIndex = -1): MessageId {
    if (position.isBeforeFirst) {
      throw new InvalidPositionError(`Invalid message position ${quote(position)}: it names no entry`);
    }
    return new MessageId(
      position.ledgerId,
      position.entryId,
      checkPartitionIndex(partitionIndex, partitionIndex),
    );
  }

  /**
   * Parses `L:E` (partition -1) or `L:E:P`, e.g. `'12:3:-1'`, `'12:3:0'`.
   * @throws InvalidPositionError quoting the input.
   */
  static parse(text: string): MessageId {
    const parts = typeof text === 'string' ? text.split(':') : [];
    if (parts.length !== 2 && parts.length !== 3) {
      throw new InvalidPositionError(
        `Invalid message id ${quote(text)}: expected ledgerId:entryId or ledgerId:entryId:partitionIndex`,
      );
    }
    try {
      const ledgerId = parseNonNegativeId(parts[0]!, 'ledgerId');
      const entryId = parseNonNegativeId(parts[1]!, 'entryId');
      const partitionText = parts[2];
      let partitionIndex = -1;
      if (partitionText !== undefined) {
        if (!PARTITION_INDEX.test(partitionText)) {
          throw new InvalidPositionError(
            `Invalid partitionIndex ${quote(partitionText)}: expected -1 or a non-negative integer`,
          );
        }
        partitionIndex = checkPartitionIndex(Number(partitionText), partitionText);
      }
      return new MessageId(ledgerId, entryId, partitionIndex);
    } catch (error) {
      throw new InvalidPositionError(
        `Invalid message id ${quote(text)}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  /** The entry's position in its partition's log. */
  get position(): Position {
    return Position.of(this.ledgerId, this.entryId);
  }

  /**
   * Whether both name the same entry of the same partition.
   * @example MessageId.parse('1:0:-1').equals(MessageId.parse('1:0:-1')); // true
   */
  equals(other: MessageId): boolean {
    return (
      this.ledgerId === other.ledgerId &&
      this.entryId === other.entryId &&
      this.partitionIndex === other.partitionIndex
    );
  }

  /** `ledgerId:entryId:partitionIndex`, as Pulsar's `MessageIdImpl.toString()`. */
  toString(): string {
    return `${this.ledgerId}:${this.entryId}:${this.partitionIndex}`;
  }

  /** As {@link toString}: a MessageId in JSON is its `ledgerId:entryId:partitionIndex` string. */
  toJSON(): string {
    return this.toString();
  }
}

function checkPartitionIndex(value: number, input: unknown): number {
  if (!Number.isInteger(value) || value < -1 || value > MAX_PARTITION_INDEX) {
    throw new InvalidPositionError(
      `Invalid partitionIndex ${quote(input)}: expected -1 or an integer between 0 and ${MAX_PARTITION_INDEX}`,
    );
  }
  return value;
}
