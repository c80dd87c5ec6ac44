import { describe, expect, it } from 'vitest';
import {
  consumerRoom,
  UNACKED_COUNT_NEAR_CAP_TTL_MS,
  UNACKED_COUNT_TTL_MS,
} from '../../../../shared/application/engine/consumer-cap.ts';
import type { EngineContext } from '../../../../shared/application/engine/engine-context.ts';
import { newDispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { engineWorld } from '../../../support/engine-world.ts';

// Pulsar's maxUnackedMessagesPerConsumer: the room a consumer has, with and without a count
// (mutation testing, issue 21 criterion 5).

const CAP = 100;

/** A window of `size` entries (mark-delete before 1:0, read position 1:size), cap 100. */
async function windowOf(size: number) {
  const w = engineWorld({ type: 'Shared', limits: { maxUnackedPerConsumer: CAP } });
  await w.publish(size);
  return { w, head: newDispatchHead(Position.beforeFirst(1n), Position.of(1, size)) };
}

describe('consumerRoom', () => {
  it('is the cap less the window, counting nothing, while the window and what is wanted fit the cap', async () => {
    const { w, head } = await windowOf(30);
    const asked: number[] = [];
    const ctx: EngineContext = {
      ...w.ctx,
      unackedByConsumer: async (_cursor, maxAgeMs) => {
        asked.push(maxAgeMs);
        return new Map();
      },
    };
    expect(await consumerRoom(ctx, w.cursor, { head, consumerId: 'a', wanted: 70 })).toBe(70);
    expect(await consumerRoom(ctx, w.cursor, { head, consumerId: 'a', wanted: 10 })).toBe(70);
    expect(asked).toEqual([]);
  });

  // A count cached for UNACKED_COUNT_TTL_MS says `cached`; taken again within
  // UNACKED_COUNT_NEAR_CAP_TTL_MS (after acks), it says 40.
  it.each([
    [89, 11, [UNACKED_COUNT_TTL_MS]],
    [90, 10, [UNACKED_COUNT_TTL_MS]],
    [91, 60, [UNACKED_COUNT_TTL_MS, UNACKED_COUNT_NEAR_CAP_TTL_MS]],
    [100, 60, [UNACKED_COUNT_TTL_MS, UNACKED_COUNT_NEAR_CAP_TTL_MS]],
  ])('past the window: a count of %i held gives room %i, counted again near the cap', async (cached, room, ages) => {
    const { w, head } = await windowOf(150);
    const asked: number[] = [];
    const ctx: EngineContext = {
      ...w.ctx,
      unackedByConsumer: async (_cursor, maxAgeMs) => {
        asked.push(maxAgeMs);
        return new Map([['a', maxAgeMs === UNACKED_COUNT_TTL_MS ? cached : 40]]);
      },
    };
    expect(await consumerRoom(ctx, w.cursor, { head, consumerId: 'a', wanted: 10 })).toBe(room);
    expect(asked).toEqual(ages);
  });
});
