import { describe, expect, it } from 'vitest';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type DispatchConsumer,
  type EngineContext,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import { foldStep } from '../../../../shared/application/engine/fold.ts';
import {
  acknowledge,
  acknowledgeCumulative,
  negativeAcknowledge,
} from '../../../../shared/application/engine/pending-acks.ts';
import { releaseConsumerStep, rewind } from '../../../../shared/application/engine/release.ts';
import { createSubscriptionCursor } from '../../../../shared/application/engine/subscription-cursor.ts';
import type { Position } from '../../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { ManualClock } from '../../../support/manual-clock.ts';
import { overtakingLedger } from '../../../support/overtaking-ledger.ts';

const partition = TopicName.parse('persistent://public/default/engine');

function world(type: SubscriptionType, ledgerSize = 1000) {
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(ledgerSize);
  const store = new InMemoryDispatchStore();
  const ctx: EngineContext = { store, ledger, clock, limits: DEFAULT_ENGINE_LIMITS };
  const cursor: PartitionCursor = { partition, cursorId: 'c1', type };
  const consumer = (consumerId: string, ackTimeoutMs = 0): DispatchConsumer => ({
    consumerId,
    ackTimeoutMs: () => ackTimeoutMs,
    leaseMs: 60_000,
  });
  const publish = async (count: number, extra: { deliverAtMs?: number; key?: string } = {}) => {
    await ledger.initialize(partition);
    const { positions } = await ledger.append(
      partition,
      Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {}, ...extra })),
      clock.nowMs(),
    );
    return positions;
  };
  const receive = async (consumerId: string, max = 10, ackTimeoutMs = 0) => {
    const result = await dispatch(ctx, { cursor, consumer: consumer(consumerId, ackTimeoutMs), max });
    return result.kind === 'delivered' ? result.deliveries : [];
  };
  return { clock, ledger, store, ctx, cursor, consumer, publish, receive };
}

const ids = (deliveries: readonly { position: Position }[]) => deliveries.map((d) => d.position.toString());

describe('delivery engine flows (in memory)', () => {
  it('hands out a backlog in order, once, with count 0, and acks fold into mark-delete', async () => {
    const w = world('Shared');
    const published = await w.publish(25);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const first = await w.receive('a', 10);
    const second = await w.receive('b', 10);
    const third = await w.receive('a', 10);
    expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(published.map(String));
    expect([...first, ...second, ...third].every((d) => d.redeliveryCount === 0)).toBe(true);
    expect(await w.receive('a', 10)).toEqual([]);
    await acknowledge(w.ctx, w.cursor, published, { byId: false });
    const folded = await foldStep(w.ctx, w.cursor);
    expect(folded.markDelete?.toString()).toBe(published[24]?.toString());
  });

  it('a Latest subscription sees only what is published after it', async () => {
    const w = world('Shared');
    await w.publish(3);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Latest');
    const later = await w.publish(2);
    expect(ids(await w.receive('a', 10))).toEqual(later.map(String));
  });

  it('a nack comes back after the backoff with count 1, never before', async () => {
    const w = world('Shared');
    const [p] = await w.publish(1);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const [d] = await w.receive('a');
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: [{ position: p as Position, redeliveryCount: d?.redeliveryCount ?? 0 }],
      delayMs: () => 5_000,
    });
    w.clock.advance(4_999);
    expect(await w.receive('b')).toEqual([]);
    w.clock.advance(1);
    const again = await w.receive('b');
    expect(again.map((x) => [x.position.toString(), x.redeliveryCount])).toEqual([[p?.toString(), 1]]);
  });

  it('an acknowledged entry is never handed out, also when acked by id before dispatch', async () => {
    const w = world('Shared');
    const published = await w.publish(5);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    await acknowledge(w.ctx, w.cursor, [published[1] as Position, published[3] as Position], { byId: true });
    expect(ids(await w.receive('a', 10))).toEqual([0, 2, 4].map((i) => published[i]?.toString()));
  });

  it('a closed consumer’s entries come back with count 1; entries it was never handed keep 0', async () => {
    const w = world('Shared');
    const published = await w.publish(6);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const got = await w.receive('a', 3);
    await releaseConsumerStep(w.ctx, w.cursor, 'a');
    const next = await w.receive('b', 10);
    expect(next.map((d) => [d.position.toString(), d.redeliveryCount])).toEqual([
      ...got.map((d) => [d.position.toString(), 1]),
      ...published.slice(3).map((p) => [p.toString(), 0]),
    ]);
  });

  it('ack timeout redelivers what was not acknowledged', async () => {
    const w = world('Shared');
    await w.publish(2);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const got = await w.receive('a', 10, 1_000);
    await acknowledge(w.ctx, w.cursor, [got[0]?.position as Position], { byId: false });
    w.clock.advance(1_000);
    const again = await w.receive('b', 10, 1_000);
    expect(again.map((d) => [d.position.toString(), d.redeliveryCount])).toEqual([
      [got[1]?.position.toString(), 1],
    ]);
  });

  it('Failover: the standby takes over after the lease and gets the silent owner’s entries first, in order', async () => {
    const w = world('Failover');
    const published = await w.publish(10);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const owned = await w.receive('owner', 5);
    expect(ids(owned)).toEqual(published.slice(0, 5).map(String));
    expect(await dispatch(w.ctx, { cursor: w.cursor, consumer: w.consumer('standby'), max: 10 })).toEqual({
      kind: 'standby',
    });
    w.clock.advance(60_001);
    const taken: string[] = [];
    for (let i = 0; i < 4; i++) taken.push(...ids(await w.receive('standby', 10)));
    expect(taken).toEqual(published.map(String));
    await expect(w.receive('owner', 10)).rejects.toThrow(/replaced/);
    await expect(acknowledgeCumulative(w.ctx, w.cursor, 'owner', published[4] as Position)).rejects.toThrow();
    await acknowledgeCumulative(w.ctx, w.cursor, 'standby', published[9] as Position);
  });

  it('Exclusive: redeliverUnacknowledged replays every unacknowledged entry in order with count 1', async () => {
    const w = world('Exclusive');
    const published = await w.publish(4);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    await w.receive('x', 10);
    await acknowledgeCumulative(w.ctx, w.cursor, 'x', published[0] as Position);
    await rewind(w.ctx, w.cursor, { consumerId: 'x' });
    const replayed = await w.receive('x', 10);
    expect(replayed.map((d) => [d.position.toString(), d.redeliveryCount])).toEqual(
      published.slice(1).map((p) => [p.toString(), 1]),
    );
  });

  it('delayed messages wait for deliverAt on Shared; Exclusive ignores deliverAt', async () => {
    const shared = world('Shared');
    await createSubscriptionCursor(shared.ctx, shared.cursor, 'Earliest');
    const [late] = await shared.publish(1, { deliverAtMs: shared.clock.nowMs() + 10_000 });
    const [now] = await shared.publish(1);
    expect(ids(await shared.receive('a'))).toEqual([now?.toString()]);
    shared.clock.advance(10_000);
    expect(ids(await shared.receive('a'))).toEqual([late?.toString()]);
  });

  it('spills runs to pages and still finds them (many small receives)', async () => {
    const w = world('Shared');
    const published = await w.publish(60);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const got = [];
    for (let i = 0; i < 60; i++) got.push(...(await w.receive(`c${i % 3}`, 1)));
    expect(ids(got)).toEqual(published.map(String));
    for (const c of ['c0', 'c1', 'c2']) await releaseConsumerStep(w.ctx, w.cursor, c);
    const again = [];
    for (let i = 0; i < 10; i++) again.push(...(await w.receive('z', 10)));
    expect(again.map((d) => d.redeliveryCount)).toEqual(published.map(() => 1));
    expect(w.store.usage.largestHeadBytes).toBeLessThan(1500);
  });

  it('crosses ledger rollovers', async () => {
    const w = world('Shared', 7);
    const published = await w.publish(20);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const got = [];
    for (let i = 0; i < 5; i++) got.push(...(await w.receive('a', 10)));
    expect(ids(got)).toEqual(published.map(String));
  });
});

describe('the unacknowledged cap (I7)', () => {
  it('pauses first deliveries at maxUnackedPerSubscription and goes on once acknowledgements fold', async () => {
    const w = world('Shared');
    const ctx: EngineContext = {
      ...w.ctx,
      limits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerSubscription: 5 },
    };
    const published = await w.publish(12);
    await createSubscriptionCursor(ctx, w.cursor, 'Earliest');
    const receive = async (max: number) => {
      const result = await dispatch(ctx, { cursor: w.cursor, consumer: w.consumer('a'), max });
      return result.kind === 'delivered' ? result.deliveries : [];
    };
    const first = await receive(10);
    expect(ids(first)).toEqual(published.slice(0, 5).map(String));
    expect(await receive(10)).toEqual([]);
    await acknowledge(
      ctx,
      w.cursor,
      first.map((d) => d.position),
      { byId: false },
    );
    expect(ids(await receive(10))).toEqual(published.slice(5, 10).map(String));
  });

  it('blocks a Shared consumer at maxUnackedPerConsumer while the others go on, and unblocks it by its acks', async () => {
    const w = world('Shared');
    const ctx: EngineContext = {
      ...w.ctx,
      limits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 6 },
    };
    const published = await w.publish(30);
    await createSubscriptionCursor(ctx, w.cursor, 'Earliest');
    const receive = async (consumerId: string, max: number) =>
      dispatch(ctx, { cursor: w.cursor, consumer: w.consumer(consumerId), max });
    const delivered = (result: Awaited<ReturnType<typeof receive>>) =>
      result.kind === 'delivered' ? result.deliveries : [];

    // a: 4, then at most 2 more (its cap), then blocked; b is not held back by a.
    const a1 = delivered(await receive('a', 4));
    const a2 = delivered(await receive('a', 10));
    expect(ids([...a1, ...a2])).toEqual(published.slice(0, 6).map(String));
    expect(await receive('a', 10)).toEqual({ kind: 'blocked' });
    const b1 = delivered(await receive('b', 6));
    expect(ids(b1)).toEqual(published.slice(6, 12).map(String));
    expect(await receive('b', 1)).toEqual({ kind: 'blocked' });

    // a acknowledges 3 of its 6 by id: 3 more for a, b still blocked.
    await acknowledge(
      ctx,
      w.cursor,
      a1.slice(0, 3).map((d) => d.position),
      { byId: true },
    );
    expect(ids(delivered(await receive('a', 10)))).toEqual(published.slice(12, 15).map(String));
    expect(await receive('a', 10)).toEqual({ kind: 'blocked' });
    expect(await receive('b', 10)).toEqual({ kind: 'blocked' });
  });

  it('counts nothing while the window is shorter than the per-consumer cap', async () => {
    const w = world('Shared');
    let counted = 0;
    const ctx: EngineContext = {
      ...w.ctx,
      limits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 20 },
      unackedByConsumer: async () => {
        counted++;
        return new Map();
      },
    };
    await w.publish(30);
    await createSubscriptionCursor(ctx, w.cursor, 'Earliest');
    const receive = async (max: number) =>
      dispatch(ctx, { cursor: w.cursor, consumer: w.consumer('a'), max });
    await receive(10);
    await receive(10);
    expect(counted).toBe(0); // window 20 after these: the next receive counts
    await receive(10);
    expect(counted).toBe(1);
  });

  it('on Exclusive, pauses the one consumer at maxUnackedPerConsumer (the window bounds it)', async () => {
    const w = world('Exclusive');
    const ctx: EngineContext = {
      ...w.ctx,
      limits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 4 },
    };
    const published = await w.publish(10);
    await createSubscriptionCursor(ctx, w.cursor, 'Earliest');
    const receive = async (max: number) => {
      const result = await dispatch(ctx, { cursor: w.cursor, consumer: w.consumer('a'), max });
      return result.kind === 'delivered' ? result.deliveries : [];
    };
    expect(ids(await receive(10))).toEqual(published.slice(0, 4).map(String));
    expect(await receive(10)).toEqual([]);
    await acknowledgeCumulative(ctx, w.cursor, 'a', published[1] as Position);
    expect(ids(await receive(10))).toEqual(published.slice(4, 6).map(String));
  });

  describe('a Shared claim lost to another consumer', () => {
    /** `b`'s dispatch, with `a`'s whole receive run between b's entries read and b's claim. */
    async function overtaken(w: ReturnType<typeof world>) {
      const taken: { position: Position }[] = [];
      const ledger = overtakingLedger(w.ctx.ledger, async () => taken.push(...(await w.receive('a', 10))));
      const result = await dispatch(
        { ...w.ctx, ledger },
        { cursor: w.cursor, consumer: w.consumer('b'), max: 10 },
      );
      return { result, taken };
    }

    it('hands out nothing and says so (contended), leaving the next entries to its next look', async () => {
      const w = world('Shared');
      const published = await w.publish(20);
      await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');

      const { result, taken } = await overtaken(w);

      expect(ids(taken)).toEqual(published.slice(0, 10).map(String));
      expect(result).toMatchObject({ kind: 'delivered', deliveries: [], caughtUp: false, contended: true });
      // Nothing was recorded as b's: its next look takes the next ten, each a first delivery.
      const next = await w.receive('b', 10);
      expect(ids(next)).toEqual(published.slice(10, 20).map(String));
      expect(next.map((d) => d.redeliveryCount)).toEqual(Array(10).fill(0));
    });

    it('still retries on Failover (as on Exclusive), whose one active consumer races only itself', async () => {
      const w = world('Failover');
      const published = await w.publish(20);
      await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
      expect(ids(await w.receive('b', 1))).toEqual(published.slice(0, 1).map(String));

      // The active consumer's own second receive overtakes it: the retry goes on from there.
      const overtaking = { ...w.ctx, ledger: overtakingLedger(w.ctx.ledger, () => w.receive('b', 4)) };
      const result = await dispatch(overtaking, { cursor: w.cursor, consumer: w.consumer('b'), max: 5 });

      expect(result).toMatchObject({ kind: 'delivered', contended: false });
      expect(ids(result.kind === 'delivered' ? result.deliveries : [])).toEqual(
        published.slice(5, 10).map(String),
      );
    });

    it('takes its own claim applied twice (an SDK retry after a timeout) for its own, and loses nothing', async () => {
      const w = world('Shared');
      const published = await w.publish(20);
      await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
      // The first compare-and-set applies, then its answer is lost and the retry meets its own write.
      const store = w.store;
      let duplicated = false;
      const retried: EngineContext = {
        ...w.ctx,
        store: new Proxy(store, {
          get(target, property, receiver) {
            if (property !== 'casHead') return Reflect.get(target, property, receiver);
            return async (...args: Parameters<typeof store.casHead>) => {
              const written = await target.casHead(...args);
              if (duplicated || !written.ok) return written;
              duplicated = true;
              return target.casHead(...args);
            };
          },
        }),
      };

      const result = await dispatch(retried, { cursor: w.cursor, consumer: w.consumer('b'), max: 10 });

      // The retry is refused by its own write: the store answers success, and b gets what it claimed.
      expect(duplicated).toBe(true);
      expect(result).toMatchObject({ kind: 'delivered', contended: false });
      expect(ids(result.kind === 'delivered' ? result.deliveries : [])).toEqual(
        published.slice(0, 10).map(String),
      );
      expect(ids(await w.receive('b', 10))).toEqual(published.slice(10, 20).map(String));
    });
  });
});
