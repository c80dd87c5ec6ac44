import { describe, expect, it } from 'vitest';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type Delivery,
  type EngineContext,
  type KeySharedMember,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import { keySharedJoinMark, memberForKey } from '../../../../shared/application/engine/key-shared-routing.ts';
import { acknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { createSubscriptionCursor } from '../../../../shared/application/engine/subscription-cursor.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { ManualClock } from '../../../support/manual-clock.ts';
import { Random } from '../../../support/random.ts';

// Issue 21, criterion 6, defect 3 (Pulsar's KeySharedSubscriptionTest): per-key order per consumer.
// An entry routed to another member waits in the tracker; its member must take it before any later
// message of its key, and a member takes its own entries out of a routed run shared with others.

const partition = TopicName.parse('persistent://public/default/key-shared');

async function world(ids: readonly string[]) {
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(1000);
  const store = new InMemoryDispatchStore();
  const ctx: EngineContext = { store, ledger, clock, limits: DEFAULT_ENGINE_LIMITS };
  const cursor: PartitionCursor = { partition, cursorId: 'c1', type: 'Key_Shared' };
  await ledger.initialize(partition);
  await createSubscriptionCursor(ctx, cursor, 'Earliest');
  const joinedAfter = await keySharedJoinMark(ctx, cursor);
  const members: KeySharedMember[] = ids.map((consumerId) => ({ consumerId, joinedAfter }));
  /** A key that routes to `consumerId`, the `n`-th such. */
  const keyOf = (consumerId: string, n = 0) => {
    const found: string[] = [];
    for (let i = 0; found.length <= n; i++) {
      if (memberForKey(members, `key-${i}`)?.consumerId === consumerId) found.push(`key-${i}`);
    }
    return found[n] as string;
  };
  const publish = async (keys: readonly string[]) => {
    const { positions } = await ledger.append(
      partition,
      keys.map((key, i) => ({ payload: `${key}/${i}`, key, properties: {} })),
      clock.nowMs(),
    );
    return positions.map(String);
  };
  const receive = async (consumerId: string, max = 10): Promise<Delivery[]> => {
    const result = await dispatch(ctx, {
      cursor,
      consumer: { consumerId, ackTimeoutMs: () => 0, leaseMs: 60_000 },
      max,
      members,
    });
    return result.kind === 'delivered' ? [...result.deliveries] : [];
  };
  return { clock, ctx, cursor, keyOf, publish, receive };
}

const positionsOf = (deliveries: readonly Delivery[]) => deliveries.map((d) => d.position.toString());

describe('Key_Shared: per-key order per consumer', () => {
  it('a member takes its entries out of a routed run that starts with another member’s, before its later ones', async () => {
    const w = await world(['a', 'b', 'c']);
    const [kA, kB, kC] = [w.keyOf('a'), w.keyOf('b'), w.keyOf('c')];
    const [e0, e1, e2, e3] = await w.publish([kC, kB, kA, kB]);

    const byA = await w.receive('a');
    const byB = await w.receive('b');
    const byC = await w.receive('c');

    expect(positionsOf(byA)).toEqual([e2]);
    expect(positionsOf(byB)).toEqual([e1, e3]);
    expect(positionsOf(byC)).toEqual([e0]);
  });

  it('a member whose routed entries did not all fit its receive gets no first delivery of a later one', async () => {
    const w = await world(['a', 'b']);
    const [kA, kB] = [w.keyOf('a'), w.keyOf('b')];
    const [, e1, e2] = await w.publish([kA, kB, kB]);
    await w.receive('a');
    const [e3] = await w.publish([kB]);

    const first = await w.receive('b', 1);
    const second = await w.receive('b', 10);

    expect(positionsOf(first)).toEqual([e1]);
    expect(positionsOf(second)).toEqual([e2, e3]);
  });

  it('a member whose routed entries lie past the due entries a pickup reads gets no first delivery until it reaches them', async () => {
    const w = await world(['a', 'b', 'c']);
    const [kA, kB, kC] = [w.keyOf('a'), w.keyOf('b'), w.keyOf('c')];
    // 60 entries of c's (who does not receive yet), each routed by a's claims as a run of its own.
    await w.publish(Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? kC : kA)));
    for (let i = 0; i < 10; i++) await w.receive('a');
    w.clock.advance(1);
    const [b1, , b2] = await w.publish([kB, kA, kB]);
    await w.receive('a');
    const [b3] = await w.publish([kB]);

    const whileBehind = await w.receive('b');
    for (let i = 0; i < 8; i++) await w.receive('c');
    const after = [...(await w.receive('b')), ...(await w.receive('b'))];

    expect(whileBehind).toEqual([]);
    expect(positionsOf(after)).toEqual([b1, b2, b3]);
  });

  it('3 members receiving 20 at a time, concurrently, with acks: 600 messages over 300 keys stay in order per key', async () => {
    const ids = ['m0', 'm1', 'm2'];
    const w = await world(ids);
    const random = new Random(42);
    const keys = Array.from({ length: 300 }, () => `key-${random.int(2 ** 30).toString(16)}`);
    const order = new Map<string, number>();
    for (let from = 0; from < 600; from += 50) {
      const batch = Array.from({ length: 50 }, (_, i) => keys[(from + i) % 300] as string);
      for (const [i, position] of (await w.publish(batch)).entries()) order.set(position, from + i);
    }
    const received = new Map<string, Delivery[]>(ids.map((id) => [id, []]));
    const total = () => [...received.values()].reduce((sum, list) => sum + list.length, 0);
    await Promise.all(
      ids.map(async (id) => {
        for (let round = 0; round < 400 && total() < 600; round++) {
          const batch = await w.receive(id, 20);
          received.get(id)?.push(...batch);
          await acknowledge(
            w.ctx,
            w.cursor,
            batch.map((d) => d.position),
            { byId: false },
          );
        }
      }),
    );

    const overtaken: string[] = [];
    const owners = new Map<string, Set<string>>();
    for (const [id, list] of received) {
      const last = new Map<string, number>();
      for (const delivery of list) {
        const key = delivery.entry.key as string;
        const at = order.get(delivery.position.toString()) as number;
        if ((last.get(key) ?? -1) > at) overtaken.push(`${key}@${at}`);
        last.set(key, Math.max(last.get(key) ?? -1, at));
        owners.set(key, (owners.get(key) ?? new Set()).add(id));
      }
    }
    expect(total()).toBe(600);
    expect(overtaken).toEqual([]);
    expect([...owners.values()].filter((set) => set.size > 1)).toEqual([]);
    for (const list of received.values()) {
      expect(list.length).toBeGreaterThanOrEqual(120);
      expect(list.length).toBeLessThanOrEqual(282);
    }
  });
});
