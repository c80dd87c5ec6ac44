import { describe, expect, it } from 'vitest';
import { itemBytes, writeUnitsOf } from '../../../../shared/adapters/dynamodb/item-size.ts';

describe('itemBytes', () => {
  it.each([
    ['a string: its UTF-8 bytes', { name: { S: 'héllo' } }, 4 + 6],
    ['a number: a byte per two significant digits, plus one', { n: { N: '123456' } }, 1 + 4],
    ['a number: zeros at either end do not count', { n: { N: '-0012300.000' } }, 1 + 3],
    ['a boolean and a null: one byte each', { b: { BOOL: true }, z: { NULL: true } }, 2 + 2],
    ['a binary: its bytes', { b: { B: new Uint8Array(10) } }, 1 + 10],
    ['a number set: its numbers', { a: { NS: ['1', '22', '333'] } }, 1 + 2 + 2 + 3],
    [
      'a list: 3 bytes, one per element, and the elements',
      { l: { L: [{ S: 'ab' }, { N: '1' }] } },
      1 + 3 + (1 + 2) + (1 + 2),
    ],
    ['a map: 3 bytes, one per entry, names and values', { m: { M: { k: { S: 'v' } } } }, 1 + 3 + 1 + 1 + 1],
  ])('%s', (_, item, bytes) => {
    expect(itemBytes(item)).toBe(bytes);
  });
});

describe('writeUnitsOf', () => {
  it.each([
    [0, 1],
    [1, 1],
    [1024, 1],
    [1025, 2],
    [350_000, 342],
  ])('bills %i bytes as %i write units', (bytes, units) => {
    expect(writeUnitsOf(bytes)).toBe(units);
  });
});
