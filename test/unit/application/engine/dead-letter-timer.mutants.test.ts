import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_CLAIM_MS } from '../../../../shared/application/engine/dead-letter-claim.ts';
import { deadLetterOnTimer } from '../../../../shared/application/engine/dead-letter-timer.ts';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import { acknowledge, negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { TrackerEntry } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, recordingDeadLetter, WORLD_PARTITION } from '../../../support/engine-world.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';

// The server's dead-letter timer (Pulsar dead-letters on its timer, not on the next receive;
// issue 21 defect 2), over the engine's own writes (mutation testing, issue 21 criterion 5).

const ACK_TIMEOUT_MS = 1_000;

/**
 * Three entries handed to `a` with maxRedeliverCount 1: once (count 0), then again after the ack
 * timeout (count 1), whose dead-letter timers the second receive answers.
 */
async function twiceDelivered(count = 3, store?: InMemoryDispatchStore) {
  const w = engineWorld({ type: 'Shared', ...(store ? { store } : {}) });
  const dlq = recordingDeadLetter(1);
  await w.publish(count);
  await w.subscribe();
  const consumer = w.consumer('a', { ackTimeoutMs: ACK_TIMEOUT_MS, deadLetter: dlq.producer });
  const receive = async () => {
    const result = await dispatch(w.ctx, { cursor: w.cursor, consumer, max: Math.max(10, count) });
    if (result.kind !== 'delivered') throw new Error(result.kind);
    return result;
  };
  const first = await receive();
  expect(first.deadLetterTimers).toEqual([]);
  w.clock.advance(ACK_TIMEOUT_MS);
  const second = await receive();
  expect(second.deliveries.map((d) => d.redeliveryCount)).toEqual(Array(count).fill(1));
  expect(second.deadLetterTimers).toHaveLength(1);
  const timer = (entry: TrackerEntry) => ({ cursor: w.cursor, entry, deadLetter: dlq.producer });
  return { w, dlq, timer: timer(second.deadLetterTimers[0] as TrackerEntry), second };
}

const dueTracker = async (w: ReturnType<typeof engineWorld>) =>
  w.store.dueTracker(w.cursor.cursorId, Number.MAX_SAFE_INTEGER, 100);

describe('deadLetterOnTimer', () => {
  it('before the ack timeout ends: publishes nothing and says when to look again', async () => {
    const { w, dlq, timer } = await twiceDelivered();
    w.clock.advance(ACK_TIMEOUT_MS - 1);
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({ retryAtMs: timer.entry.dueAtMs });
    expect(dlq.published).toEqual([]);
  });

  it('once due: publishes every entry once, with its count, and acknowledges them', async () => {
    const { w, dlq, timer } = await twiceDelivered();
    w.clock.advance(ACK_TIMEOUT_MS);
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(
      dlq.published.map((p) => [p.entries.map((e) => e.position.toString()), p.redeliveryCount]),
    ).toEqual([[['1:0', '1:1', '1:2'], 2]]);
    expect((await pendingSummary(w.ctx, w.cursor)).unacked).toBe(0);
    // Done: the timer again publishes nothing, and nothing is handed out any more.
    w.clock.advance(DEAD_LETTER_CLAIM_MS);
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(dlq.published).toHaveLength(1);
    expect(await w.receive('b', 10)).toEqual([]);
  });

  it('leaves what was acknowledged since, publishing only the rest', async () => {
    const { w, dlq, timer, second } = await twiceDelivered();
    await acknowledge(w.ctx, w.cursor, [second.deliveries[1]!.position], { byId: false });
    w.clock.advance(ACK_TIMEOUT_MS);
    await deadLetterOnTimer(w.ctx, timer);
    expect(dlq.published.flatMap((p) => p.entries.map((e) => e.position.toString()))).toEqual(['1:0', '1:2']);
  });

  it('drops its tracker entry when everything it names was acknowledged', async () => {
    const { w, dlq, timer, second } = await twiceDelivered();
    await acknowledge(
      w.ctx,
      w.cursor,
      second.deliveries.map((d) => d.position),
      { byId: false },
    );
    w.clock.advance(ACK_TIMEOUT_MS);
    const before = (await dueTracker(w)).length;
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(dlq.published).toEqual([]);
    expect((await dueTracker(w)).length).toBe(before - 1);
  });

  it.each([
    1, 3,
  ])('publishes nothing for a delivery whose next one stays within the count (maxRedeliverCount %i)', async (max) => {
    const w = engineWorld({ type: 'Shared' });
    const dlq = recordingDeadLetter(max);
    await w.publish(1);
    await w.subscribe();
    const consumer = w.consumer('a', { ackTimeoutMs: ACK_TIMEOUT_MS, deadLetter: dlq.producer });
    const result = await dispatch(w.ctx, { cursor: w.cursor, consumer, max: 1 });
    if (result.kind !== 'delivered') throw new Error(result.kind);
    expect(result.deadLetterTimers).toEqual([]);
    const [entry] = await dueTracker(w);
    w.clock.advance(ACK_TIMEOUT_MS);
    expect(
      await deadLetterOnTimer(w.ctx, {
        cursor: w.cursor,
        entry: entry as TrackerEntry,
        deadLetter: dlq.producer,
      }),
    ).toEqual({});
    expect(dlq.published).toEqual([]);
    expect((await w.receive('b', 1)).map((d) => d.redeliveryCount)).toEqual([1]);
  });

  it('does nothing for a cursor that is gone', async () => {
    const { w, dlq, timer } = await twiceDelivered();
    await w.store.deleteCursor(w.cursor.cursorId);
    w.clock.advance(ACK_TIMEOUT_MS);
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(dlq.published).toEqual([]);
  });

  it('keeps its tracker entry while any part of it is still to come', async () => {
    const { w, dlq, timer, second } = await twiceDelivered();
    await acknowledge(w.ctx, w.cursor, [second.deliveries[1]!.position], { byId: false });
    const named = async () =>
      (await dueTracker(w)).filter(
        (e) => e.position.toString() === timer.entry.position.toString() && e.dueAtMs === timer.entry.dueAtMs,
      );
    expect(await named()).toHaveLength(1);
    w.clock.advance(ACK_TIMEOUT_MS - 1);
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({ retryAtMs: timer.entry.dueAtMs });
    expect(await named()).toHaveLength(1);
    expect(dlq.published).toEqual([]);
  });

  it('looks again at the earliest end of what still runs over the entry', async () => {
    const { w, timer, second } = await twiceDelivered();
    // A nack of the middle entry past maxRedeliverCount claims it for a dead letter whose publish
    // fails (not a refusal): the claim runs until DEAD_LETTER_CLAIM_MS from now.
    const failing = {
      maxRedeliverCount: 1,
      publish: async () => {
        throw new Error('network');
      },
    };
    await expect(
      negativeAcknowledge(w.ctx, {
        cursor: w.cursor,
        consumerId: 'a',
        items: [{ position: second.deliveries[1]!.position }],
        delayMs: () => 0,
        deadLetter: failing,
      }),
    ).rejects.toThrow('network');
    w.clock.advance(ACK_TIMEOUT_MS - 1);
    // The ack timeout of the other two ends first.
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({ retryAtMs: timer.entry.dueAtMs });
    w.clock.advance(1);
    await deadLetterOnTimer(w.ctx, timer);
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({
      retryAtMs: timer.entry.dueAtMs - ACK_TIMEOUT_MS + DEAD_LETTER_CLAIM_MS,
    });
  });
});

/** A store that records the pages each readPages call asks for. */
class PageCountingStore extends InMemoryDispatchStore {
  pagesRead: string[] = [];

  override async readPages(...args: Parameters<InMemoryDispatchStore['readPages']>) {
    this.pagesRead.push(...args[1].map((ref) => `${ref.ledgerId}:${ref.page}`));
    return super.readPages(...args);
  }
}

const published = (dlq: ReturnType<typeof recordingDeadLetter>) =>
  dlq.published.flatMap((p) => p.entries.map((e) => e.position.toString()));

describe('deadLetterOnTimer: what it reads, and how much one call does', () => {
  it('reads the one page of an entry that fills a page', async () => {
    const store = new PageCountingStore();
    const { w, dlq, timer } = await twiceDelivered(100, store);
    expect([timer.entry.position.toString(), timer.entry.n]).toEqual(['1:0', 100]);
    w.clock.advance(ACK_TIMEOUT_MS);
    store.pagesRead = [];
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(published(dlq)).toHaveLength(100);
    // The timer's own read, then the dead-letter step's: page 0 only.
    expect(new Set(store.pagesRead)).toEqual(new Set(['1:0']));
  });

  it('publishes at most casAttempts stretches a call, the rest on the next', async () => {
    const { w, dlq, timer, second } = await twiceDelivered(11);
    const odd = second.deliveries.filter((_, i) => i % 2 === 1).map((d) => d.position);
    await acknowledge(w.ctx, w.cursor, odd, { byId: false });
    w.clock.advance(ACK_TIMEOUT_MS);
    // Six stretches (1:0, 1:2, ..., 1:10), each published by its own dead-letter step.
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(published(dlq)).toEqual(['1:0', '1:2', '1:4', '1:6', '1:8'].slice(0, w.ctx.limits.casAttempts));
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(published(dlq)).toEqual(['1:0', '1:2', '1:4', '1:6', '1:8', '1:10']);
  });

  it('publishes nothing of a stretch retention deleted part of, and keeps its tracker entry', async () => {
    const { w, dlq, timer } = await twiceDelivered(3);
    const trimmed = await w.ledger.trim(WORLD_PARTITION, {
      consumedUpTo: Position.of(1, 0),
      retentionTimeMs: 0,
      retentionSizeBytes: -1,
      nowMs: w.clock.nowMs() + 1,
      maxBatches: 10,
    });
    expect(trimmed?.entries).toBe(1);
    w.clock.advance(ACK_TIMEOUT_MS);
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(dlq.published).toEqual([]);
    const named = (await dueTracker(w)).filter((e) => e.position.equals(timer.entry.position));
    expect(named.map((e) => e.dueAtMs)).toContain(timer.entry.dueAtMs);
  });
});

describe('deadLetterOnTimer: when it says to look again', () => {
  it('not for an entry handed out again since, whatever its new ack timeout', async () => {
    const w = engineWorld({ type: 'Shared' });
    const dlq = recordingDeadLetter(0);
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2, { ackTimeoutMs: ACK_TIMEOUT_MS });
    const [entry] = await dueTracker(w);
    w.clock.advance(ACK_TIMEOUT_MS);
    // b gets them again (count 1) with an ack timeout running: a's entry can never be true again.
    expect((await w.receive('b', 2, { ackTimeoutMs: 60_000 })).map((d) => d.redeliveryCount)).toEqual([1, 1]);
    const timer = { cursor: w.cursor, entry: entry as TrackerEntry, deadLetter: dlq.producer };
    expect(await deadLetterOnTimer(w.ctx, timer)).toEqual({});
    expect(dlq.published).toEqual([]);
  });

  it('not for an entry whose claim never landed (no run covers it yet)', async () => {
    const w = engineWorld({ type: 'Shared' });
    const dlq = recordingDeadLetter(0);
    await w.publish(3);
    await w.subscribe();
    const entry: TrackerEntry = {
      dueAtMs: w.clock.nowMs(),
      position: Position.of(1, 1),
      deliveries: 1,
      n: 2,
    };
    await w.store.putTracker(w.cursor.cursorId, [entry]);
    expect(await deadLetterOnTimer(w.ctx, { cursor: w.cursor, entry, deadLetter: dlq.producer })).toEqual({});
    expect(dlq.published).toEqual([]);
  });

  it.each([
    ['no ack timeout', undefined],
    ['an ack timeout ending now', ACK_TIMEOUT_MS],
  ])('not for a redelivery whose head write died, over a run held with %s', async (_, ackTimeoutMs) => {
    const w = engineWorld({ type: 'Shared' });
    const dlq = recordingDeadLetter(0);
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 3, ackTimeoutMs === undefined ? {} : { ackTimeoutMs });
    w.clock.advance(ackTimeoutMs ?? 0);
    // The tracker entry of a second delivery, whose head write never landed: the run still says 1.
    const entry: TrackerEntry = {
      dueAtMs: w.clock.nowMs(),
      position: Position.of(1, 0),
      deliveries: 2,
      n: 3,
    };
    await w.store.putTracker(w.cursor.cursorId, [entry]);
    expect(await deadLetterOnTimer(w.ctx, { cursor: w.cursor, entry, deadLetter: dlq.producer })).toEqual({});
    expect(dlq.published).toEqual([]);
  });
});
