import { describe, expect, it } from 'vitest';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import { bytesOf, DEFAULT_ENGINE_LIMITS } from '../../../../shared/application/engine/engine-context.ts';
import { cursorOf, engineOf } from '../../../../shared/application/engine/engine-ports.ts';
import { createSubscriptionCursor } from '../../../../shared/application/engine/subscription-cursor.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// The delivery engine's context as the use cases build it from their ports (mutation testing,
// issue 21 criterion 5).

const partition = TopicName.parse('persistent://public/default/engine-ports');

describe('engineOf', () => {
  it('works on the ports’ store, ledger and clock, with the default limits unless given', async () => {
    const { ports } = inMemoryPorts();
    const ctx = engineOf(ports);
    expect(ctx.store).toBe(ports.dispatch);
    expect(ctx.ledger).toBe(ports.ledger);
    expect(ctx.clock).toBe(ports.clock);
    expect(ctx.limits).toEqual(DEFAULT_ENGINE_LIMITS);
    expect(ctx.pauseAfterConflict).toBeUndefined();
    const limits = { ...DEFAULT_ENGINE_LIMITS, casAttempts: 2 };
    const pauses: number[] = [];
    const pauseAfterConflict = async (attempt: number) => {
      pauses.push(attempt);
    };
    const given = engineOf(inMemoryPorts({ engineLimits: limits, pauseAfterConflict }).ports);
    expect(given.limits).toBe(limits);
    await given.pauseAfterConflict?.(3);
    expect(pauses).toEqual([3]);
  });

  it('answers the partition’s recent state from the ledger', async () => {
    const { ports } = inMemoryPorts();
    await ports.ledger.initialize(partition);
    await ports.ledger.append(partition, [{ payload: 'a', properties: {} }], ports.clock.nowMs());
    const state = await engineOf(ports).recentState?.(partition);
    expect(state?.ledgers.map((ledger) => ledger.entries)).toEqual([1n]);
  });

  it('counts each consumer’s unacknowledged entries, remembers them for the age allowed, and adds what it hands out', async () => {
    const clock = new ManualClock(1_000_000);
    const { ports } = inMemoryPorts({ clock });
    const ctx = engineOf(ports);
    const cursor = { partition, cursorId: 'c1', type: 'Shared' as const };
    await ports.ledger.initialize(partition);
    await ports.ledger.append(
      partition,
      Array.from({ length: 5 }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      clock.nowMs(),
    );
    await createSubscriptionCursor(ctx, cursor, 'Earliest');
    const consumer = { consumerId: 'a', ackTimeoutMs: () => 0, leaseMs: 60_000 };
    await dispatch(ctx, { cursor, consumer, max: 2 });
    expect(Object.fromEntries((await ctx.unackedByConsumer?.(cursor, 10_000)) ?? [])).toEqual({ a: 2 });
    // Handed out through this context: added to the count remembered.
    await dispatch(ctx, { cursor, consumer: { ...consumer, consumerId: 'b' }, max: 1 });
    expect(Object.fromEntries((await ctx.unackedByConsumer?.(cursor, 10_000)) ?? [])).toEqual({ a: 2, b: 1 });
    ctx.handedTo?.(cursor, 'a', 3);
    expect(Object.fromEntries((await ctx.unackedByConsumer?.(cursor, 10_000)) ?? [])).toEqual({ a: 5, b: 1 });
    // Older than allowed: counted again from the pages.
    clock.advance(10_000);
    expect(Object.fromEntries((await ctx.unackedByConsumer?.(cursor, 10_000)) ?? [])).toEqual({ a: 2, b: 1 });
  });
});

describe('cursorOf', () => {
  it('addresses the consumer’s subscription on one partition', () => {
    expect(
      cursorOf(
        { subscriptionType: 'Key_Shared' },
        {
          topic: 'persistent://public/default/t-partition-1',
          partitionIndex: 1,
          cursorId: 'cur-1',
        },
      ),
    ).toEqual({
      partition: TopicName.parse('persistent://public/default/t-partition-1'),
      cursorId: 'cur-1',
      type: 'Key_Shared',
    });
  });
});

describe('bytesOf', () => {
  it('adds the payloads’ UTF-8 bytes', () => {
    const delivery = (payload: string) => ({
      position: Position.of(1, 0),
      redeliveryCount: 0,
      entry: { payload } as never,
    });
    expect(bytesOf([])).toBe(0);
    expect(bytesOf([delivery('abc'), delivery('é')])).toBe(5);
  });
});
