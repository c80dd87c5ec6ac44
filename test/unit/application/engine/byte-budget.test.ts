// The answer's byte budget in the dispatcher: every step (first deliveries, due redeliveries, an
// Exclusive replay) stops before the first delivery the answer cannot carry, and records as held
// only what it hands out, so nothing is held by a consumer that never saw it.
import { describe, expect, it } from 'vitest';
import { type ByteBudget, ByteTally } from '../../../../shared/application/engine/byte-budget.ts';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type Delivery,
  type DispatchConsumer,
  type EngineContext,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import { planFirstDeliveries } from '../../../../shared/application/engine/first-deliveries.ts';
import { negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { pendingSummary } from '../../../../shared/application/engine/pending-summary.ts';
import { rewind } from '../../../../shared/application/engine/release.ts';
import { createSubscriptionCursor } from '../../../../shared/application/engine/subscription-cursor.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const partition = TopicName.parse('persistent://public/default/budget');

/** A budget that counts a delivery as its payload's length: 100-byte payloads, so 3 fit in 350. */
const payloadBudget = (bytes: number): ByteBudget => ({
  bytes,
  costOf: (delivery) => delivery.entry.payload.length,
});

async function world(type: SubscriptionType, count: number) {
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(1000);
  const store = new InMemoryDispatchStore();
  const ctx: EngineContext = { store, ledger, clock, limits: DEFAULT_ENGINE_LIMITS };
  const cursor: PartitionCursor = { partition, cursorId: 'c1', type };
  const consumer: DispatchConsumer = { consumerId: 'a', ackTimeoutMs: () => 0, leaseMs: 60_000 };
  await ledger.initialize(partition);
  const { positions } = await ledger.append(
    partition,
    Array.from({ length: count }, (_, i) => ({ payload: `${i}`.padEnd(100, '.'), properties: {} })),
    clock.nowMs(),
  );
  await createSubscriptionCursor(ctx, cursor, 'Earliest');
  const receive = async (budget?: ByteBudget, max = 100) => {
    const result = await dispatch(ctx, { cursor, consumer, max, ...(budget ? { budget } : {}) });
    if (result.kind !== 'delivered') throw new Error(`not delivered: ${result.kind}`);
    return result;
  };
  const held = async () => (await pendingSummary(ctx, cursor)).unackedByConsumer.get('a') ?? 0;
  return { clock, store, ctx, cursor, positions, receive, held };
}

const ids = (deliveries: readonly Delivery[]) => deliveries.map((d) => d.position.toString());

describe('the byte budget of an answer, in the dispatcher', () => {
  it('first deliveries stop before the first one over the budget; the next receive starts there', async () => {
    const w = await world('Shared', 10);

    const first = await w.receive(payloadBudget(350));
    const heldAfterFirst = await w.held();
    const second = await w.receive(payloadBudget(350));
    const rest = await w.receive();

    expect(ids(first.deliveries)).toEqual(ids0(w.positions.slice(0, 3)));
    expect(first.full).toBe(true);
    expect(first.caughtUp).toBe(false);
    expect(heldAfterFirst).toBe(3);
    expect(ids(second.deliveries)).toEqual(ids0(w.positions.slice(3, 6)));
    expect(ids(rest.deliveries)).toEqual(ids0(w.positions.slice(6)));
    expect(rest.full).toBe(false);
    expect(await w.held()).toBe(10);
  });

  it('a budget that cannot carry the first entry claims nothing and writes nothing', async () => {
    const w = await world('Shared', 3);
    const before = await w.store.readHead(w.cursor.cursorId);

    const none = await w.receive(payloadBudget(99));
    const after = await w.store.readHead(w.cursor.cursorId);

    expect(none.deliveries).toEqual([]);
    expect(none.full).toBe(true);
    expect(after?.version).toBe(before?.version);
    expect(await w.held()).toBe(0);
  });

  it('due redeliveries stop at the budget and the rest stay due, with their count', async () => {
    const w = await world('Shared', 5);
    const handed = await w.receive();
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: handed.deliveries.map((d) => ({ position: d.position, redeliveryCount: d.redeliveryCount })),
      delayMs: () => 0,
    });

    const first = await w.receive(payloadBudget(250));
    const heldAfterFirst = await w.held();
    const second = await w.receive(payloadBudget(250));
    const third = await w.receive(payloadBudget(250));

    const counted = (r: { deliveries: readonly Delivery[] }) =>
      r.deliveries.map((d) => [d.position.toString(), d.redeliveryCount]);
    expect(counted(first)).toEqual(w.positions.slice(0, 2).map((p) => [p.toString(), 1]));
    expect(first.full).toBe(true);
    expect(heldAfterFirst).toBe(2);
    expect(counted(second)).toEqual(w.positions.slice(2, 4).map((p) => [p.toString(), 1]));
    expect(counted(third)).toEqual(w.positions.slice(4).map((p) => [p.toString(), 1]));
    expect(await w.held()).toBe(5);
  });

  it('an Exclusive replay stops at the budget and resumes there, in order', async () => {
    const w = await world('Exclusive', 6);
    await w.receive();
    await rewind(w.ctx, w.cursor, { consumerId: 'a' });

    const first = await w.receive(payloadBudget(450));
    const second = await w.receive(payloadBudget(450));

    expect(ids(first.deliveries)).toEqual(ids0(w.positions.slice(0, 4)));
    expect(first.deliveries.every((d) => d.redeliveryCount === 1)).toBe(true);
    expect(first.full).toBe(true);
    expect(ids(second.deliveries)).toEqual(ids0(w.positions.slice(4)));
  });

  it('a plan of first deliveries ends its read position after the last delivery that fits', async () => {
    const w = await world('Shared', 4);
    const head = (await w.store.readHead(w.cursor.cursorId))?.head;
    const entries = await w.ctx.ledger.readEntries(w.positions[0]?.ledgerId ?? 0n, 0n, 3n);

    const plan = planFirstDeliveries({
      head: head as NonNullable<typeof head>,
      pages: new Map(),
      entries,
      max: 100,
      consumer: { consumerId: 'a', ackTimeoutMs: () => 0, leaseMs: 60_000 },
      type: 'Shared',
      nowMs: w.clock.nowMs(),
      maxNewRuns: 12,
      budget: payloadBudget(200),
    });

    expect(ids(plan.deliveries)).toEqual(ids0(w.positions.slice(0, 2)));
    expect(plan.nextReadPosition?.toString()).toBe(w.positions[2]?.toString());
    expect(plan.runs.map((run) => run.n)).toEqual([2]);
    expect(plan.full).toBe(true);
  });

  it.each([
    ['no budget', undefined, [true, true, true]],
    ['exactly two', 200, [true, true, false]],
    ['stops for good at the first refusal', 150, [true, false, false]],
  ])('a tally admits in order (%s)', (_, bytes, expected) => {
    const tally = new ByteTally(bytes === undefined ? undefined : payloadBudget(bytes));
    const delivery = (payload: string): Delivery => ({
      position: Position.of(1, 0),
      redeliveryCount: 0,
      entry: { position: Position.of(1, 0), payload, properties: {}, publishTimeMs: 0 },
    });

    const admitted = ['x'.repeat(100), 'y'.repeat(100), 'z'.repeat(10)].map((p) => tally.admits(delivery(p)));

    // The third (10 bytes) would fit after a refusal, but a plan that stopped takes nothing more.
    expect(admitted).toEqual(expected);
    expect(tally.full).toBe(admitted.includes(false));
  });
});

function ids0(positions: readonly Position[]): string[] {
  return positions.map(String);
}
