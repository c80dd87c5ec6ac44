import { describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_LIMITS, MAX_DISPATCH } from '../../../../shared/application/engine/engine-context.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import {
  RELEASE_PAGES_PER_STEP,
  releaseConsumerStep,
  rewind,
} from '../../../../shared/application/engine/release.ts';
import { ConsumerFencedError } from '../../../../shared/domain/ownership.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { PageRef } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, idsOf, RacedStore } from '../../../support/engine-world.ts';

// A gone consumer's entries come back (Shared, Key_Shared), and an Exclusive/Failover rewind
// replays from mark-delete (mutation testing, issue 21 criterion 5).

const byConsumer = async (w: ReturnType<typeof engineWorld>) =>
  Object.fromEntries((await pendingSummary(w.ctx, w.cursor)).unackedByConsumer);

/** Releases everything `consumerId` holds, step after step; the steps' `next`s. */
async function releaseAll(w: ReturnType<typeof engineWorld>, consumerId: string) {
  const nexts: string[] = [];
  let next: Position | undefined;
  for (let step = 0; step < 10; step++) {
    const result = await releaseConsumerStep(w.ctx, w.cursor, consumerId, next);
    if (!result.next) return nexts;
    next = result.next;
    nexts.push(next.toString());
  }
  throw new Error('releaseConsumerStep did not finish in 10 steps');
}

describe('releaseConsumerStep', () => {
  it('does nothing for a cursor that does not exist', async () => {
    const w = engineWorld({ type: 'Shared' });
    expect(await releaseConsumerStep(w.ctx, w.cursor, 'a')).toEqual({});
  });

  it('gives back what the consumer held, due at once with its count, and nothing of another consumer', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(6);
    await w.subscribe();
    const a = await w.receive('a', 3);
    const b = await w.receive('b', 2);
    expect(await releaseAll(w, 'a')).toEqual([]);
    expect(await byConsumer(w)).toEqual({ b: 2 });
    const again = await w.receive('c', 10);
    expect(idsOf(again)).toEqual([...idsOf(a), '1:5']);
    expect(again.map((d) => d.redeliveryCount)).toEqual([1, 1, 1, 0]);
    expect(await byConsumer(w)).toEqual({ b: 2, c: 4 });
    expect(idsOf(b)).toEqual(['1:3', '1:4']);
  });

  it('gives back what was handed out again before with the count it had', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    await releaseAll(w, 'a');
    expect((await w.receive('b', 2)).map((d) => d.redeliveryCount)).toEqual([1, 1]);
    await releaseAll(w, 'b');
    expect((await w.receive('c', 2)).map((d) => d.redeliveryCount)).toEqual([2, 2]);
  });

  it('gives back runs the head spilled to pages', async () => {
    const w = engineWorld({ type: 'Shared', limits: { maxHeadRuns: 3 } });
    await w.publish(20);
    await w.subscribe();
    for (let i = 0; i < 12; i++) await w.receive(i % 2 === 0 ? 'a' : 'b', 1);
    expect(await byConsumer(w)).toEqual({ a: 6, b: 6 });
    await releaseAll(w, 'a');
    expect(await byConsumer(w)).toEqual({ b: 6 });
    const again = await w.receive('c', 20);
    expect(idsOf(again).slice(0, 6)).toEqual(['1:0', '1:2', '1:4', '1:6', '1:8', '1:10']);
    expect(again.slice(0, 6).every((d) => d.redeliveryCount === 1)).toBe(true);
  });

  it(`walks the window ${RELEASE_PAGES_PER_STEP} pages a step, and says where to go on`, async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 100_000 });
    const pages = RELEASE_PAGES_PER_STEP + 2;
    await w.publish(pages * MAX_DISPATCH);
    await w.subscribe();
    // Each receive's run is its own page; past maxHeadRuns the head spills them.
    for (let i = 0; i < pages; i++) await w.receive('a', MAX_DISPATCH);
    expect(await releaseAll(w, 'a')).toEqual([`1:${RELEASE_PAGES_PER_STEP * MAX_DISPATCH}`]);
    expect(await byConsumer(w)).toEqual({});
  });

  it('starts a step at `from`, leaving what is before it', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 100_000, limits: { maxHeadRuns: 1 } });
    await w.publish(3 * MAX_DISPATCH);
    await w.subscribe();
    for (let i = 0; i < 3; i++) await w.receive('a', MAX_DISPATCH);
    const spilled = await w.store.readPages(
      w.cursor.cursorId,
      [0n, 1n, 2n].map((page): PageRef => ({ ledgerId: 1n, page })),
    );
    const inPages = spilled.flatMap((page) => page.runs).length;
    await releaseConsumerStep(w.ctx, w.cursor, 'a', Position.of(1, 200));
    const left = (await byConsumer(w)).a ?? 0;
    // Runs in the head are always released; runs in pages before `from` stay held.
    expect(left).toBe(
      spilled
        .filter((page) => page.page < 2n)
        .flatMap((page) => page.runs)
        .reduce((n, run) => n + run.n, 0),
    );
    expect(inPages).toBeGreaterThan(0);
  });
});

describe('releaseConsumerStep and the head’s due time', () => {
  it('makes what it released due at once even when the head said nothing was due for a while', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2, { ackTimeoutMs: 60_000 });
    expect((await w.store.readHead(w.cursor.cursorId))?.head.trackerDueAtMs).toBe(w.clock.nowMs() + 60_000);
    await releaseConsumerStep(w.ctx, w.cursor, 'a');
    expect((await w.store.readHead(w.cursor.cursorId))?.head.trackerDueAtMs).toBe(w.clock.nowMs());
    expect(idsOf(await w.receive('b', 2))).toEqual(['1:0', '1:1']);
  });
});

describe('rewind', () => {
  const head = async (w: ReturnType<typeof engineWorld>) => (await w.store.readHead(w.cursor.cursorId))?.head;

  it('does nothing for a cursor that does not exist', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await expect(rewind(w.ctx, w.cursor, { consumerId: 'a' })).resolves.toBeUndefined();
  });

  it('refuses a consumer that is not the owner, and a close by it changes nothing', async () => {
    const w = engineWorld({ type: 'Failover' });
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 2);
    const before = await w.store.readHead(w.cursor.cursorId);
    await expect(rewind(w.ctx, w.cursor, { consumerId: 'x' })).rejects.toThrow(
      new ConsumerFencedError('Consumer x is not the active consumer'),
    );
    await rewind(w.ctx, w.cursor, { consumerId: 'x', close: true });
    expect((await w.store.readHead(w.cursor.cursorId))?.version).toBe(before?.version);
  });

  it("replays from mark-delete for the owner's redeliverUnacknowledged, the owner kept", async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 2);
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    expect(await head(w)).toMatchObject({ owner: { consumerId: 'a' }, epoch: 1 });
    expect((await head(w))?.replayFrom?.toString()).toBe('1:0');
    // The replay up to the read position, then first deliveries again.
    expect(idsOf(await w.receive('a', 3))).toEqual(['1:0', '1:1']);
    expect(idsOf(await w.receive('a', 3))).toEqual(['1:2']);
  });

  it('lets an operator (no consumer named) rewind whoever owns the subscription', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    await rewind(w.ctx, w.cursor, {});
    expect((await head(w))?.replayFrom?.toString()).toBe('1:0');
    expect((await head(w))?.owner?.consumerId).toBe('a');
  });

  it('replays nothing when nothing was dispatched', async () => {
    const w = engineWorld({ type: 'Exclusive' });
    await w.publish(1);
    await w.subscribe();
    await rewind(w.ctx, w.cursor, {});
    expect((await head(w))?.replayFrom).toBeUndefined();
    await rewind(w.ctx, w.cursor, { close: true });
    expect((await head(w))?.replayFrom).toBeUndefined();
  });

  it("on the owner's close: a new epoch, no owner, the owner fenced (the last 4 remembered), a replay for the next", async () => {
    const w = engineWorld({ type: 'Failover' });
    await w.publish(10);
    await w.subscribe();
    for (const [i, id] of ['a', 'b', 'c', 'd', 'e'].entries()) {
      expect(await w.receive(id, 1)).toHaveLength(1);
      const epoch = (await head(w))?.epoch ?? 0;
      await rewind(w.ctx, w.cursor, { consumerId: id, close: true });
      const after = await head(w);
      expect(after?.owner).toBeUndefined();
      expect(after?.epoch).toBe(epoch + 1);
      expect(after?.fenced?.at(-1)).toBe(id);
      expect(after?.fenced).toHaveLength(Math.min(i + 1, 4));
      expect(after?.replayFrom?.toString()).toBe('1:0');
    }
    expect((await head(w))?.fenced).toEqual(['b', 'c', 'd', 'e']);
    await expect(w.receive('e', 1)).rejects.toThrow(ConsumerFencedError);
    // Each took 1:0 and gave it back: the next owner replays it, then goes on from the read position.
    expect(idsOf(await w.receive('f', 10))).toEqual(['1:0']);
    expect(idsOf(await w.receive('f', 10))).toEqual(Array.from({ length: 9 }, (_, i) => `1:${i + 1}`));
  });
});

describe('releaseConsumerStep under contention', () => {
  it('tries the head many rounds, and when it loses them all says to go on from the start', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store });
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 3);
    // casAttempts (5) * 8 rounds: one fewer loss than that still releases.
    store.lose.head = DEFAULT_ENGINE_LIMITS.casAttempts * 8 - 1;
    expect(await releaseConsumerStep(w.ctx, w.cursor, 'a')).toEqual({});
    expect(await byConsumer(w)).toEqual({});
    await w.receive('b', 3);
    store.lose.head = DEFAULT_ENGINE_LIMITS.casAttempts * 8;
    expect((await releaseConsumerStep(w.ctx, w.cursor, 'b'))?.next?.toString()).toBe('1:0');
    expect(await byConsumer(w)).toEqual({ b: 3 });
  });

  it('walks a page again when its write lost, keeping what it released before', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store, ledgerSize: 100_000 });
    await w.publish(20 * MAX_DISPATCH);
    await w.subscribe();
    for (let i = 0; i < 20; i++) await w.receive(i % 2 === 0 ? 'a' : 'b', MAX_DISPATCH);
    const spilled = await w.store.readPages(
      w.cursor.cursorId,
      Array.from({ length: 20 }, (_, i) => BigInt(i)).map((page): PageRef => ({ ledgerId: 1n, page })),
    );
    const withRuns = spilled.filter((page) =>
      page.runs.some((run) => run.state.kind === 'held' && run.state.consumerId === 'a'),
    );
    expect(withRuns.length).toBeGreaterThanOrEqual(2);
    // The second page holding runs loses its write: the step says to walk that page again.
    let lost = 0;
    const casPage = store.casPage.bind(store);
    store.casPage = async (...args) => {
      if (args[1].page === withRuns[1]?.page && lost === 0) {
        lost++;
        return false;
      }
      return casPage(...args);
    };
    const first = await releaseConsumerStep(w.ctx, w.cursor, 'a');
    expect(first.next?.toString()).toBe(`1:${Number(withRuns[1]?.page) * 100}`);
    // What the first page released is due now: the head's due time says so.
    expect((await w.store.readHead(w.cursor.cursorId))?.head.trackerDueAtMs).toBe(w.clock.nowMs());
    expect(await releaseConsumerStep(w.ctx, w.cursor, 'a', first.next)).toEqual({});
    expect(await byConsumer(w)).toEqual({ b: 10 * MAX_DISPATCH });
  });
});
