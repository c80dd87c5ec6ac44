import { describe, expect, it } from 'vitest';
import { Position } from '../../../shared/domain/position.ts';
import { messageTTLOf, resetCursorBodyOf } from '../../../shared/http/admin-requests.ts';
import { describeValue } from '../../../shared/http/request-parsing.ts';

describe('resetCursorBodyOf', () => {
  it("reads Pulsar's wire name `excluded` (Jackson's, from Lombok's setExcluded) as well as `isExcluded`", () => {
    expect(resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: true })).toEqual({
      position: Position.of(3, 15),
      isExcluded: true,
    });
    expect(resetCursorBodyOf({ ledgerId: 3, entryId: 15, isExcluded: true })).toMatchObject({
      isExcluded: true,
    });
    expect(resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: false })).toMatchObject({
      isExcluded: false,
    });
    expect(resetCursorBodyOf({ ledgerId: 3, entryId: 15 })).toMatchObject({ isExcluded: false });
    // What pulsar-admin's ResetCursorData serialises to.
    expect(
      resetCursorBodyOf({
        ledgerId: 3,
        entryId: 15,
        partitionIndex: -1,
        excluded: true,
        batchIndex: -1,
        properties: null,
      }),
    ).toEqual({ position: Position.of(3, 15), partitionIndex: -1, isExcluded: true });
  });

  it('reads MessageId.earliest (-1:-1) and MessageId.latest (Long.MAX_VALUE, as a number or a string)', () => {
    expect(resetCursorBodyOf({ ledgerId: -1, entryId: -1, partitionIndex: -1 })).toEqual({
      edge: 'earliest',
    });
    expect(resetCursorBodyOf({ ledgerId: '-1', entryId: '-1' })).toEqual({ edge: 'earliest' });
    expect(
      resetCursorBodyOf(JSON.parse('{"ledgerId":9223372036854775807,"entryId":9223372036854775807}')),
    ).toEqual({ edge: 'latest' });
    expect(resetCursorBodyOf({ ledgerId: '9223372036854775807', entryId: '9223372036854775807' })).toEqual({
      edge: 'latest',
    });
    expect(() => resetCursorBodyOf({ ledgerId: -1, entryId: 0 })).toThrow();
  });

  it.each([
    [
      'ids past Long.MAX_VALUE, as strings',
      { ledgerId: '99999999999999999999999', entryId: '99999999999999999999999' },
    ],
    ['ids past Long.MAX_VALUE, as numbers', { ledgerId: 1e300, entryId: 1e300 }],
    ['-1 with a leading zero', { ledgerId: '-01', entryId: '-1' }],
    ['earliest with a non-boolean excluded', { ledgerId: -1, entryId: -1, excluded: 'yes' }],
    [
      'latest with a partitionIndex below -1',
      { ledgerId: '9223372036854775807', entryId: '9223372036854775807', partitionIndex: -5 },
    ],
    ['earliest with a batchIndex', { ledgerId: -1, entryId: -1, batchIndex: 3 }],
  ])('%s: 400, never MessageId.earliest or latest (the cursor stays)', (_label, body) => {
    expect(() => resetCursorBodyOf(body)).toThrow(
      expect.objectContaining({ name: expect.stringMatching(/ValidationError|InvalidPositionError/) }),
    );
  });

  it('Long.MAX_VALUE - 1 as a string is an id (the topic has no such ledger: 412 later), not latest', () => {
    expect(
      resetCursorBodyOf({ ledgerId: '9223372036854775806', entryId: '9223372036854775806' }),
    ).not.toHaveProperty('edge');
  });

  it('refuses a non-boolean, or `excluded` and `isExcluded` that disagree', () => {
    expect(() => resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: 'yes' })).toThrow(
      'excluded must be true or false',
    );
    expect(() => resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: true, isExcluded: false })).toThrow(
      'disagree',
    );
  });
});

describe('messageTTLOf', () => {
  it("takes a Java int of seconds, as Pulsar's messageTTL: up to 2147483647", () => {
    expect(messageTTLOf(2_147_483_647, 'The body')).toBe(2_147_483_647);
    expect(messageTTLOf('3600', 'The messageTTL query parameter')).toBe(3600);
    expect(() => messageTTLOf(3_000_000_000, 'The body')).toThrow(/at most 2147483647/);
    expect(() => messageTTLOf('2147483648', 'The messageTTL query parameter')).toThrow(/at most 2147483647/);
  });
});

describe('describeValue', () => {
  it('names an object or array by its kind, never its contents (a body nested deep or large)', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(describeValue(deep)).toBe('an array');
    expect(describeValue({ a: 1 })).toBe('an object');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('nothing');
  });

  it('gives a primitive as JSON, cut at 40 characters', () => {
    expect(describeValue('yes')).toBe('"yes"');
    expect(describeValue(12)).toBe('12');
    expect(describeValue('x'.repeat(100))).toBe(`"${'x'.repeat(39)}…`);
  });
});
