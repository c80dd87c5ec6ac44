import { describe, expect, it } from 'vitest';
import { AckRange } from '../../../shared/domain/ack-range.ts';
import { AckRangeSet } from '../../../shared/domain/ack-range-set.ts';
import { Cursor } from '../../../shared/domain/cursor.ts';
import { ValidationError } from '../../../shared/domain/errors.ts';
import type { LedgerLayout } from '../../../shared/domain/ledger-layout.ts';
import { InvalidLedgerLayoutError, PositionNotFoundError } from '../../../shared/domain/ledger-layout.ts';
import { InvalidPositionError } from '../../../shared/domain/non-negative-id.ts';
import { Position } from '../../../shared/domain/position.ts';

/** `'3:5'`, or `'3:-1'` for "before the first entry of ledger 3". */
const at = (text: string): Position => {
  const [ledgerId, entryId] = text.split(':');
  return entryId === '-1' ? Position.beforeFirst(BigInt(ledgerId!)) : Position.parse(text);
};

// Ledger 3: 3:0..3:9; ledger 4: empty; ledger 6: 6:0..6:4 (current).
const layout: LedgerLayout = [
  { ledgerId: 3n, entries: 10n },
  { ledgerId: 4n, entries: 0n },
  { ledgerId: 6n, entries: 5n },
];

function cursorAfter(acks: string[], markDelete = '3:-1'): Cursor {
  const cursor = new Cursor({ layout, markDeletePosition: at(markDelete) });
  for (const ack of acks) {
    cursor.acknowledge(at(ack));
  }
  return cursor;
}

describe('Cursor', () => {
  it('starts at Earliest before the first entry of the first ledger', () => {
    // Act
    const cursor = Cursor.atEarliest(layout);

    // Assert
    expect(cursor.markDeletePosition.toString()).toBe('3:-1');
    expect(cursor.readPosition.toString()).toBe('3:0');
    expect(cursor.backlog()).toBe(15);
    expect(cursor.individuallyDeletedMessages()).toBe('[]');
  });

  it.each<[string, LedgerLayout, string, string]>([
    ['entries in the last ledger', layout, '6:4', '6:5'],
    ['an empty current ledger', [...layout, { ledgerId: 7n, entries: 0n }], '6:4', '7:0'],
    ['nothing written', [{ ledgerId: 2n, entries: 0n }], '2:-1', '2:0'],
  ])('starts at Latest on the last written entry, with %s', (_name, ledgers, markDelete, read) => {
    // Act
    const cursor = Cursor.atLatest(ledgers);

    // Assert
    expect(cursor.markDeletePosition.toString()).toBe(markDelete);
    expect(cursor.readPosition.toString()).toBe(read);
    expect(cursor.backlog()).toBe(0);
  });

  it.each([
    // acks -> mark-delete, individuallyDeletedMessages, backlog
    [[], '3:-1', '[]', 15],
    [['3:5'], '3:-1', '[(3:4..3:5]]', 14],
    [['3:5', '3:7'], '3:-1', '[(3:4..3:5],(3:6..3:7]]', 13],
    [['3:5', '3:6', '3:7'], '3:-1', '[(3:4..3:7]]', 12],
    [['3:5', '3:7', '3:9', '6:1'], '3:-1', '[(3:4..3:5],(3:6..3:7],(3:8..3:9],(6:0..6:1]]', 11],
    [['3:0'], '3:0', '[]', 14],
    [['3:1', '3:2', '3:0'], '3:2', '[]', 12],
    [['3:1', '3:3', '3:0'], '3:1', '[(3:2..3:3]]', 12],
    // across the ledger boundary and over the empty ledger 4
    [['6:0', '6:1', '3:9', '3:8', '3:7', '3:6', '3:5', '3:4', '3:3', '3:2', '3:1', '3:0'], '6:1', '[]', 3],
    [['6:0', '3:9'], '3:-1', '[(3:8..3:9],(6:-1..6:0]]', 13],
    [['3:0', '3:1', '3:2', '3:3', '3:4', '3:5', '3:6', '3:7', '3:8', '3:9', '6:0'], '6:0', '[]', 4],
    [
      [
        '6:4',
        '6:3',
        '6:2',
        '6:1',
        '6:0',
        '3:9',
        '3:8',
        '3:7',
        '3:6',
        '3:5',
        '3:4',
        '3:3',
        '3:2',
        '3:1',
        '3:0',
      ],
      '6:4',
      '[]',
      0,
    ],
  ])('after acknowledging %j the mark-delete is %s with %s, backlog %i', (acks, markDelete, ranges, backlog) => {
    // Act
    const cursor = cursorAfter(acks);

    // Assert
    expect(cursor.markDeletePosition.toString()).toBe(markDelete);
    expect(cursor.individuallyDeletedMessages()).toBe(ranges);
    expect(cursor.backlog()).toBe(backlog);
  });

  it('renders ranges exactly as Pulsar internal stats', () => {
    // Act
    const cursor = cursorAfter(['3:6', '3:7', '3:9'], '3:2');

    // Assert
    expect(cursor.individuallyDeletedMessages()).toBe('[(3:5..3:7],(3:8..3:9]]');
    expect(cursor.acknowledgedRanges().map(String)).toEqual(['(3:5..3:7]', '(3:8..3:9]']);
  });

  it('acknowledges idempotently and reports new acknowledgements', () => {
    // Arrange
    const cursor = cursorAfter(['3:5'], '3:2');

    // Act & Assert
    expect(cursor.acknowledge(at('3:5'))).toBe(false);
    expect(cursor.acknowledge(at('3:1'))).toBe(false);
    expect(cursor.acknowledge(at('3:2'))).toBe(false);
    expect(cursor.acknowledge(at('3:6'))).toBe(true);
    expect(cursor.backlog()).toBe(10);
  });

  it.each([
    ['3:10'],
    ['4:0'],
    ['5:0'],
    ['6:5'],
    ['7:0'],
  ])('refuses to acknowledge %s, which was never written', (position) => {
    // Arrange
    const cursor = Cursor.atEarliest(layout);

    // Act & Assert
    expect(() => cursor.acknowledge(at(position))).toThrow(PositionNotFoundError);
    expect(cursor.backlog()).toBe(15);
  });

  it('does not accept a before-first position as an acknowledgement', () => {
    expect(() => Cursor.atEarliest(layout).acknowledge(at('6:-1'))).toThrow(InvalidPositionError);
  });

  it('treats positions at or before the mark-delete as acknowledged, even in trimmed ledgers', () => {
    // Arrange
    const cursor = cursorAfter(['3:6'], '3:4');

    // Act & Assert
    expect(cursor.isAcknowledged(at('1:100'))).toBe(true);
    expect(cursor.isAcknowledged(at('3:4'))).toBe(true);
    expect(cursor.isAcknowledged(at('3:5'))).toBe(false);
    expect(cursor.isAcknowledged(at('3:6'))).toBe(true);
    expect(cursor.isAcknowledged(at('6:0'))).toBe(false);
    expect(cursor.acknowledge(at('1:100'))).toBe(false);
  });

  it('moves the mark-delete forward, never back, and absorbs the ranges it passes', () => {
    // Arrange
    const cursor = cursorAfter(['3:4', '3:6', '3:7', '6:1']);

    // Act & Assert
    expect(cursor.markDelete(at('3:5'))).toBe(true);
    expect(cursor.markDeletePosition.toString()).toBe('3:7');
    expect(cursor.individuallyDeletedMessages()).toBe('[(6:0..6:1]]');
    expect(cursor.markDelete(at('3:2'))).toBe(false);
    expect(cursor.markDelete(at('3:7'))).toBe(false);
    expect(cursor.markDeletePosition.toString()).toBe('3:7');
    expect(cursor.markDelete(at('3:9'))).toBe(true);
    expect(cursor.markDeletePosition.toString()).toBe('3:9');
    expect(cursor.backlog()).toBe(4);
    expect(cursor.markDelete(at('6:0'))).toBe(true);
    expect(cursor.markDeletePosition.toString()).toBe('6:1');
    expect(cursor.individuallyDeletedMessages()).toBe('[]');
    expect(cursor.backlog()).toBe(3);
  });

  it('mark-deletes to the start of a ledger', () => {
    // Arrange
    const cursor = cursorAfter(['6:0', '3:2']);

    // Act
    cursor.markDelete(at('6:-1'));

    // Assert
    expect(cursor.markDeletePosition.toString()).toBe('6:0');
    expect(cursor.backlog()).toBe(4);
  });

  it.each([['3:10'], ['5:-1'], ['6:5'], ['7:-1']])('refuses to mark-delete up to %s', (position) => {
    expect(() => Cursor.atEarliest(layout).markDelete(at(position))).toThrow(PositionNotFoundError);
  });

  it.each([
    // acks, mark-delete -> read position
    [[], '3:-1', '3:0'],
    [[], '3:4', '3:5'],
    [[], '3:9', '6:0'],
    [[], '4:-1', '6:0'],
    [['3:6'], '3:4', '3:5'],
    [[], '6:4', '6:5'],
  ])('after %j with mark-delete %s reads next at %s', (acks, markDelete, read) => {
    expect(cursorAfter(acks, markDelete).readPosition.toString()).toBe(read);
  });

  it('finds the nth unacknowledged entry for peek', () => {
    // Arrange: unacknowledged are 3:3, 3:6, 3:8, 6:2, 6:3, 6:4
    const cursor = cursorAfter(['3:4', '3:5', '3:7', '3:9', '6:0', '6:1'], '3:2');

    // Act
    const nth = [1, 2, 3, 4, 5, 6, 7].map((n) => cursor.nthBacklogPosition(n)?.toString());

    // Assert
    expect(nth).toEqual(['3:3', '3:6', '3:8', '6:2', '6:3', '6:4', undefined]);
    expect(cursor.backlog()).toBe(6);
  });

  it('lists the first unacknowledged entries for skip', () => {
    // Arrange
    const cursor = cursorAfter(['3:4', '3:5', '3:7', '3:9', '6:0', '6:1'], '3:2');

    // Act & Assert
    expect(cursor.firstBacklogPositions(0)).toEqual([]);
    expect(cursor.firstBacklogPositions(3).map(String)).toEqual(['3:3', '3:6', '3:8']);
    expect(cursor.firstBacklogPositions(4).map(String)).toEqual(['3:3', '3:6', '3:8', '6:2']);
    expect(cursor.firstBacklogPositions(100).map(String)).toEqual(['3:3', '3:6', '3:8', '6:2', '6:3', '6:4']);
  });

  it.each([
    // Unacknowledged: 3:3, 3:6, 3:8, 6:2, 6:3, 6:4 (mark-delete 3:2; acked 3:4, 3:5, 3:7, 3:9, 6:0, 6:1).
    ['before the mark-delete (3:0)', '3:0', 2, ['3:3', '3:6']],
    ['L:-1 of the first ledger', '3:-1', 1, ['3:3']],
    ['an unacknowledged entry (3:3)', '3:3', 2, ['3:6', '3:8']],
    ['inside an acknowledged range (3:4)', '3:4', 2, ['3:6', '3:8']],
    ['the last entry of a ledger, acknowledged (3:9)', '3:9', 2, ['6:2', '6:3']],
    ['an empty ledger (4:-1)', '4:-1', 1, ['6:2']],
    ['a ledger absent from the layout (5:7)', '5:7', 9, ['6:2', '6:3', '6:4']],
    ['an entry past a ledger end (3:50)', '3:50', 1, ['6:2']],
    ['the last entry (6:4)', '6:4', 5, []],
    ['a ledger after the last one (9:0)', '9:0', 5, []],
    ['an unacknowledged entry, count 0', '3:3', 0, []],
  ])('lists the first backlog entries after %s', (_, after, count, expected) => {
    // Arrange
    const cursor = cursorAfter(['3:4', '3:5', '3:7', '3:9', '6:0', '6:1'], '3:2');

    // Act
    const positions = cursor.backlogPositionsAfter(at(after), count);

    // Assert
    expect(positions.map(String)).toEqual(expected);
  });

  it('walks the whole backlog in steps of any size, each step resuming after the last', () => {
    // Arrange
    const cursor = cursorAfter(['3:4', '3:5', '3:7', '3:9', '6:0', '6:1'], '3:2');

    for (const step of [1, 2, 4, 6, 7]) {
      // Act
      const walked: Position[] = [];
      let after = cursor.markDeletePosition;
      for (;;) {
        const positions = cursor.backlogPositionsAfter(after, step);
        walked.push(...positions);
        if (positions.length < step) break;
        after = positions[positions.length - 1]!;
      }

      // Assert
      expect(walked.map(String)).toEqual(cursor.firstBacklogPositions(100).map(String));
    }
  });

  it.each([[-1], [0.5]])('rejects the count %d of backlog entries after a position', (n) => {
    expect(() => Cursor.atEarliest(layout).backlogPositionsAfter(at('3:0'), n)).toThrow(ValidationError);
  });

  it.each([[0], [-1], [1.5]])('rejects peek position %d', (n) => {
    expect(() => Cursor.atEarliest(layout).nthBacklogPosition(n)).toThrow(ValidationError);
  });

  it.each([[-1], [0.5]])('rejects skip count %d', (n) => {
    expect(() => Cursor.atEarliest(layout).firstBacklogPositions(n)).toThrow(ValidationError);
  });

  it('is rebuilt from a stored mark-delete and acknowledged ranges or positions', () => {
    // Arrange
    const original = cursorAfter(['3:4', '3:5', '3:7', '6:0'], '3:2');

    // Act
    const fromRanges = new Cursor({
      layout,
      markDeletePosition: original.markDeletePosition,
      acknowledged: original.acknowledgedRanges(),
    });
    const fromPositions = new Cursor({
      layout,
      markDeletePosition: at('3:2'),
      acknowledged: [at('6:0'), at('3:7'), at('3:1'), at('3:5'), at('3:4')],
    });

    // Assert
    for (const rebuilt of [fromRanges, fromPositions]) {
      expect(rebuilt.markDeletePosition.toString()).toBe('3:2');
      expect(rebuilt.individuallyDeletedMessages()).toBe(original.individuallyDeletedMessages());
      expect(rebuilt.backlog()).toBe(original.backlog());
    }
  });

  it('advances a rebuilt cursor whose stored ranges touch its mark-delete', () => {
    // Act
    const cursor = new Cursor({
      layout,
      markDeletePosition: at('3:2'),
      acknowledged: AckRangeSet.of([new AckRange(at('3:2'), at('3:9')), new AckRange(at('6:-1'), at('6:1'))]),
    });

    // Assert
    expect(cursor.markDeletePosition.toString()).toBe('6:1');
    expect(cursor.backlog()).toBe(3);
  });

  it('copies the range set it is given', () => {
    // Arrange
    const acknowledged = AckRangeSet.of([at('3:5')]);
    const cursor = new Cursor({ layout, markDeletePosition: at('3:-1'), acknowledged });

    // Act
    cursor.acknowledge(at('3:6'));
    acknowledged.add(at('3:8'));

    // Assert
    expect(cursor.individuallyDeletedMessages()).toBe('[(3:4..3:6]]');
    expect(acknowledged.toString()).toBe('[(3:4..3:5],(3:7..3:8]]');
  });

  it('accepts a stored mark-delete in a ledger missing between two ledgers', () => {
    // Act
    const cursor = new Cursor({ layout, markDeletePosition: at('5:3') });

    // Assert
    expect(cursor.backlog()).toBe(5);
    expect(cursor.readPosition.toString()).toBe('6:0');
  });

  it('accepts a mark-delete in a ledger trimmed since', () => {
    // Act
    const cursor = new Cursor({ layout, markDeletePosition: at('1:50') });

    // Assert
    expect(cursor.backlog()).toBe(15);
    expect(cursor.readPosition.toString()).toBe('3:0');
  });

  it.each([
    ['3:10'],
    ['6:5'],
    ['7:-1'],
    ['9:0'],
  ])('refuses a stored mark-delete %s that names no entry', (position) => {
    expect(() => new Cursor({ layout, markDeletePosition: at(position) })).toThrow(PositionNotFoundError);
  });

  it('refuses stored acknowledgements of entries never written', () => {
    expect(() => new Cursor({ layout, markDeletePosition: at('3:-1'), acknowledged: [at('6:7')] })).toThrow(
      PositionNotFoundError,
    );
  });

  it('ignores stored acknowledgements at or before the mark-delete', () => {
    // Act
    const cursor = new Cursor({
      layout,
      markDeletePosition: at('3:5'),
      acknowledged: [at('3:1'), at('2:9')],
    });

    // Assert
    expect(cursor.individuallyDeletedMessages()).toBe('[]');
    expect(cursor.backlog()).toBe(9);
  });

  it('carries its state over to a newer layout', () => {
    // Arrange
    const cursor = cursorAfter(['3:0', '6:4']);

    // Act
    const grown = cursor.withLayout([
      ...layout.slice(0, 2),
      { ledgerId: 6n, entries: 8n },
      { ledgerId: 9n, entries: 2n },
    ]);

    // Assert
    expect(grown.markDeletePosition.toString()).toBe('3:0');
    expect(grown.individuallyDeletedMessages()).toBe('[(6:3..6:4]]');
    expect(grown.backlog()).toBe(9 + 7 + 2);
    expect(cursor.backlog()).toBe(13);
  });

  it('refuses a malformed layout', () => {
    expect(() => Cursor.atEarliest([])).toThrow(InvalidLedgerLayoutError);
  });
});
