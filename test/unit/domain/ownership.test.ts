import { describe, expect, it } from 'vitest';
import { type DispatchHead, newDispatchHead } from '../../../shared/domain/dispatch-head.ts';
import { ConsumerFencedError, decideOwnership } from '../../../shared/domain/ownership.ts';
import { Position } from '../../../shared/domain/position.ts';

const at = (text: string) => Position.parse(text);
const leaseMs = 30_000;
const nowMs = 100_000;
const head = (changes: Partial<DispatchHead> = {}): DispatchHead => ({
  ...newDispatchHead(at('1:4'), at('1:5')),
  ...changes,
});

describe('decideOwnership (Exclusive/Failover)', () => {
  it('a consumer finding no owner takes over: a new epoch and its lease', () => {
    const decision = decideOwnership(head(), { consumerId: 'a', leaseMs }, 'Failover', nowMs);
    expect(decision.kind).toBe('takeover');
    if (decision.kind !== 'takeover') return;
    expect(decision.head.epoch).toBe(1);
    expect(decision.head.owner).toEqual({ consumerId: 'a', leaseUntilMs: nowMs + leaseMs });
    expect(decision.head.replayFrom).toBeUndefined();
  });

  it('a takeover after a lapsed owner fences it and replays from mark-delete what it was handed', () => {
    const lapsed = head({ readPosition: at('1:9'), owner: { consumerId: 'a', leaseUntilMs: nowMs - 1 } });
    const decision = decideOwnership(lapsed, { consumerId: 'b', leaseMs }, 'Exclusive', nowMs);
    if (decision.kind !== 'takeover') throw new Error(`expected a takeover, got ${decision.kind}`);
    expect(decision.head.fenced).toEqual(['a']);
    expect(decision.head.replayFrom?.toString()).toBe('1:5');
  });

  it('remembers the last four replaced owners only', () => {
    const lapsed = head({ fenced: ['p', 'q', 'r', 's'], owner: { consumerId: 't', leaseUntilMs: 0 } });
    const decision = decideOwnership(lapsed, { consumerId: 'u', leaseMs }, 'Failover', nowMs);
    if (decision.kind !== 'takeover') throw new Error(`expected a takeover, got ${decision.kind}`);
    expect(decision.head.fenced).toEqual(['q', 'r', 's', 't']);
  });

  it.each([
    { leftMs: leaseMs, renews: false },
    { leftMs: leaseMs - 5_000, renews: false },
    { leftMs: leaseMs - 5_001, renews: true },
  ])('the owner with $leftMs ms of lease left renews it: $renews', ({ leftMs, renews }) => {
    const owned = head({ owner: { consumerId: 'a', leaseUntilMs: nowMs + leftMs } });
    const decision = decideOwnership(owned, { consumerId: 'a', leaseMs }, 'Failover', nowMs);
    expect(decision.kind).toBe('owner');
    expect(decision.kind === 'owner' && decision.renewal !== undefined).toBe(renews);
  });

  it('with a live owner, a Failover consumer waits and an Exclusive one is refused', () => {
    const owned = head({ owner: { consumerId: 'a', leaseUntilMs: nowMs + 1 } });
    expect(decideOwnership(owned, { consumerId: 'b', leaseMs }, 'Failover', nowMs).kind).toBe('standby');
    expect(() => decideOwnership(owned, { consumerId: 'b', leaseMs }, 'Exclusive', nowMs)).toThrow(
      ConsumerFencedError,
    );
  });

  it('a replaced owner is refused, even when no one owns the subscription now', () => {
    expect(() =>
      decideOwnership(head({ fenced: ['a'] }), { consumerId: 'a', leaseMs }, 'Failover', nowMs),
    ).toThrow(ConsumerFencedError);
  });
});
