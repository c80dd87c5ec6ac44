import { describe, expect, it } from 'vitest';
import type { DeliveryRun } from '../../../shared/domain/delivery-run.ts';
import {
  type DispatchHead,
  decodeDispatchHead,
  dropPassedOverrides,
  encodeDispatchHead,
  markDeleteTo,
  newDispatchHead,
  overrideAt,
  resetOverdue,
  withOverride,
} from '../../../shared/domain/dispatch-head.ts';
import { Position } from '../../../shared/domain/position.ts';

const at = (text: string) => Position.parse(text);
const released = (entryId: number, n: number): DeliveryRun => ({
  ledgerId: 1n,
  entryId: BigInt(entryId),
  n,
  deliveries: 1,
  state: { kind: 'released', dueAtMs: 0 },
});

describe('markDeleteTo', () => {
  const head: DispatchHead = {
    ...newDispatchHead(at('1:4'), at('1:20')),
    runs: [released(5, 3), released(8, 4), released(15, 2)],
  };

  it.each([
    { to: '1:3', markDelete: '1:4', runs: 3 },
    { to: '1:4', markDelete: '1:4', runs: 3 },
    { to: '1:7', markDelete: '1:7', runs: 2 },
    { to: '1:10', markDelete: '1:10', runs: 2 },
    { to: '1:11', markDelete: '1:11', runs: 1 },
    { to: '1:16', markDelete: '1:16', runs: 0 },
  ])('to $to: mark-delete $markDelete, $runs runs left (never back, the runs it passed dropped)', (row) => {
    const next = markDeleteTo(head, at(row.to));
    expect(next.markDelete.toString()).toBe(row.markDelete);
    expect(next.runs).toHaveLength(row.runs);
  });

  it('returns the same head when it would not move', () => {
    expect(markDeleteTo(head, at('1:2'))).toBe(head);
  });

  it('pulls the read position along when mark-delete passes it', () => {
    expect(markDeleteTo(head, at('1:30')).readPosition.toString()).toBe('1:31');
    expect(markDeleteTo(head, at('1:10')).readPosition.toString()).toBe('1:20');
  });

  it('starts a replay after the new mark-delete, and drops it once it reaches the read position', () => {
    const replaying: DispatchHead = { ...head, replayFrom: at('1:5') };
    expect(markDeleteTo(replaying, at('1:9')).replayFrom?.toString()).toBe('1:10');
    expect(markDeleteTo(replaying, at('1:19')).replayFrom).toBeUndefined();
    expect(markDeleteTo({ ...head, replayFrom: at('1:12') }, at('1:9')).replayFrom?.toString()).toBe('1:12');
  });
});

describe('resetOverdue', () => {
  const head = newDispatchHead(at('1:4'), at('1:5'));
  it.each([
    { resetting: undefined, nowMs: 10_000, overdue: false },
    { resetting: { end: at('1:9'), untilMs: 5_000 }, nowMs: 4_999, overdue: false },
    { resetting: { end: at('1:9'), untilMs: 5_000 }, nowMs: 5_000, overdue: true },
    { resetting: { end: at('1:9'), untilMs: 5_000 }, nowMs: 9_000, overdue: true },
  ])('until $resetting.untilMs at $nowMs: $overdue', ({ resetting, nowMs, overdue }) => {
    expect(resetOverdue(resetting ? { ...head, resetting } : head, nowMs)).toBe(overdue);
  });
});

describe('encodeDispatchHead / decodeDispatchHead', () => {
  it('keeps the Key_Shared members joining, and leaves them out when there is none', () => {
    const head: DispatchHead = {
      ...newDispatchHead(at('1:4'), at('1:20')),
      joining: [
        { consumerId: 'c-1', atMs: 1_700_000_000_123 },
        { consumerId: 'c-2', atMs: 1_700_000_000_456 },
      ],
    };
    const { joining: _none, ...without } = head;

    expect(decodeDispatchHead(encodeDispatchHead(head)).joining).toEqual(head.joining);
    expect(encodeDispatchHead(without)).not.toContain('kj');
    expect(encodeDispatchHead({ ...without, joining: [] })).not.toContain('kj');
    expect(decodeDispatchHead(encodeDispatchHead(without)).joining).toBeUndefined();
  });

  it('reads a head written before the list: one member joining', () => {
    const text = encodeDispatchHead(newDispatchHead(at('1:4'), at('1:20'))).replace(
      /}$/,
      ',"kj":["c-1",1700000000123]}',
    );

    expect(decodeDispatchHead(text).joining).toEqual([{ consumerId: 'c-1', atMs: 1_700_000_000_123 }]);
  });
});

describe("due overrides (an operator's reschedule of an entry the dispatcher has not reached)", () => {
  const base = newDispatchHead(at('1:4'), at('1:20'));
  const head = withOverride(withOverride(base, { position: at('1:30'), dueAtMs: 5 }), {
    position: at('1:25'),
    dueAtMs: 1_700_000_000_999,
  });

  it('keeps them in position order, one per position, and round-trips them', () => {
    const replaced = withOverride(head, { position: at('1:30'), dueAtMs: 7 });

    expect(head.overrides?.map((o) => o.position.toString())).toEqual(['1:25', '1:30']);
    expect(replaced.overrides?.map((o) => o.dueAtMs)).toEqual([1_700_000_000_999, 7]);
    expect(overrideAt(replaced, at('1:30'))?.dueAtMs).toBe(7);
    expect(overrideAt(replaced, at('1:31'))).toBeUndefined();
    expect(decodeDispatchHead(encodeDispatchHead(head))).toEqual(head);
    expect(encodeDispatchHead(base)).not.toContain('ov');
  });

  it('drops those the read position passed, and the field with the last one', () => {
    const half = dropPassedOverrides({ ...head, readPosition: at('1:26') });
    const none = dropPassedOverrides({ ...head, readPosition: at('1:31') });

    expect(dropPassedOverrides(head)).toBe(head);
    expect(half.overrides?.map((o) => o.position.toString())).toEqual(['1:30']);
    expect(none).not.toHaveProperty('overrides');
    expect(markDeleteTo(head, at('1:27')).overrides?.map((o) => o.position.toString())).toEqual(['1:30']);
  });
});
