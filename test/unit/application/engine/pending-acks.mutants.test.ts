import { describe, expect, it } from 'vitest';
import {
  acknowledge,
  acknowledgeCumulative,
  isPositionAcknowledged,
  negativeAcknowledge,
} from '../../../../shared/application/engine/pending-acks.ts';
import { PreconditionFailedError, ServiceUnavailableError } from '../../../../shared/domain/errors.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { engineWorld, idsOf, RacedStore, recordingDeadLetter } from '../../../support/engine-world.ts';

// A nack's backoff is judged for the count the entry was handed out with (PIP-106: the first
// delivery's nack waits the backoff for count 0), mutation testing, issue 21 criterion 5.

describe('negativeAcknowledge', () => {
  it('asks the backoff for the count each entry was handed out with, and redelivers after it', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(1);
    await w.subscribe();
    const asked: number[] = [];
    // Pulsar's MultiplierRedeliveryBackoff: 1 s, then 2 s, then 4 s.
    const delayMs = (count: number) => {
      asked.push(count);
      return 1_000 * 2 ** count;
    };
    const nack = async () => {
      const [held] = await w.receive('a', 1);
      if (!held) throw new Error('nothing received');
      const result = await negativeAcknowledge(w.ctx, {
        cursor: w.cursor,
        consumerId: 'a',
        items: [{ position: held.position }],
        delayMs,
      });
      return { held, dueAtMs: result.dueAtMs };
    };
    const first = await nack();
    expect(first.held.redeliveryCount).toBe(0);
    expect(first.dueAtMs).toEqual([w.clock.nowMs() + 1_000]);
    w.clock.advance(999);
    expect(await w.receive('a', 1)).toEqual([]);
    w.clock.advance(1);
    const second = await nack();
    expect(second.held.redeliveryCount).toBe(1);
    expect(second.dueAtMs).toEqual([w.clock.nowMs() + 2_000]);
    expect(asked).toEqual([0, 1]);
  });
});

describe('negativeAcknowledge of several runs on one page', () => {
  it('releases them in one write of the page: no race lost to its own write', async () => {
    // Two runs at most in the head: the older runs move to their page.
    const w = engineWorld({ type: 'Shared', limits: { maxHeadRuns: 2 } });
    await w.publish(8);
    await w.subscribe();
    const held = [];
    // One receive a run: 8 runs, 6 of them on the page.
    for (let i = 0; i < 8; i++) held.push(...(await w.receive('a', 1)));
    expect(held).toHaveLength(8);
    const failedBefore = w.store.usage.failedConditionalWrites;
    const writesBefore = w.store.usage.writes;

    const result = await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: held.map(({ position }) => ({ position })),
      delayMs: () => 0,
    });

    expect(result.released.map(String).sort()).toEqual(held.map(({ position }) => String(position)).sort());
    expect(w.store.usage.failedConditionalWrites - failedBefore).toBe(0);
    // A tracker entry each, the page and the head once each, the head's due time for the page's.
    expect(w.store.usage.writes - writesBefore).toBeLessThanOrEqual(held.length + 3);
    const again = await w.receive('a', 10);
    expect(again.map(({ position }) => String(position)).sort()).toEqual(
      held.map(({ position }) => String(position)).sort(),
    );
  });
});

describe('acknowledge by id', () => {
  it('raises the early-ack mark to the highest position at or after the read position only', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(10);
    await w.subscribe();
    await w.receive('a', 3);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 1)], { byId: true });
    expect((await w.store.readHead('c1'))?.aheadAck).toBeUndefined();
    await acknowledge(
      w.ctx,
      w.cursor,
      [Position.of(1, 7), Position.of(1, 2), Position.of(1, 8), Position.of(1, 5)],
      {
        byId: true,
      },
    );
    expect((await w.store.readHead('c1'))?.aheadAck?.toString()).toBe('1:8');
    expect(await isPositionAcknowledged(w.ctx, w.cursor, Position.of(1, 5))).toBe(true);
    expect(await isPositionAcknowledged(w.ctx, w.cursor, Position.of(1, 6))).toBe(false);
    expect(await isPositionAcknowledged(w.ctx, { ...w.cursor, cursorId: 'gone' }, Position.of(1, 5))).toBe(
      false,
    );
  });
});

describe('acknowledgeCumulative', () => {
  it('refuses a consumer that is not the owner, and a subscription without one', async () => {
    const w = engineWorld({ type: 'Failover' });
    await w.publish(3);
    await w.subscribe();
    await expect(acknowledgeCumulative(w.ctx, w.cursor, 'a', Position.of(1, 0))).rejects.toThrow(
      /Consumer a is not the active consumer \(epoch 0\)/,
    );
    await w.receive('a', 3);
    await expect(acknowledgeCumulative(w.ctx, w.cursor, 'b', Position.of(1, 0))).rejects.toThrow(
      /not the active consumer/,
    );
  });

  it('writes nothing at or before mark-delete, records the time, and does nothing for a deleted cursor', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(5);
    await w.subscribe();
    await w.receive('a', 5);
    w.clock.advance(2_000);
    await acknowledgeCumulative(w.ctx, w.cursor, 'a', Position.of(1, 2));
    const record = await w.store.readHead('c1');
    expect([record?.head.markDelete.toString(), record?.head.lastAckedAtMs]).toEqual(['1:2', 1_002_000]);
    await acknowledgeCumulative(w.ctx, w.cursor, 'a', Position.of(1, 2));
    await acknowledgeCumulative(w.ctx, w.cursor, 'a', Position.of(1, 1));
    expect((await w.store.readHead('c1'))?.version).toBe(record?.version);
    await expect(
      acknowledgeCumulative(w.ctx, { ...w.cursor, cursorId: 'gone' }, 'a', Position.of(1, 1)),
    ).resolves.toBeUndefined();
  });

  it('writes again after a lost race, and answers busy after casAttempts', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Exclusive', store, limits: { casAttempts: 2 } });
    await w.publish(5);
    await w.subscribe();
    await w.receive('a', 5);
    store.lose.head = 2;
    await expect(acknowledgeCumulative(w.ctx, w.cursor, 'a', Position.of(1, 2))).rejects.toThrow(
      PreconditionFailedError,
    );
    expect((await w.store.readHead('c1'))?.head.markDelete.toString()).toBe('1:-1');
    store.lose.head = 1;
    await acknowledgeCumulative(w.ctx, w.cursor, 'a', Position.of(1, 2));
    expect((await w.store.readHead('c1'))?.head.markDelete.toString()).toBe('1:2');
  });
});

describe('negativeAcknowledge, the edges', () => {
  const nack = (w: ReturnType<typeof engineWorld>, positions: Position[], extra: object = {}) =>
    negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: positions.map((position) => ({ position })),
      delayMs: (count) => 1_000 * (count + 1),
      ...extra,
    });

  it('leaves alone what is acknowledged, and does nothing for a deleted cursor', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 0)], { byId: false });
    const result = await nack(w, [Position.of(1, 0), Position.of(1, 1)]);
    expect(result.released.map(String)).toEqual(['1:1']);
    expect(await nack({ ...w, cursor: { ...w.cursor, cursorId: 'gone' } }, [Position.of(1, 1)])).toEqual({
      dueAtMs: [],
      released: [],
      deadLettered: [],
    });
  });

  it('puts one tracker entry for the part of a run it released, and lowers the head’s due time, never raises it', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(4);
    await w.subscribe();
    await w.receive('a', 3);
    await nack(w, [Position.of(1, 1)]);
    const tracker = await w.store.dueTracker('c1', Number.MAX_SAFE_INTEGER, 10);
    expect(tracker.map((e) => [e.position.toString(), e.n, e.dueAtMs])).toEqual([['1:1', 1, 1_001_000]]);
    expect((await w.store.readHead('c1'))?.head.trackerDueAtMs).toBe(1_001_000);
    // A later due time leaves the head's earlier one.
    const [again] = await w.receive('b', 1);
    expect(again?.position.toString()).toBe('1:3');
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'b',
      items: [{ position: Position.of(1, 3) }],
      delayMs: () => 9_000,
    });
    expect((await w.store.readHead('c1'))?.head.trackerDueAtMs).toBe(1_001_000);
  });

  it('lowers the head’s due time to the earliest of the runs it released in a page', async () => {
    const w = engineWorld({ type: 'Shared', limits: { maxHeadRuns: 1 } });
    await w.publish(4);
    await w.subscribe();
    for (let i = 0; i < 4; i++) await w.receive('a', 1);
    // 1:0 handed out twice since: a count of 2, a shorter backoff for the others.
    const [page] = await w.store.readPages('c1', [{ ledgerId: 1n, page: 0n }]);
    expect(page?.runs.length).toBeGreaterThan(1);
    expect((await w.store.readHead('c1'))?.head.trackerDueAtMs).toBeUndefined();
    const result = await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: [{ position: Position.of(1, 1) }, { position: Position.of(1, 0) }],
      delayMs: () => 3_000,
    });
    expect(result.released.map(String).sort()).toEqual(['1:0', '1:1']);
    expect((await w.store.readHead('c1'))?.head.trackerDueAtMs).toBe(1_003_000);
    const reads = w.store.usage.reads;
    await nack(w, [Position.of(1, 2)]);
    expect(w.store.usage.reads - reads).toBeLessThanOrEqual(3);
  });

  it('dead-letters an entry past maxRedeliverCount instead of releasing it', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    const { producer, published } = recordingDeadLetter(0);
    const result = await nack(w, [Position.of(1, 0)], { deadLetter: producer });
    expect([result.deadLettered.map(String), result.released]).toEqual([['1:0'], []]);
    expect(published.map((p) => [p.entries.map((e) => e.position.toString()), p.redeliveryCount])).toEqual([
      [['1:0'], 1],
    ]);
    expect(await isPositionAcknowledged(w.ctx, w.cursor, Position.of(1, 0))).toBe(true);
    w.clock.advance(60_000);
    expect(idsOf(await w.receive('b', 10))).toEqual([]);
  });

  it('answers 503 when every attempt lost its race, pausing between them', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store, limits: { casAttempts: 1 } });
    await w.publish(1);
    await w.subscribe();
    await w.receive('a', 1);
    const paused: number[] = [];
    const ctx = { ...w.ctx, pauseAfterConflict: async (n: number) => void paused.push(n) };
    store.lose.head = 8;
    await expect(
      negativeAcknowledge(ctx, {
        cursor: w.cursor,
        consumerId: 'a',
        items: [{ position: Position.of(1, 0) }],
        delayMs: () => 0,
      }),
    ).rejects.toThrow(ServiceUnavailableError);
    expect(paused).toEqual([0, 1, 2, 3, 4, 5, 6]);
    store.lose.head = 7;
    const result = await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: [{ position: Position.of(1, 0) }],
      delayMs: () => 0,
    });
    expect(result.released.map(String)).toEqual(['1:0']);
  });
});
