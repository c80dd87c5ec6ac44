// Attack on maintenance's activity index (maintain-subscriptions.ts): maintenance visits only
// subscriptions in the index. A publish that stored its entries and then died before its rings
// and its activity mark (a Lambda container killed between the two, or SQS and the index write
// both failing, which publish swallows) leaves a stored, unacknowledged entry that nothing ever
// rings for. An event-driven (Lambda) consumer only runs when its doorbell rings, so the entry is
// never delivered though every fault stopped (I2). Before the index, maintenance's catalog scan
// found the backlog and rang (STALE_BACKLOG_MS). Fixed: publish marks the partition's
// subscriptions active before it writes the entries.
import { describe, expect, it } from 'vitest';
import { subscribeConsumer } from '../../../shared/application/consumers/subscribe-consumer.ts';
import { MARK_EVERY_MS } from '../../../shared/application/maintenance/activity.ts';
import { maintainSubscriptions } from '../../../shared/application/maintenance/maintain-subscriptions.ts';
import { publishMessages } from '../../../shared/application/producers/publish-messages.ts';
import { skipMessages } from '../../../shared/application/subscriptions/skip-messages.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../shared/application/topics/manage-topics.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import { InMemoryActivityIndex } from '../../support/in-memory-activity-index.ts';
import { InMemoryConsumerRegistry } from '../../support/in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from '../../support/in-memory-delivery-queue.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };

describe('maintenance rings for a backlog whose publish died before ringing', () => {
  it('an entry stored by a publish that died before its rings and mark still gets a ring', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const activity = new InMemoryActivityIndex();
    void activity.markSeeded();
    const deliveryQueue = new InMemoryDeliveryQueue();
    const { ports } = inMemoryPorts({
      clock,
      activity,
      deliveryQueue,
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
    });
    const topic = TopicName.parse('persistent://public/default/lambda-fed');
    await createTopic(ports, admin, topic, 0);
    // An event-driven consumer (no lease: durable), caught up and settled out of the index.
    await subscribeConsumer(ports, admin, {
      topic,
      subscription: 'fn',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
      lambda: { functionTimeoutMs: 10_000 },
    });
    await publishMessages(ports, admin, topic, {
      messages: [{ payload: 'first', properties: {} }],
      router: new RoundRobinRouter(0),
    });
    await skipMessages(ports, admin, topic, { subscriptionName: 'fn', numMessages: 1 });
    clock.advance(MARK_EVERY_MS);
    await maintainSubscriptions(ports, { deadlineMs: Number.MAX_SAFE_INTEGER });
    expect(activity.entries.size).toBe(0);
    const cursorId = (await ports.catalog.getSubscription(topic, 'fn'))?.cursorId as string;
    deliveryQueue.rings.set(cursorId, []);

    // A publish whose process dies once the entry is stored, before it rings.
    clock.advance(MARK_EVERY_MS);
    const dying = {
      ...ports,
      ledger: Object.assign(Object.create(ports.ledger), {
        append: async (...args: Parameters<typeof ports.ledger.append>) => {
          await ports.ledger.append(...args);
          throw new Error('killed after the append');
        },
      }),
    };
    await expect(
      publishMessages(dying, admin, topic, {
        messages: [{ payload: 'orphan', properties: {} }],
        router: new RoundRobinRouter(0),
      }),
    ).rejects.toThrow('killed after the append');
    expect(deliveryQueue.rings.get(cursorId) ?? []).toEqual([]);

    // Faults are over. Maintenance runs every minute for two hours.
    for (let minute = 0; minute < 120; minute++) {
      clock.advance(60_000);
      await maintainSubscriptions(ports, { deadlineMs: Number.MAX_SAFE_INTEGER });
    }
    expect(deliveryQueue.rings.get(cursorId)?.length ?? 0).toBeGreaterThan(0);
  });
});
