import { describe, expect, it } from 'vitest';
import { Position } from '../../../shared/domain/position.ts';
import { resetCursorBodyOf } from '../../../shared/http/admin-requests.ts';

describe('resetCursorBodyOf', () => {
  it("reads Pulsar's wire name `excluded` (Jackson's, from Lombok's setExcluded) as well as `isExcluded`", () => {
    expect(resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: true })).toEqual({
      position: Position.of(3, 15),
      isExcluded: true,
    });
    expect(resetCursorBodyOf({ ledgerId: 3, entryId: 15, isExcluded: true }).isExcluded).toBe(true);
    expect(resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: false }).isExcluded).toBe(false);
    expect(resetCursorBodyOf({ ledgerId: 3, entryId: 15 }).isExcluded).toBe(false);
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

  it('refuses a non-boolean, or `excluded` and `isExcluded` that disagree', () => {
    expect(() => resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: 'yes' })).toThrow(
      'excluded must be true or false',
    );
    expect(() => resetCursorBodyOf({ ledgerId: 3, entryId: 15, excluded: true, isExcluded: false })).toThrow(
      'disagree',
    );
  });
});
