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
