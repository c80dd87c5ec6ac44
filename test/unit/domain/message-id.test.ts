import { describe, expect, it } from 'vitest';
import { MessageId, parseNonNegativeId } from '../../../shared/domain/message-id.ts';
import { InvalidPositionError } from '../../../shared/domain/non-negative-id.ts';
import { Position } from '../../../shared/domain/position.ts';

describe('MessageId', () => {
  it.each([
    { text: '1:2', ledgerId: 1n, entryId: 2n, partitionIndex: -1, rendered: '1:2:-1' },
    { text: '1:2:-1', ledgerId: 1n, entryId: 2n, partitionIndex: -1, rendered: '1:2:-1' },
    { text: '1:2:0', ledgerId: 1n, entryId: 2n, partitionIndex: 0, rendered: '1:2:0' },
    {
      text: '9007199254740993:5:3',
      ledgerId: 9007199254740993n,
      entryId: 5n,
      partitionIndex: 3,
      rendered: '9007199254740993:5:3',
    },
    {
      text: '1:2:2147483647',
      ledgerId: 1n,
      entryId: 2n,
      partitionIndex: 2147483647,
      rendered: '1:2:2147483647',
    },
  ])('parses $text', ({ text, ledgerId, entryId, partitionIndex, rendered }) => {
    // Act
    const id = MessageId.parse(text);

    // Assert
    expect(id.ledgerId).toBe(ledgerId);
    expect(id.entryId).toBe(entryId);
    expect(id.partitionIndex).toBe(partitionIndex);
    expect(id.toString()).toBe(rendered);
  });

  it.each([
    [''],
    ['1'],
    ['1:2:3:4'],
    ['1:2:-2'],
    ['1:2:x'],
    ['1:2:'],
    ['1:2:1.0'],
    ['1:2:2147483648'],
    ['-1:2'],
    ['1:-1:0'],
  ])('rejects %o', (text) => {
    expect(() => MessageId.parse(text)).toThrow(InvalidPositionError);
  });

  it('exposes its position', () => {
    expect(MessageId.parse('4:5:1').position.equals(Position.of(4n, 5n))).toBe(true);
  });

  it('is built from a position and a partition', () => {
    // Act
    const id = MessageId.of(Position.of(4n, 5n), 2);

    // Assert
    expect(id.equals(MessageId.parse('4:5:2'))).toBe(true);
    expect(id.equals(MessageId.parse('4:5:1'))).toBe(false);
    expect(MessageId.of(Position.of(4n, 5n)).toString()).toBe('4:5:-1');
  });

  it.each([[-2], [1.5], [2 ** 31]])('rejects partition index %o', (partitionIndex) => {
    expect(() => MessageId.of(Position.of(1n, 1n), partitionIndex)).toThrow(InvalidPositionError);
  });

  it('rejects a before-first position', () => {
    expect(() => MessageId.of(Position.beforeFirst(1n))).toThrow(InvalidPositionError);
  });

  it('re-exports parseNonNegativeId for query parameters', () => {
    expect(parseNonNegativeId('12', 'entryId')).toBe(12n);
  });
});
