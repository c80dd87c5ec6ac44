// What a long poll of a Key_Shared member costs on an idle partitioned topic: with nobody else
// receiving, no claim is lost, so the receive must not re-read its partitions every 100 ms (the
// contended recheck) for the whole wait.
import { describe, expect, it } from 'vitest';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { engineOf } from '../../../../shared/application/engine/engine-ports.ts';
import { keySharedJoinMark } from '../../../../shared/application/engine/key-shared-routing.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { SubscriptionQueue } from '../../../../shared/ports/delivery-queue.ts';
import type { DispatchStore } from '../../../../shared/ports/dispatch-store.ts';
import { InMemoryDeliveryQueue } from '../../../support/in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { twoProcesses } from '../../../support/in-memory-processes.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/idle');

/** Doorbells whose wait lasts the time it waits when nothing rang (SQS's long poll). */
class WaitingDoorbells extends InMemoryDeliveryQueue {
  readonly waits: number[] = [];

  constructor(private readonly clock: ManualClock) {
    super();
  }

  override async waitForRing(queue: SubscriptionQueue, waitMs = 0): Promise<boolean> {
    this.waits.push(waitMs);
    const woke = await super.waitForRing(queue);
    if (!woke) this.clock.advance(waitMs);
    return woke;
  }
}

/** The in-memory dispatch store, counting every call made on it. */
function countingStore(): { store: DispatchStore; calls: () => number } {
  let calls = 0;
  const store = new Proxy(new InMemoryDispatchStore(), {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls += 1;
        return value.apply(target, args);
      };
    },
  });
  return { store, calls: () => calls };
}

/**
 * A Key_Shared subscribe that died between its join mark and its registration: each partition's
 * head names a member joining that never registers (it holds receives back JOIN_PENDING_MS).
 */
async function subscribeDiedAfterJoinMark(ports: UseCasePorts, partitions: number): Promise<void> {
  const names = partitions === 0 ? [topic] : Array.from({ length: partitions }, (_, i) => topic.partition(i));
  for (const partition of names) {
    const cursorId = (await ports.catalog.getSubscription(partition, 'sub'))?.cursorId as string;
    await keySharedJoinMark(engineOf(ports), { partition, cursorId, type: 'Key_Shared' }, 'died');
  }
}

async function idleReceive(type: SubscriptionType, partitions: number, joinLeftBehind = false) {
  const clock = new ManualClock(1_700_000_000_000);
  const doorbells = new WaitingDoorbells(clock);
  const counting = countingStore();
  const [ports] = twoProcesses({ clock, deliveryQueue: doorbells, dispatch: counting.store });
  await createTopic(ports, admin, topic, partitions);
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: type,
    initialPosition: 'Earliest',
    policy: {},
  });
  // The member's first poll: it joins the key ranges and finds every partition caught up.
  expect(await receiveMessages(ports, admin, consumerId, { maxMessages: 10 })).toEqual([]);
  if (joinLeftBehind) await subscribeDiedAfterJoinMark(ports, partitions);
  const before = counting.calls();
  doorbells.waits.splice(0);
  const start = clock.nowMs();

  const found = await receiveMessages(ports, admin, consumerId, { maxMessages: 10, waitMs: 20_000 });

  return { found, calls: counting.calls() - before, waits: doorbells.waits, tookMs: clock.nowMs() - start };
}

describe('a long poll on an idle topic', () => {
  it.each([
    ['Key_Shared', 3, ''],
    ['Key_Shared', 1, ''],
    ['Shared', 3, ''],
    ['Key_Shared', 3, 'a subscribe died after its join mark'],
    ['Key_Shared', 1, 'a subscribe died after its join mark'],
  ] as const)('%s on %i partition(s) %s: no 100 ms rechecks, a bounded count of store calls', async (type, partitions, died = '') => {
    const { found, calls, waits, tookMs } = await idleReceive(type, partitions, died !== '');

    expect(found).toEqual([]);
    expect(tookMs).toBeGreaterThanOrEqual(20_000);
    // Nobody else receives: no wait is a contended recheck.
    expect(waits.filter((waitMs) => waitMs <= 100)).toEqual([]);
    // A partitioned topic polls each doorbell a second at a time (20 rounds); a round reads each
    // partition's head and little else.
    expect(calls).toBeLessThanOrEqual(20 * partitions * 3);
  });
});
