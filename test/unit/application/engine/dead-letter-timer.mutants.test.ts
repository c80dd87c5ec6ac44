import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_CLAIM_MS } from '../../../../shared/application/engine/dead-letter-claim.ts';
import { deadLetterOnTimer } from '../../../../shared/application/engine/dead-letter-timer.ts';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import { acknowledge, negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import type { TrackerEntry } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, recordingDeadLetter } from '../../../support/engine-world.ts';

// The server's dead-letter timer (Pulsar dead-letters on its timer, not on the next receive;
// issue 21 defect 2), over the engine's own writes (mutation testing, issue 21 criterion 5).

const ACK_TIMEOUT_MS = 1_000;

/**
 * Three entries handed to `a` with maxRedeliverCount 1: once (count 0), then again after the ack
 * timeout (count 1), whose dead-letter timers the second receive answers.
 */
async function twiceDelivered(count = 3) {
  const w = engineWorld({ type: 'Shared' });
  const dlq = recordingDeadLetter(1);
  await w.publish(count);
  await w.subscribe();
  const consumer = w.consumer('a', { ackTimeoutMs: ACK_TIMEOUT_MS, deadLetter: dlq.producer });
  const receive = async () => {
    const result = await dispatch(w.ctx, { cursor: w.cursor, consumer, max: 10 });
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
