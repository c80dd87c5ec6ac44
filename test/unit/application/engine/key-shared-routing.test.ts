import { describe, expect, it } from 'vitest';
import type { KeySharedMember } from '../../../../shared/application/engine/engine-context.ts';
import { memberForKey } from '../../../../shared/application/engine/key-shared-routing.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { Random } from '../../../support/random.ts';

// Issue 21, criterion 6, defect 3 (Pulsar's KeySharedSubscriptionTest): keys spread over the
// members. The ring of FNV-1a points clustered each member's points together: 3 consumers got 246,
// 49 and 305 of 600 messages over 300 keys.

/** An id as the stack makes them (16 random bytes, base64url), from a seeded generator. */
function consumerId(random: Random): string {
  return Buffer.from(Array.from({ length: 16 }, () => random.int(256))).toString('base64url');
}

function members(random: Random, count: number): KeySharedMember[] {
  return Array.from({ length: count }, () => ({
    consumerId: consumerId(random),
    joinedAfter: Position.of(0, 0),
  })).sort((a, b) => (a.consumerId < b.consumerId ? -1 : 1));
}

function shares(list: readonly KeySharedMember[], keys: readonly string[]): number[] {
  const counts = new Map<string, number>();
  for (const key of keys) {
    const member = memberForKey(list, key)?.consumerId as string;
    counts.set(member, (counts.get(member) ?? 0) + 1);
  }
  return list.map((member) => (counts.get(member.consumerId) ?? 0) / keys.length);
}

describe('Key_Shared routing (consistent hashing, 100 Murmur3 points per member)', () => {
  it('300 random keys over 3 members: each gets 20% to 47%, in 200 runs of new members and keys', () => {
    const random = new Random(21);
    const all: number[] = [];
    for (let run = 0; run < 200; run++) {
      const three = members(random, 3);
      const keys = Array.from({ length: 300 }, () => `key-${random.int(2 ** 30).toString(16)}`);
      all.push(...shares(three, keys));
    }
    expect(Math.min(...all)).toBeGreaterThanOrEqual(0.2);
    expect(Math.max(...all)).toBeLessThanOrEqual(0.47);
  });

  it('is the same for the same members and key, whatever the list object', () => {
    const random = new Random(7);
    const list = members(random, 3);
    for (let i = 0; i < 50; i++) {
      expect(memberForKey([...list], `k${i}`)?.consumerId).toBe(memberForKey(list, `k${i}`)?.consumerId);
    }
  });

  it('a member leaving moves only its keys; one joining takes keys from the others only', () => {
    const random = new Random(3);
    const four = members(random, 4);
    const three = four.slice(0, 3);
    const keys = Array.from({ length: 500 }, (_, i) => `key-${i}`);
    for (const key of keys) {
      const before = memberForKey(four, key)?.consumerId;
      const after = memberForKey(three, key)?.consumerId;
      if (before !== four[3]?.consumerId) expect(after).toBe(before);
    }
  });
});
