import { describe, expect, it } from 'vitest';
import { Position } from '../../../shared/domain/position.ts';
import { resetCursorBodyOf } from '../../../shared/http/admin-requests.ts';

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

  it('refuses a non-boolean, or `excluded` and `isExcluded` that disagree', () => {
    expect(() => resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: 'yes' })).toThrow(
      'excluded must be true or false',
    );
    expect(() => resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: true, isExcluded: false })).toThrow(
      'disagree',
    );
  });
});
