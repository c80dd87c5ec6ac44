import { describe, expect, it } from 'vitest';
import { negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { engineWorld } from '../../../support/engine-world.ts';

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
