import { describe, expect, it } from 'vitest';
import { KeysLeftBehind, stickyKeyOf } from '../../../../shared/application/engine/key-shared-order.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { StoredEntry } from '../../../../shared/ports/ledger.ts';

// Key_Shared order within one tracker pickup (mutation testing, issue 21 criterion 5): the keys a
// pickup left behind hold back their later entries, and a recently joined member's draining keys.

const entry = (entryId: number, key?: string): StoredEntry => ({
  position: Position.of(1, entryId),
  payload: `m${entryId}`,
  properties: {},
  publishTimeMs: 1,
  ...(key !== undefined ? { key } : {}),
});

describe('stickyKeyOf', () => {
  it('is the message key, or the position for a message without one', () => {
    expect(stickyKeyOf(entry(3, 'k'))).toBe('k');
    expect(stickyKeyOf(entry(3))).toBe('1:3');
  });
});

describe('KeysLeftBehind', () => {
  it('holds back the later entries of a key left behind, and nothing else', () => {
    const left = new KeysLeftBehind();
    expect(left.any).toBe(false);
    expect(left.holdsBack(entry(1, 'k'))).toBeUndefined();
    left.leave(entry(1, 'k'));
    expect(left.any).toBe(true);
    expect(left.holdsBack(entry(2, 'k'))).toBe('behind');
    expect(left.holdsBack(entry(2, 'j'))).toBeUndefined();
    // Messages without a key are never held back by one another.
    left.leave(entry(3));
    expect(left.holdsBack(entry(4))).toBeUndefined();
    expect(left.holdsBack(entry(3))).toBe('behind');
  });

  it('holds back everything once an entry of this member’s was left unread', () => {
    const left = new KeysLeftBehind();
    left.leaveUnread();
    expect(left.any).toBe(true);
    expect(left.holdsBack(entry(9, 'z'))).toBe('behind');
  });

  it('for a recently joined member, holds back an entry up to its join mark whose key another member holds earlier', () => {
    const left = new KeysLeftBehind({
      upTo: Position.of(1, 10),
      heldByOthers: new Map([
        ['k', Position.of(1, 5)],
        ['j', Position.of(1, 8)],
      ]),
    });
    expect(left.holdsBack(entry(6, 'k'))).toBe('draining');
    expect(left.holdsBack(entry(10, 'k'))).toBe('draining');
    // Past the join mark: the member's own.
    expect(left.holdsBack(entry(11, 'k'))).toBeUndefined();
    // The held entry itself, and one before it, are not behind it.
    expect(left.holdsBack(entry(8, 'j'))).toBeUndefined();
    expect(left.holdsBack(entry(7, 'j'))).toBeUndefined();
    expect(left.holdsBack(entry(9, 'x'))).toBeUndefined();
    expect(left.any).toBe(false);
  });

  it('holds back everything up to the join mark when what others hold is not known', () => {
    const left = new KeysLeftBehind({ upTo: Position.of(1, 10), heldByOthers: undefined });
    expect(left.holdsBack(entry(10, 'k'))).toBe('draining');
    expect(left.holdsBack(entry(11, 'k'))).toBeUndefined();
  });
});
