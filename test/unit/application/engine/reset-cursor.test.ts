import { describe, expect, it } from 'vitest';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type EngineContext,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import { foldStep } from '../../../../shared/application/engine/fold.ts';
import { acknowledge, negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import {
  markDeleteForward,
  RESET_TIMEOUT_MS,
  resetCursor,
} from '../../../../shared/application/engine/reset-cursor.ts';
import { createSubscriptionCursor } from '../../../../shared/application/engine/subscription-cursor.ts';
import { firstPublishedAtOrAfter } from '../../../../shared/application/topics/find-by-publish-time.ts';
import type { Position } from '../../../../shared/domain/position.ts';
import { positionBefore } from '../../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { DispatchStore } from '../../../../shared/ports/dispatch-store.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const partition = TopicName.parse('persistent://public/default/reset');

function world(type: SubscriptionType, ledgerSize = 1000) {
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(ledgerSize);
  const store = new InMemoryDispatchStore();
  const ctx: EngineContext = { store, ledger, clock, limits: DEFAULT_ENGINE_LIMITS };
  const cursor: PartitionCursor = { partition, cursorId: 'c1', type };
  const publish = async (count: number) => {
    await ledger.initialize(partition);
    const { positions } = await ledger.append(
      partition,
      Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      clock.nowMs(),
    );
    return positions;
  };
  const receive = async (consumerId: string, max = 100) => {
    const result = await dispatch(ctx, {
      cursor,
      consumer: { consumerId, ackTimeoutMs: () => 0, leaseMs: 60_000 },
      max,
    });
    return result.kind === 'delivered' ? result.deliveries : [];
  };
  return { clock, ledger, store, ctx, cursor, publish, receive };
}

const ids = (deliveries: readonly { position: Position }[]) => deliveries.map((d) => d.position.toString());

describe('reset cursor on the delivery engine', () => {
  it.each<SubscriptionType>([
    'Shared',
    'Key_Shared',
    'Exclusive',
    'Failover',
  ])('%s: a rewind hands out every entry from the reset position again, in order, as first deliveries', async (type) => {
    const w = world(type);
    const published = await w.publish(20);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const first = await w.receive('a', 10);
    expect(ids(first)).toEqual(published.slice(0, 10).map(String));
    await acknowledge(w.ctx, w.cursor, published.slice(0, 6), { byId: false });
    await foldStep(w.ctx, w.cursor);
    expect((await w.store.readHead('c1'))?.head.markDelete.toString()).toBe(published[5]?.toString());

    const move = await resetCursor(w.ctx, w.cursor, published[2] as Position);

    expect(move.newMarkDeletePosition.toString()).toBe(published[1]?.toString());
    const again = await w.receive('a', 100);
    expect(ids(again)).toEqual(published.slice(2).map(String));
    expect(again.every((d) => d.redeliveryCount === 0)).toBe(true);
    const head = (await w.store.readHead('c1'))?.head;
    expect(head?.resetting).toBeUndefined();
    expect(head?.markDelete.toString()).toBe(published[1]?.toString());
  });

  it('a forward reset acknowledges what it passes and clears the acknowledgements after it', async () => {
    const w = world('Shared');
    const published = await w.publish(10);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    await acknowledge(w.ctx, w.cursor, [published[8] as Position], { byId: true });
    await resetCursor(w.ctx, w.cursor, published[6] as Position);
    // 8 was acknowledged by id before the reset: Pulsar's reset clears individual acks after it.
    expect(ids(await w.receive('a'))).toEqual(published.slice(6).map(String));
  });

  it('an acknowledgement made after the reset by a consumer that held the entry before counts (I1)', async () => {
    const w = world('Shared');
    const published = await w.publish(6);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const held = await w.receive('a', 6);
    await resetCursor(w.ctx, w.cursor, published[0] as Position);
    await acknowledge(w.ctx, w.cursor, [held[3]?.position as Position], { byId: false });
    expect(ids(await w.receive('b'))).toEqual(published.filter((_, i) => i !== 3).map(String));
  });

  it('drops pending redeliveries: a nacked entry comes back once, as a first delivery', async () => {
    const w = world('Shared');
    const published = await w.publish(3);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const held = await w.receive('a');
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: held.map((d) => ({ position: d.position })),
      delayMs: () => 1_000,
    });
    await resetCursor(w.ctx, w.cursor, published[0] as Position);
    w.clock.advance(5_000);
    const again = [...(await w.receive('b')), ...(await w.receive('b'))];
    expect(ids(again)).toEqual(published.map(String));
    expect(again.map((d) => d.redeliveryCount)).toEqual([0, 0, 0]);
    expect(await w.store.dueTracker('c1', Number.MAX_SAFE_INTEGER, 100)).toEqual([]);
  });

  it('a reset whose resetter died after its first write is finished by the next dispatch once overdue', async () => {
    const w = world('Shared');
    const published = await w.publish(5);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    await w.receive('a');
    await acknowledge(w.ctx, w.cursor, published, { byId: false });
    // The resetter dies right after its first head write.
    const dying: DispatchStore = new Proxy(w.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (property === 'casPage' || property === 'dueTracker') {
          return async () => {
            throw new Error('the resetter died');
          };
        }
        return value.bind(target);
      },
    });
    await expect(resetCursor({ ...w.ctx, store: dying }, w.cursor, published[0] as Position)).rejects.toThrow(
      'the resetter died',
    );
    expect((await w.store.readHead('c1'))?.head.resetting).toBeDefined();
    // Until it is overdue nothing is dispatched (the pages still say 0..4 are acknowledged).
    expect(await w.receive('b')).toEqual([]);
    expect((await foldStep(w.ctx, w.cursor)).markDelete).toBeUndefined();
    w.clock.advance(RESET_TIMEOUT_MS);
    expect(ids(await w.receive('b'))).toEqual(published.map(String));
  });

  it('refuses (412) a rewind over more pages than one call may rewrite', async () => {
    const w = world('Shared', 1_000_000);
    const published = await w.publish(1);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const far = await w.publish(600_000);
    await resetCursor(w.ctx, w.cursor, far[far.length - 1] as Position);
    await w.receive('a', 1);
    await expect(resetCursor(w.ctx, w.cursor, published[0] as Position)).rejects.toThrow(
      /would rewrite more than 5000 cursor pages/,
    );
    // 600,000 in-memory publishes: about 1 s alone, several on a loaded machine.
  }, 20_000);

  it('mark-delete forward (skip_all, expiry) keeps individual acks after it and never moves back', async () => {
    const w = world('Exclusive');
    const published = await w.publish(10);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    await w.receive('a', 3);
    await acknowledge(w.ctx, w.cursor, [published[7] as Position], { byId: true });
    const moved = await markDeleteForward(w.ctx, w.cursor, published[4] as Position);
    expect(moved.newMarkDeletePosition.toString()).toBe(published[4]?.toString());
    expect(moved.newReadPosition.toString()).toBe(published[5]?.toString());
    const back = await markDeleteForward(w.ctx, w.cursor, published[1] as Position);
    expect(back.newMarkDeletePosition.toString()).toBe(published[4]?.toString());
    expect(ids(await w.receive('a'))).toEqual([5, 6, 8, 9].map((i) => published[i]?.toString()));
  });

  it('a dry run changes nothing', async () => {
    const w = world('Shared');
    const published = await w.publish(4);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const before = await w.store.readHead('c1');
    const move = await resetCursor(w.ctx, w.cursor, published[2] as Position, { dryRun: true });
    expect(move.newReadPosition.toString()).toBe(published[2]?.toString());
    expect(await w.store.readHead('c1')).toEqual(before);
  });
});

describe('firstPublishedAtOrAfter', () => {
  it('finds the first entry published at or after a time, across ledgers, else the end of the log', async () => {
    const w = world('Shared', 7);
    const batches: Position[][] = [];
    for (let i = 0; i < 6; i++) {
      batches.push(await w.publish(3));
      w.clock.advance(1_000);
    }
    const t0 = 1_000_000;
    expect((await firstPublishedAtOrAfter(w.ledger, partition, 0)).toString()).toBe(
      batches[0]?.[0]?.toString(),
    );
    for (let i = 0; i < 6; i++) {
      const found = await firstPublishedAtOrAfter(w.ledger, partition, t0 + i * 1_000);
      expect(found.toString()).toBe(batches[i]?.[0]?.toString());
      const between = await firstPublishedAtOrAfter(w.ledger, partition, t0 + i * 1_000 - 500);
      expect(between.toString()).toBe(batches[i]?.[0]?.toString());
    }
    const end = await firstPublishedAtOrAfter(w.ledger, partition, t0 + 10_000);
    const last = batches[5]?.[2] as Position;
    expect(positionBefore(end).toString()).toBe(last.toString());
  });
});
