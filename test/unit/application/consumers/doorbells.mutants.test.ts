import { describe, expect, it } from 'vitest';
import { doorbellOf, ringAll, ringAt } from '../../../../shared/application/consumers/doorbells.ts';
import { NotFoundError } from '../../../../shared/domain/errors.ts';
import { InMemoryDeliveryQueue } from '../../../support/in-memory-delivery-queue.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// A subscription's doorbell: rings at a timer's due time, rounded up to whole seconds (never
// early), through SQS's delay up to its 900 s and the scheduler past it (mutation testing, issue 21
// criterion 5).

const NOW = 1_700_000_000_000;

function doorbells() {
  const clock = new ManualClock(NOW);
  const deliveryQueue = new InMemoryDeliveryQueue();
  const scheduler = new InMemoryScheduler();
  const { ports } = inMemoryPorts({ clock, deliveryQueue, scheduler });
  return { ports, deliveryQueue, scheduler };
}

describe('doorbells', () => {
  it('names the subscription’s unordered queue', () => {
    expect(doorbellOf('c9')).toEqual({ cursorId: 'c9', ordered: false });
  });

  it('rings at once for what is due, and after the delay rounded up to whole seconds otherwise', async () => {
    const { ports, deliveryQueue } = doorbells();
    await deliveryQueue.create(doorbellOf('c1'));
    await ringAt(ports, 'c1', NOW - 5_000);
    await ringAt(ports, 'c1', NOW);
    await ringAt(ports, 'c1', NOW + 1);
    await ringAt(ports, 'c1', NOW + 1_000);
    await ringAt(ports, 'c1', NOW + 1_001);
    await ringAt(ports, 'c1', NOW + 900_000);
    expect(deliveryQueue.rings.get('c1')).toEqual([0, 0, 1, 1, 2, 900]);
  });

  it('hands a ring past SQS’s longest delay to the scheduler, at its due time', async () => {
    const { ports, deliveryQueue, scheduler } = doorbells();
    await deliveryQueue.create(doorbellOf('c1'));
    await ringAt(ports, 'c1', NOW + 900_001);
    expect(deliveryQueue.rings.get('c1')).toEqual([]);
    expect(scheduler.take()).toEqual([{ kind: 'ring', cursorId: 'c1', dueAtMs: NOW + 900_001 }]);
  });

  it('rings nobody for a deleted subscription, and passes other failures on', async () => {
    const { ports, deliveryQueue } = doorbells();
    await expect(ringAt(ports, 'gone', NOW)).resolves.toBeUndefined();
    await deliveryQueue.create(doorbellOf('c1'));
    deliveryQueue.failNext('ring', new Error('throttled'));
    await expect(ringAt(ports, 'c1', NOW)).rejects.toThrow('throttled');
    deliveryQueue.failNext('ring', new NotFoundError('queue gone'));
    await expect(ringAt(ports, 'c1', NOW)).resolves.toBeUndefined();
  });

  it('rings once per distinct second of the timers', async () => {
    const { ports, deliveryQueue } = doorbells();
    await deliveryQueue.create(doorbellOf('c1'));
    await ringAll(ports, 'c1', [NOW + 100, NOW + 900, NOW + 1_000, NOW + 1_001, NOW + 2_000]);
    expect([...(deliveryQueue.rings.get('c1') ?? [])].sort()).toEqual([1, 2]);
    await ringAll(ports, 'c1', []);
    expect(deliveryQueue.rings.get('c1')).toHaveLength(2);
  });
});
