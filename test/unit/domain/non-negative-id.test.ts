import { describe, expect, it } from 'vitest';
import { InvalidPositionError, MAX_ID, parseNonNegativeId } from '../../../shared/domain/non-negative-id.ts';

describe('parseNonNegativeId', () => {
  it.each<[string | number | bigint, bigint]>([
    ['0', 0n],
    ['42', 42n],
    ['007', 7n],
    ['9007199254740993', 9007199254740993n],
    ['9223372036854775807', MAX_ID],
    [0, 0n],
    [12, 12n],
    [Number.MAX_SAFE_INTEGER, 9007199254740991n],
    [5n, 5n],
    [MAX_ID, MAX_ID],
  ])('parses %o as %o', (input, expected) => {
    expect(parseNonNegativeId(input, 'ledgerId')).toBe(expected);
  });

  it.each<[string | number | bigint]>([
    ['-1'],
    ['1.5'],
    ['1e3'],
    [' 1'],
    ['1 '],
    [''],
    ['0x10'],
    ['+1'],
    ['١٢'],
    ['9223372036854775808'],
    ['99999999999999999999999'],
    [-1],
    [1.5],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    [2 ** 53],
    [-1n],
    [MAX_ID + 1n],
  ])('rejects %o', (input) => {
    expect(() => parseNonNegativeId(input, 'entryId')).toThrow(InvalidPositionError);
  });

  it('names the value and quotes the input in the message', () => {
    expect(() => parseNonNegativeId('12x', 'ledgerId')).toThrow('Invalid ledgerId "12x"');
  });
});
