import { describe, expect, it } from 'vitest';
import { DEFAULT_ENGINE_LIMITS, MAX_DISPATCH } from '../../../../shared/application/engine/engine-context.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import {
  RELEASE_PAGES_PER_STEP,
  releaseConsumerStep,
  rewind,
} from '../../../../shared/application/engine/release.ts';
import { resetCursor } from '../../../../shared/application/engine/reset-cursor.ts';
import { runStart } from '../../../../shared/domain/delivery-run.ts';
import { ConsumerFencedError } from '../../../../shared/domain/ownership.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { PageRef } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, idsOf, RacedStore } from '../../../support/engine-world.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';

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

/** A store that records the pages each readPages call asks for. */
class PageCountingStore extends RacedStore {
  pagesRead: string[] = [];

  override async readPages(...args: Parameters<RacedStore['readPages']>) {
    this.pagesRead.push(...args[1].map((ref) => `${ref.ledgerId}:${ref.page}`));
    return super.readPages(...args);
  }
}

/**
 * Pages 0 to 2 hold `a`'s runs (spilled), the head `b`'s two: both with an ack timeout of 60 s,
 * so the head says the tracker is due 60 s from now.
 */
async function spilledWorld(store = new PageCountingStore()) {
  const w = engineWorld({ type: 'Shared', ledgerSize: 100_000, store, limits: { maxHeadRuns: 2 } });
  await w.publish(6 * MAX_DISPATCH);
  await w.subscribe();
  for (let i = 0; i < 3; i++) await w.receive('a', MAX_DISPATCH, { ackTimeoutMs: 60_000 });
  for (let i = 0; i < 2; i++) await w.receive('b', MAX_DISPATCH, { ackTimeoutMs: 60_000 });
  return { w, store };
}

const dueAt = async (w: ReturnType<typeof engineWorld>) =>
  (await w.store.readHead(w.cursor.cursorId))?.head.trackerDueAtMs;

describe('releaseConsumerStep: what it writes and reads', () => {
  it('writes nothing for a consumer that holds nothing, and leaves the head’s due time', async () => {
    const { w, store } = await spilledWorld();
    const due = await dueAt(w);
    expect(due).toBe(w.clock.nowMs() + 60_000);
    const writes = store.usage.writes;
    expect(await releaseConsumerStep(w.ctx, w.cursor, 'c')).toEqual({});
    expect(store.usage.writes).toBe(writes);
    expect(await dueAt(w)).toBe(due);
    expect(await byConsumer(w)).toEqual({ a: 3 * MAX_DISPATCH, b: 2 * MAX_DISPATCH });
  });

  it('reads only the pages before the read position (nothing after it was dispatched)', async () => {
    const { w, store } = await spilledWorld();
    store.pagesRead = [];
    expect(await releaseConsumerStep(w.ctx, w.cursor, 'a')).toEqual({});
    // The ledger holds 6 pages, the read position is 1:500: page 5 is not read.
    expect(store.pagesRead).toEqual(['1:0', '1:1', '1:2', '1:3', '1:4']);
    expect(await byConsumer(w)).toEqual({ b: 2 * MAX_DISPATCH });
  });

  it(`reads ${RELEASE_PAGES_PER_STEP} pages a step, and stops where the read position is`, async () => {
    const store = new PageCountingStore();
    const w = engineWorld({ type: 'Shared', ledgerSize: 100_000, store, limits: { maxHeadRuns: 2 } });
    const pages = RELEASE_PAGES_PER_STEP + 3;
    await w.publish(pages * MAX_DISPATCH);
    await w.subscribe();
    for (let i = 0; i < pages; i++) await w.receive('a', MAX_DISPATCH);
    store.pagesRead = [];
    const first = await releaseConsumerStep(w.ctx, w.cursor, 'a');
    expect(store.pagesRead).toHaveLength(RELEASE_PAGES_PER_STEP);
    expect(store.pagesRead.at(-1)).toBe(`1:${RELEASE_PAGES_PER_STEP - 1}`);
    // The page of the next step is still held (the last two are in the head, released every step).
    expect(await byConsumer(w)).toEqual({ a: MAX_DISPATCH });
    expect(first.next?.toString()).toBe(`1:${RELEASE_PAGES_PER_STEP * MAX_DISPATCH}`);
  });

  it('has no next step when the page after the step starts at the read position', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 100_000 });
    await w.publish((RELEASE_PAGES_PER_STEP + 2) * MAX_DISPATCH);
    await w.subscribe();
    for (let i = 0; i < RELEASE_PAGES_PER_STEP; i++) await w.receive('a', MAX_DISPATCH);
    expect((await w.store.readHead(w.cursor.cursorId))?.head.readPosition.toString()).toBe(
      `1:${RELEASE_PAGES_PER_STEP * MAX_DISPATCH}`,
    );
    expect(await releaseConsumerStep(w.ctx, w.cursor, 'a')).toEqual({});
    expect(await byConsumer(w)).toEqual({});
  });

  it('makes the head due now when a later page’s write lost after an earlier page released', async () => {
    const { w, store } = await spilledWorld();
    const casPage = store.casPage.bind(store);
    store.casPage = async (...args) => (args[1].page === 1n ? false : casPage(...args));
    expect((await releaseConsumerStep(w.ctx, w.cursor, 'a')).next?.toString()).toBe('1:100');
    expect(await dueAt(w)).toBe(w.clock.nowMs());
    expect(idsOf(await w.receive('c', MAX_DISPATCH)).slice(0, 2)).toEqual(['1:0', '1:1']);
  });

  it('leaves the head’s due time when the first page’s write lost (nothing released yet)', async () => {
    const { w, store } = await spilledWorld();
    const due = await dueAt(w);
    store.lose.page = 1;
    expect((await releaseConsumerStep(w.ctx, w.cursor, 'a')).next?.toString()).toBe('1:0');
    expect(await dueAt(w)).toBe(due);
  });

  it('stops quietly when the subscription is deleted while it runs', async () => {
    class VanishingStore extends InMemoryDispatchStore {
      readsLeft = Number.POSITIVE_INFINITY;
      override async readHead(...args: Parameters<InMemoryDispatchStore['readHead']>) {
        if (--this.readsLeft < 0) await this.deleteCursor(args[0]);
        return super.readHead(...args);
      }
    }
    const store = new VanishingStore();
    const w = engineWorld({ type: 'Shared', store });
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 3);
    store.readsLeft = 1;
    expect(await releaseConsumerStep(w.ctx, w.cursor, 'a')).toEqual({});
    expect(store.hasCursor(w.cursor.cursorId)).toBe(false);
  });

  it('leaves the runs a reset left at or after the new read position (nothing there was dispatched)', async () => {
    class CrashingStore extends InMemoryDispatchStore {
      crash = false;
      override async casPage(...args: Parameters<InMemoryDispatchStore['casPage']>) {
        if (this.crash) throw new Error('the resetter died');
        return super.casPage(...args);
      }
    }
    const store = new CrashingStore();
    const w = engineWorld({ type: 'Shared', store, limits: { maxHeadRuns: 2 } });
    await w.publish(300);
    await w.subscribe();
    for (const max of [50, 50, 100, 100]) await w.receive('a', max);
    const page0 = async () =>
      (await w.store.readPages(w.cursor.cursorId, [{ ledgerId: 1n, page: 0n }]))[0]?.runs.map(
        (run) => `${runStart(run).toString()}+${run.n} ${run.state.kind}`,
      );
    expect(await page0()).toEqual(['1:0+50 held', '1:50+50 held']);
    // The reset to 1:50 dies after its first step (the head), before it clears the pages.
    store.crash = true;
    await expect(resetCursor(w.ctx, w.cursor, Position.of(1, 50))).rejects.toThrow('the resetter died');
    store.crash = false;
    expect((await w.store.readHead(w.cursor.cursorId))?.head.resetting).toBeDefined();
    await releaseConsumerStep(w.ctx, w.cursor, 'a');
    expect(await page0()).toEqual(['1:0+50 released', '1:50+50 held']);
  });
});

describe('rewind under contention, and whom a close fences', () => {
  it(`gives up after ${DEFAULT_ENGINE_LIMITS.casAttempts} lost writes, and applies after one fewer`, async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Exclusive', store });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2);
    store.lose.head = DEFAULT_ENGINE_LIMITS.casAttempts;
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    expect((await w.store.readHead(w.cursor.cursorId))?.head.replayFrom).toBeUndefined();
    store.lose.head = DEFAULT_ENGINE_LIMITS.casAttempts - 1;
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });
    expect((await w.store.readHead(w.cursor.cursorId))?.head.replayFrom?.toString()).toBe('1:0');
  });

  it('fences nobody on an operator’s close of a subscription without an owner', async () => {
    const w = engineWorld({ type: 'Failover' });
    await w.publish(2);
    await w.subscribe();
    const epoch = (await w.store.readHead(w.cursor.cursorId))?.head.epoch ?? 0;
    await rewind(w.ctx, w.cursor, { close: true });
    const after = (await w.store.readHead(w.cursor.cursorId))?.head;
    expect(after?.epoch).toBe(epoch + 1);
    expect(after?.fenced ?? []).toEqual([]);
  });
});
