import { describe, expect, it } from 'vitest';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type Delivery,
  type EngineContext,
  type KeySharedMember,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import { foldStep } from '../../../../shared/application/engine/fold.ts';
import {
  JOIN_PENDING_MS,
  keySharedJoined,
  keySharedJoinMark,
  MAX_JOINING,
  memberForKey,
} from '../../../../shared/application/engine/key-shared-routing.ts';
import { acknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { releaseConsumerStep } from '../../../../shared/application/engine/release.ts';
import { createSubscriptionCursor } from '../../../../shared/application/engine/subscription-cursor.ts';
import { ServiceUnavailableError } from '../../../../shared/domain/errors.ts';
import { Position } from '../../../../shared/domain/position.ts';
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
  const receive = async (consumerId: string, max = 10, among = members): Promise<Delivery[]> => {
    const result = await dispatch(ctx, {
      cursor,
      consumer: { consumerId, ackTimeoutMs: () => 0, leaseMs: 60_000 },
      max,
      members: among,
    });
    return result.kind === 'delivered' ? [...result.deliveries] : [];
  };
  const ack = (deliveries: readonly Delivery[]) =>
    acknowledge(
      ctx,
      cursor,
      deliveries.map((d) => d.position),
      { byId: false },
    );
  return { clock, ctx, store, cursor, members, keyOf, publish, receive, ack };
}

const positionsOf = (deliveries: readonly Delivery[]) => deliveries.map((d) => d.position.toString());

const positionOf = (stored: string | undefined) => Position.parseStored(stored as string);

/** A key that belongs to `from` among `members` and to `joining` once it joins them. */
function keyMovingTo(members: readonly KeySharedMember[], joining: KeySharedMember, from: string): string {
  const withJoining = [...members, joining];
  for (let i = 0; ; i++) {
    const key = `key-${i}`;
    if (memberForKey(members, key)?.consumerId === from && memberForKey(withJoining, key) === joining)
      return key;
  }
}

/**
 * A port whose every call first and last gives way to other callers a seeded number of times, so
 * that concurrent receives interleave at different points of their calls, as over the network.
 */
function interleaving<T extends object>(port: T, random: Random): T {
  const giveWay = async () => {
    for (let i = random.int(6); i > 0; i--) await Promise.resolve();
  };
  return new Proxy(port, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await giveWay();
        const result = await value.apply(target, args);
        await giveWay();
        return result;
      };
    },
  });
}

/**
 * 3 members, subscribed before 300 messages over 10 keys are published (50 per call), each
 * receiving 20 at a time and acknowledging, concurrently, over ports whose calls interleave as the
 * seed says; the clock moves a little now and then.
 */
async function interleavedRun(seed: number) {
  const random = new Random(seed);
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(1000);
  const store = new InMemoryDispatchStore();
  const ctx: EngineContext = {
    store: interleaving(store, random),
    ledger: interleaving(ledger, random),
    clock,
    limits: DEFAULT_ENGINE_LIMITS,
  };
  const cursor: PartitionCursor = { partition, cursorId: 'c1', type: 'Key_Shared' };
  await ledger.initialize(partition);
  await createSubscriptionCursor(ctx, cursor, 'Earliest');
  const joinedAfter = await keySharedJoinMark(ctx, cursor);
  const ids = ['m0', 'm1', 'm2'];
  const members: KeySharedMember[] = ids.map((consumerId) => ({ consumerId, joinedAfter }));
  const keys = Array.from({ length: 10 }, () => `key-${random.int(2 ** 30).toString(16)}`);
  const order = new Map<string, number>();
  for (let from = 0; from < 300; from += 50) {
    const batch = Array.from({ length: 50 }, (_, i) => ({
      payload: `m${from + i}`,
      key: keys[(from + i) % 10] as string,
      properties: {},
    }));
    const { positions } = await ledger.append(partition, batch, clock.nowMs());
    for (const [i, position] of positions.entries()) order.set(position.toString(), from + i);
  }
  const received = new Map<string, Delivery[]>(ids.map((id) => [id, []]));
  const total = () => [...received.values()].reduce((sum, list) => sum + list.length, 0);
  await Promise.all(
    ids.map(async (consumerId) => {
      for (let round = 0; round < 600 && total() < 300; round++) {
        if (random.chance(0.3)) clock.advance(random.int(3));
        const result = await dispatch(ctx, {
          cursor,
          consumer: { consumerId, ackTimeoutMs: () => 0, leaseMs: 60_000 },
          max: 20,
          members,
        });
        const batch = result.kind === 'delivered' ? [...result.deliveries] : [];
        received.get(consumerId)?.push(...batch);
        await acknowledge(
          ctx,
          cursor,
          batch.map((d) => d.position),
          { byId: false },
        );
      }
    }),
  );
  return { received, order };
}

/** Deliveries of a key that reached a consumer after a later message of that key. */
function overtakenIn(received: ReadonlyMap<string, readonly Delivery[]>, order: ReadonlyMap<string, number>) {
  const overtaken: string[] = [];
  for (const [consumerId, list] of received) {
    const last = new Map<string, number>();
    for (const delivery of list) {
      const key = delivery.entry.key as string;
      const at = order.get(delivery.position.toString()) as number;
      if ((last.get(key) ?? -1) > at) overtaken.push(`${consumerId}: m${at} after m${last.get(key)}`);
      last.set(key, Math.max(last.get(key) ?? -1, at));
    }
  }
  return overtaken;
}

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

  it('a member that takes one stretch of a tracker entry takes no later message of a key it left in another stretch', async () => {
    const w = await world(['a', 'b', 'c']);
    const [kA, kB, kB2, kC] = [w.keyOf('a'), w.keyOf('b'), w.keyOf('b', 1), w.keyOf('c')];
    const [e0, e1, e2, e3] = await w.publish([kA, kB2, kC, kB]);
    const routedAt = w.clock.nowMs();
    // A claim of b's that lost its compare-and-set to a's left the entries it routed in the
    // tracker (they are put before the write), a millisecond earlier than a's.
    await w.store.putTracker(w.cursor.cursorId, [
      { dueAtMs: routedAt - 1, position: positionOf(e0), deliveries: 0, n: 1 },
      { dueAtMs: routedAt - 1, position: positionOf(e2), deliveries: 0, n: 1 },
    ]);
    await w.receive('a'); // holds e0; e1..e3 routed as one run, one tracker entry
    w.clock.advance(1);
    const [, e5] = await w.publish([kA, kB]);
    await w.receive('a'); // e5 routed to b, due a millisecond later
    // c takes e2 through the left-over entry: a's entry now has two stretches of b's, e1 and e3.
    const byC = await w.receive('c');

    const first = await w.receive('b');
    const second = await w.receive('b');

    expect(positionsOf(byC)).toEqual([e2]);
    expect(positionsOf(first)).toEqual([e1]);
    expect(positionsOf(second)).toEqual([e3, e5]);
  });

  it('a member that joined after messages were published gets no message of a key while an earlier one is held by the member it had', async () => {
    const w = await world(['a', 'b']);
    const k = keyMovingTo(w.members, { consumerId: 'c', joinedAfter: Position.of(0n, 0n) }, 'a');
    const [e0, e1, e2, e3] = await w.publish([k, k, k, k]);
    const heldByA = await w.receive('a', 2);
    await w.receive('b'); // e2, e3 routed to a, in the tracker
    const joined: KeySharedMember = {
      consumerId: 'c',
      joinedAfter: await keySharedJoinMark(w.ctx, w.cursor),
    };
    const withC = [...w.members, joined].sort((x, y) => (x.consumerId < y.consumerId ? -1 : 1));
    const [e4, e5] = await w.publish([k, k]);

    const whileHeld = [...(await w.receive('c', 10, withC)), ...(await w.receive('a', 10, withC))];
    await w.ack(heldByA);
    const beforeMark = await w.receive('c', 10, withC);
    await w.ack(beforeMark);
    await foldStep(w.ctx, w.cursor);
    const afterMark = await w.receive('c', 10, withC);

    expect(positionsOf(heldByA)).toEqual([e0, e1]);
    expect(whileHeld).toEqual([]);
    expect(positionsOf(beforeMark)).toEqual([e2, e3]);
    expect(positionsOf(afterMark)).toEqual([e4, e5]);
  });

  it('a member joining: a receive whose member list lacks it hands nothing out until the subscribe has registered it', async () => {
    const w = await world(['a', 'b']);
    const k = keyMovingTo(w.members, { consumerId: 'c', joinedAfter: Position.of(0n, 0n) }, 'a');
    const [e0, e1] = await w.publish([k, k]);
    const joined: KeySharedMember = {
      consumerId: 'c',
      joinedAfter: await keySharedJoinMark(w.ctx, w.cursor, 'c'),
    };
    const withC = [...w.members, joined].sort((x, y) => (x.consumerId < y.consumerId ? -1 : 1));

    const byStaleA = await w.receive('a'); // its member list was read before c registered
    const byC = await w.receive('c', 10, withC);
    await keySharedJoined(w.ctx, w.cursor, 'c');
    const head = (await w.store.readHead(w.cursor.cursorId))?.head;

    expect(byStaleA).toEqual([]);
    expect(positionsOf(byC)).toEqual([e0, e1]);
    expect(head?.joining).toBeUndefined();
  });

  it('two members joining at once: a receive whose list lacks the first hands nothing out while the second has registered', async () => {
    const w = await world(['a', 'b']);
    const far = Position.of(0n, 0n);
    const k = keyMovingTo(
      [...w.members, { consumerId: 'd', joinedAfter: far }],
      { consumerId: 'c', joinedAfter: far },
      'a',
    );
    await w.publish([k, k]);
    // Two subscribes interleaved: c's join mark, d's join mark, d registers and clears its mark; c
    // has not registered yet. Before, the head held one joining member: d's overwrote c's.
    const cMark = await keySharedJoinMark(w.ctx, w.cursor, 'c');
    const dMark = await keySharedJoinMark(w.ctx, w.cursor, 'd');
    const d: KeySharedMember = { consumerId: 'd', joinedAfter: dMark };
    const withD = [...w.members, d].sort((x, y) => (x.consumerId < y.consumerId ? -1 : 1));
    await keySharedJoined(w.ctx, w.cursor, 'd');

    const byStaleA = await w.receive('a', 10, withD); // read after d registered, before c did
    await keySharedJoined(w.ctx, w.cursor, 'c');
    const head = (await w.store.readHead(w.cursor.cursorId))?.head;

    expect(byStaleA.filter((delivery) => delivery.entry.key === k)).toEqual([]);
    expect(cMark.toString()).toBe(dMark.toString());
    expect(head?.joining).toBeUndefined();
  });

  it('joining members are bounded: past MAX_JOINING live marks a subscribe is refused (503), and expired marks make room', async () => {
    const w = await world(['a']);
    for (let i = 0; i < MAX_JOINING; i++) await keySharedJoinMark(w.ctx, w.cursor, `j${i}`);

    await expect(keySharedJoinMark(w.ctx, w.cursor, 'one-more')).rejects.toThrow(ServiceUnavailableError);
    w.clock.advance(JOIN_PENDING_MS + 1);
    await keySharedJoinMark(w.ctx, w.cursor, 'one-more');
    const head = (await w.store.readHead(w.cursor.cursorId))?.head;

    expect(head?.joining?.map((member) => member.consumerId)).toEqual(['one-more']);
  });

  it('a joining member that never registered holds receives back for JOIN_PENDING_MS at most', async () => {
    const w = await world(['a']);
    const [e0] = await w.publish([w.keyOf('a')]);
    await keySharedJoinMark(w.ctx, w.cursor, 'died-subscribing');

    const during = await w.receive('a');
    w.clock.advance(JOIN_PENDING_MS + 1);
    const after = await w.receive('a');

    expect(during).toEqual([]);
    expect(positionsOf(after)).toEqual([e0]);
  });

  it('a member that left: the member its keys move to gets what it held before any later message of those keys', async () => {
    const w = await world(['a', 'b']);
    const k = w.keyOf('a');
    const [e0, e1] = await w.publish([k, k]);
    await w.receive('a');
    const [e2] = await w.publish([k]);
    await releaseConsumerStep(w.ctx, w.cursor, 'a');
    const withoutA = w.members.filter((member) => member.consumerId !== 'a');

    const byB = await w.receive('b', 10, withoutA);

    expect(byB.map((d) => `${d.position}#${d.redeliveryCount}`)).toEqual([`${e0}#1`, `${e1}#1`, `${e2}#0`]);
  });

  it.each([
    36, 78, 86, 120, 140, 142, 246, 290,
  ])('3 members whose store calls interleave (seed %i): 300 messages over 10 keys stay in order per key', async (seed) => {
    const { received, order } = await interleavedRun(seed);

    expect(overtakenIn(received, order)).toEqual([]);
    expect([...received.values()].reduce((sum, list) => sum + list.length, 0)).toBe(300);
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
