import { describe, expect, it } from 'vitest';
import { type ByteBudget, budgetLeft } from '../../../../shared/application/engine/byte-budget.ts';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import type { Delivery } from '../../../../shared/application/engine/engine-context.ts';
import { negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { engineWorld, idsOf } from '../../../support/engine-world.ts';

// What an answer can still carry once earlier steps of the same receive filled part of it
// (mutation testing, issue 21 criterion 5).

/** Every delivery takes 100 bytes: 3 fit in 350. */
const budget: ByteBudget = { bytes: 350, costOf: () => 100 };

describe('budgetLeft', () => {
  it('is the budget less what the deliveries already in the answer take', () => {
    const delivery = {} as Delivery;
    expect(budgetLeft(budget, [delivery, delivery])?.bytes).toBe(150);
    expect(budgetLeft(budget, [])?.bytes).toBe(350);
    expect(budgetLeft(undefined, [delivery])).toBeUndefined();
  });

  it('lets a receive hand out first deliveries only within what its redeliveries left', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(5);
    await w.subscribe();
    const held = await w.receive('a', 2);
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'a',
      items: held.map((d) => ({ position: d.position })),
      delayMs: () => 0,
    });
    const result = await dispatch(w.ctx, { cursor: w.cursor, consumer: w.consumer('b'), max: 10, budget });
    if (result.kind !== 'delivered') throw new Error(result.kind);
    expect(idsOf(result.deliveries)).toEqual(['1:0', '1:1', '1:2']);
    expect(result.deliveries.map((d) => d.redeliveryCount)).toEqual([1, 1, 0]);
  });
});
