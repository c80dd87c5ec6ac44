import { describe, expect, it } from 'vitest';
import { InvalidPositionError } from '../../../shared/domain/non-negative-id.ts';
import { nextInLedger, Position, positionBefore } from '../../../shared/domain/position.ts';

describe('Position', () => {
  it.each([
    ['0:0', 0n, 0n],
    ['3:15', 3n, 15n],
    ['9007199254740993:9223372036854775807', 9007199254740993n, 9223372036854775807n],
  ])('parses %s', (text, ledgerId, entryId) => {
    // Act
    const position = Position.parse(text);

    // Assert
    expect(position.ledgerId).toBe(ledgerId);
    expect(position.entryId).toBe(entryId);
    expect(position.toString()).toBe(text);
  });

  it.each([
    [''],
    ['1'],
    ['1:2:3'],
    ['1:'],
    [':1'],
    ['-1:0'],
    ['1:-1'],
    ['1.5:0'],
    ['1e3:0'],
    [' 1:0'],
    ['0x10:0'],
    ['9223372036854775808:0'],
    ['1:9223372036854775808'],
  ])('rejects %o', (text) => {
    expect(() => Position.parse(text)).toThrow(InvalidPositionError);
  });

  it('quotes the input when rejecting it', () => {
    expect(() => Position.parse('1:x')).toThrow(/Invalid position "1:x"/);
  });

  it.each<[bigint | number | string, bigint | number | string, string]>([
    [1n, 2n, '1:2'],
    [1, 2, '1:2'],
    ['1', '2', '1:2'],
    ['9007199254740993', 0, '9007199254740993:0'],
  ])('of(%o, %o) is %s', (ledgerId, entryId, expected) => {
    expect(Position.of(ledgerId, entryId).toString()).toBe(expected);
  });

  it.each<[bigint | number | string, bigint | number | string]>([
    [-1n, 0n],
    [0, -1],
    [0, 2 ** 53],
    ['1', ' 2'],
    [0, 0.5],
  ])('of(%o, %o) is rejected', (ledgerId, entryId) => {
    expect(() => Position.of(ledgerId, entryId)).toThrow(InvalidPositionError);
  });

  it('builds the internal "before the first entry" position only through beforeFirst', () => {
    // Act
    const position = Position.beforeFirst(7n);

    // Assert
    expect(position.toString()).toBe('7:-1');
    expect(position.isBeforeFirst).toBe(true);
    expect(Position.of(7n, 0n).isBeforeFirst).toBe(false);
    expect(() => Position.beforeFirst(-1n)).toThrow(InvalidPositionError);
  });

  it.each([
    ['1:1', '1:1', 0],
    ['1:1', '1:2', -1],
    ['1:9', '2:0', -1],
    ['2:0', '1:9', 1],
    ['10:0', '9:100', 1],
    ['9223372036854775807:1', '9223372036854775807:0', 1],
  ])('compares %s with %s as %i', (a, b, expected) => {
    expect(Position.compare(Position.parse(a), Position.parse(b))).toBe(expected);
    expect(Position.parse(a).compareTo(Position.parse(b))).toBe(expected);
    expect(Position.parse(a).equals(Position.parse(b))).toBe(expected === 0);
  });

  it('orders the before-first position before the ledger first entry and after the previous ledger', () => {
    expect(Position.beforeFirst(2n).compareTo(Position.of(2n, 0n))).toBe(-1);
    expect(Position.beforeFirst(2n).compareTo(Position.of(1n, 1000n))).toBe(1);
  });

  it('serialises to JSON as its string form', () => {
    expect(JSON.stringify({ at: Position.of(3n, 4n) })).toBe('{"at":"3:4"}');
  });

  it('ofStored and parseStored read back what ackline stored, L:-1 included; other negatives are refused', () => {
    expect(Position.ofStored(3n, -1n)).toEqual(Position.beforeFirst(3n));
    expect(Position.ofStored('3', '-1')).toEqual(Position.beforeFirst(3n));
    expect(Position.ofStored('3', '4')).toEqual(Position.of(3n, 4n));
    expect(Position.parseStored('7:-1').isBeforeFirst).toBe(true);
    expect(Position.parseStored('7:5')).toEqual(Position.of(7n, 5n));
    expect(() => Position.ofStored('3', '-2')).toThrow(InvalidPositionError);
    expect(() => Position.parseStored('7:-1:0')).toThrow(InvalidPositionError);
    expect(() => Position.parseStored('x:-1')).toThrow(InvalidPositionError);
  });
});

describe('position steps within a ledger', () => {
  it.each([
    ['3:0', '3:1'],
    ['3:-1', '3:0'],
    ['3:41', '3:42'],
  ])('nextInLedger(%s) is %s', (from, next) => {
    const position = from.endsWith(':-1') ? Position.beforeFirst(3n) : Position.parse(from);
    expect(nextInLedger(position).toString()).toBe(next);
  });

  it.each([
    ['3:0', '3:-1'],
    ['3:1', '3:0'],
    ['3:42', '3:41'],
  ])('positionBefore(%s) is %s', (from, before) => {
    expect(positionBefore(Position.parse(from)).toString()).toBe(before);
  });

  it('positionBefore undoes nextInLedger', () => {
    const position = Position.parse('7:9');
    expect(positionBefore(nextInLedger(position)).equals(position)).toBe(true);
  });
});
