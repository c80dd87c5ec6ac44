import { describe, expect, it } from 'vitest';
import { foldStep } from '../../../../shared/application/engine/fold.ts';
import { acknowledge, negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { pendingSummary, SUMMARY_PAGES } from '../../../../shared/application/engine/pending-summary.ts';
import { newDispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { engineWorld } from '../../../support/engine-world.ts';

// What the pending summary counts (Pulsar's unackedMessages, per consumer, the overdue ones, the
// delayed ones, the last ack), over the engine's own writes (mutation testing, issue 21 criterion 5).

/** The summary as plain data, compared whole (toMatchObject would let extra consumers pass). */
async function summaryOf(w: ReturnType<typeof engineWorld>) {
  const s = await pendingSummary(w.ctx, w.cursor);
  return {
    unacked: s.unacked,
    byConsumer: Object.fromEntries(s.unackedByConsumer),
    overdue: Object.fromEntries(s.overdueByConsumer),
    delayed: s.delayed,
    lastAckedAtMs: s.lastAckedAtMs,
    truncated: s.truncated,
  };
}

/** An expected summary: nothing but what is given. */
const summary = (given: Partial<Awaited<ReturnType<typeof summaryOf>>>) => ({
  unacked: 0,
  byConsumer: {},
  overdue: {},
  delayed: 0,
  lastAckedAtMs: undefined,
  truncated: false,
  ...given,
});

describe('pendingSummary', () => {
  it('is empty for a cursor that does not exist', async () => {
    const w = engineWorld({ type: 'Shared' });
    expect(await summaryOf(w)).toEqual({
      unacked: 0,
      byConsumer: {},
      overdue: {},
      delayed: 0,
      lastAckedAtMs: undefined,
      truncated: false,
    });
  });

  it('counts what each consumer holds, and as overdue from the instant its ack timeout ends', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(8);
    await w.subscribe();
    expect(await w.receive('a', 3, { ackTimeoutMs: 10_000 })).toHaveLength(3);
    expect(await w.receive('b', 2)).toHaveLength(2);
    expect(await summaryOf(w)).toEqual(
      summary({
        unacked: 5,
        byConsumer: { a: 3, b: 2 },
        overdue: {},
        delayed: 0,
      }),
    );
    w.clock.advance(9_999);
    expect((await summaryOf(w)).overdue).toEqual({});
    w.clock.advance(1);
    expect(await summaryOf(w)).toEqual(
      summary({ unacked: 5, byConsumer: { a: 3, b: 2 }, overdue: { a: 3 } }),
    );
  });

  it('leaves out what was acknowledged, and tells when the last ack was', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(4);
    await w.subscribe();
    const held = await w.receive('a', 4);
    expect((await summaryOf(w)).lastAckedAtMs).toBeUndefined();
    w.clock.advance(500);
    await acknowledge(w.ctx, w.cursor, [held[1]!.position], { byId: false });
    expect(await summaryOf(w)).toEqual(
      summary({ unacked: 3, byConsumer: { a: 3 }, lastAckedAtMs: 1_000_500 }),
    );
  });

  it('counts entries held back until their deliverAt as delayed until then, and never as unacked', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.subscribe();
    await w.publish(2);
    await w.publish(3, { deliverAtMs: 1_000_000 + 5_000 });
    expect(await w.receive('a', 10)).toHaveLength(2);
    expect(await summaryOf(w)).toEqual(summary({ unacked: 2, byConsumer: { a: 2 }, delayed: 3 }));
    w.clock.advance(4_999);
    expect((await summaryOf(w)).delayed).toBe(3);
    w.clock.advance(1);
    expect((await summaryOf(w)).delayed).toBe(0);
  });

  it('counts a nacked entry waiting for its redelivery as neither held nor delayed', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(3);
    await w.subscribe();
    const held = await w.receive('a', 3);
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: [{ position: held[0]!.position }],
      delayMs: () => 60_000,
    });
    expect(await summaryOf(w)).toEqual(summary({ unacked: 2, byConsumer: { a: 2 }, delayed: 0 }));
  });

  it('counts runs the head spilled to pages once each, across consumers', async () => {
    const w = engineWorld({ type: 'Shared', limits: { maxHeadRuns: 4 } });
    await w.publish(40);
    await w.subscribe();
    for (let i = 0; i < 20; i++) expect(await w.receive(i % 2 === 0 ? 'a' : 'b', 1)).toHaveLength(1);
    expect(await w.receive('c', 5)).toHaveLength(5);
    expect(await summaryOf(w)).toEqual(summary({ unacked: 25, byConsumer: { a: 10, b: 10, c: 5 } }));
  });

  it('reads at most SUMMARY_PAGES pages of the window, and says when it was longer', async () => {
    const summaryAt = async (readPosition: number) => {
      const w = engineWorld({ type: 'Shared' });
      // A layout of one long ledger (only its length matters here), and a head far into it.
      w.ledger.state = async () => ({
        partition: w.cursor.partition,
        ledgers: [{ ledgerId: 1n, entries: 300_000n }],
        msgInCounter: 0,
        bytesInCounter: 0,
        subscriptionsVersion: '',
      });
      await w.store.createHead(
        w.cursor.cursorId,
        newDispatchHead(Position.beforeFirst(1n), Position.of(1, readPosition)),
      );
      // A held run in the page just past SUMMARY_PAGES.
      const last = BigInt(SUMMARY_PAGES) * 100n;
      await w.store.casPage(w.cursor.cursorId, { ledgerId: 1n, page: BigInt(SUMMARY_PAGES) }, 0, {
        runs: [
          {
            ledgerId: 1n,
            entryId: last,
            n: 1,
            deliveries: 1,
            state: { kind: 'held', consumerId: 'z', deliveredAtMs: 0 },
          },
        ],
      });
      return summaryOf(w);
    };
    // Exactly SUMMARY_PAGES pages before the read position: all of them read.
    expect(await summaryAt(SUMMARY_PAGES * 100)).toEqual(summary({}));
    // One page more: that page is not read, and the summary says it is cut short.
    expect(await summaryAt(SUMMARY_PAGES * 100 + 1)).toEqual(summary({ truncated: true }));
    // Pages at or after the read position are not part of the window (nothing there was dispatched).
    expect(await summaryAt(0)).toEqual(summary({}));
  });

  it('counts an entry once when the head and its page both hold a run for it (the head’s wins)', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(5);
    const held = (consumerId: string) =>
      ({
        ledgerId: 1n,
        entryId: 0n,
        n: 2,
        deliveries: 1,
        state: { kind: 'held', consumerId, deliveredAtMs: 0 },
      }) as const;
    await w.store.createHead(w.cursor.cursorId, {
      ...newDispatchHead(Position.beforeFirst(1n), Position.of(1, 2)),
      runs: [held('a')],
    });
    await w.store.casPage(w.cursor.cursorId, { ledgerId: 1n, page: 0n }, 0, { runs: [held('b')] });
    expect(await summaryOf(w)).toEqual(summary({ unacked: 2, byConsumer: { a: 2 } }));
  });

  it('leaves out runs at or after the read position (leftovers of a reset)', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(10);
    await w.store.createHead(w.cursor.cursorId, newDispatchHead(Position.beforeFirst(1n), Position.of(1, 5)));
    await w.store.casPage(w.cursor.cursorId, { ledgerId: 1n, page: 0n }, 0, {
      runs: [
        {
          ledgerId: 1n,
          entryId: 3n,
          n: 1,
          deliveries: 1,
          state: { kind: 'held', consumerId: 'a', deliveredAtMs: 0 },
        },
        {
          ledgerId: 1n,
          entryId: 7n,
          n: 2,
          deliveries: 1,
          state: { kind: 'held', consumerId: 'a', deliveredAtMs: 0 },
        },
      ],
    });
    expect(await summaryOf(w)).toEqual(summary({ unacked: 1, byConsumer: { a: 1 } }));
  });

  it('knows the last ack from the head once the fold made tombstones of the pages', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(100);
    await w.subscribe();
    await w.receive('a', 100);
    w.clock.advance(2_000);
    const all = Array.from({ length: 100 }, (_, i) => Position.of(1, i));
    await acknowledge(w.ctx, w.cursor, all, { byId: false });
    await foldStep(w.ctx, w.cursor);
    await w.store.deletePages(w.cursor.cursorId, [{ ledgerId: 1n, page: 0n }]);
    expect(await summaryOf(w)).toEqual(summary({ lastAckedAtMs: 1_002_000 }));
  });
});
