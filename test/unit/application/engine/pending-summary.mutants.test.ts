import { describe, expect, it } from 'vitest';
import { acknowledge, negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import { engineWorld } from '../../../support/engine-world.ts';

// What the pending summary counts (Pulsar's unackedMessages, per consumer, the overdue ones, the
// delayed ones, the last ack), over the engine's own writes (mutation testing, issue 21 criterion 5).

/** The summary as plain data. */
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
    expect(await summaryOf(w)).toMatchObject({
      unacked: 5,
      byConsumer: { a: 3, b: 2 },
      overdue: {},
      delayed: 0,
    });
    w.clock.advance(9_999);
    expect((await summaryOf(w)).overdue).toEqual({});
    w.clock.advance(1);
    expect(await summaryOf(w)).toMatchObject({ unacked: 5, byConsumer: { a: 3, b: 2 }, overdue: { a: 3 } });
  });

  it('leaves out what was acknowledged, and tells when the last ack was', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(4);
    await w.subscribe();
    const held = await w.receive('a', 4);
    expect((await summaryOf(w)).lastAckedAtMs).toBeUndefined();
    w.clock.advance(500);
    await acknowledge(w.ctx, w.cursor, [held[1]!.position], { byId: false });
    expect(await summaryOf(w)).toMatchObject({ unacked: 3, byConsumer: { a: 3 }, lastAckedAtMs: 1_000_500 });
  });

  it('counts entries held back until their deliverAt as delayed until then, and never as unacked', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.subscribe();
    await w.publish(2);
    await w.publish(3, { deliverAtMs: 1_000_000 + 5_000 });
    expect(await w.receive('a', 10)).toHaveLength(2);
    expect(await summaryOf(w)).toMatchObject({ unacked: 2, byConsumer: { a: 2 }, delayed: 3 });
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
    expect(await summaryOf(w)).toMatchObject({ unacked: 2, byConsumer: { a: 2 }, delayed: 0 });
  });

  it('counts runs the head spilled to pages once each, across consumers', async () => {
    const w = engineWorld({ type: 'Shared', limits: { maxHeadRuns: 4 } });
    await w.publish(40);
    await w.subscribe();
    for (let i = 0; i < 20; i++) expect(await w.receive(i % 2 === 0 ? 'a' : 'b', 1)).toHaveLength(1);
    expect(await w.receive('c', 5)).toHaveLength(5);
    expect(await summaryOf(w)).toMatchObject({ unacked: 25, byConsumer: { a: 10, b: 10, c: 5 } });
  });
});
