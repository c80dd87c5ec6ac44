// Attack on the "caught up" shortcut (receive-messages.ts, ContainerHints.caughtUp): a long poll in a
// process that holds a caught-up mark skips its first dispatch and waits on the doorbell. When
// the ring went to another process, the message sits there for the whole poll (20 s), not for
// the mark's life (5 s) that container-hints.ts promises.
import { describe, expect, it } from 'vitest';
import { receiveMessages } from '../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../shared/application/consumers/subscribe-consumer.ts';
import { CAUGHT_UP_TTL_MS } from '../../../shared/application/container-hints.ts';
import { publishMessages } from '../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { SubscriptionQueue } from '../../../shared/ports/delivery-queue.ts';
import { InMemoryConsumerRegistry } from '../../support/in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from '../../support/in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from '../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../support/in-memory-ledger.ts';
import { InMemoryPermissionStore } from '../../support/in-memory-permission-store.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../support/in-memory-scheduler.ts';
import { InMemoryTopicCatalog } from '../../support/in-memory-topic-catalog.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/long-poll');

/** A doorbell whose wait takes the time it waits when nothing rang (as SQS's long poll does). */
class WaitingDeliveryQueue extends InMemoryDeliveryQueue {
  constructor(private readonly clock: ManualClock) {
    super();
  }

  override async waitForRing(queue: SubscriptionQueue, waitMs = 0): Promise<boolean> {
    const rang = await super.waitForRing(queue);
    if (!rang && waitMs > 0) this.clock.advance(waitMs);
    return rang;
  }
}

describe('caught-up mark and long polls', () => {
  it('a long poll finds a message whose ring went to another process within the mark life', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const shared = {
      clock,
      catalog: new InMemoryTopicCatalog(),
      ledger: new InMemoryLedger(1000),
      dispatch: new InMemoryDispatchStore(),
      deliveryQueue: new WaitingDeliveryQueue(clock),
      consumers: new InMemoryConsumerRegistry(),
      permissions: new InMemoryPermissionStore(),
      scheduler: new InMemoryScheduler(),
    };
    const first: UseCasePorts = inMemoryPorts(shared).ports;
    const second: UseCasePorts = inMemoryPorts(shared).ports;
    const subscribe = async (ports: UseCasePorts) =>
      (
        await subscribeConsumer(ports, admin, {
          topic,
          subscription: 'sub',
          subscriptionType: 'Shared',
          initialPosition: 'Earliest',
          policy: {},
        })
      ).consumerId;
    const a = await subscribe(first);
    const b = await subscribe(second);
    // Both processes see the subscription caught up (their marks are set).
    expect(await receiveMessages(first, admin, a, { maxMessages: 10 })).toEqual([]);
    expect(await receiveMessages(second, admin, b, { maxMessages: 10 })).toEqual([]);
    // One publish of two messages: one ring, taken by the first process (its receive asks the
    // doorbell first), which takes one message.
    await publishMessages(first, admin, topic, {
      messages: [
        { payload: 'p0', properties: {} },
        { payload: 'p1', properties: {} },
      ],
      router: new RoundRobinRouter(0),
    });
    const taken = await receiveMessages(first, admin, a, { maxMessages: 1 });
    expect(taken.map((message) => message.payload)).toEqual(['p0']);

    // p1 is there; a long poll of the second process must find it within the mark's life.
    const started = clock.nowMs();
    const found = await receiveMessages(second, admin, b, { maxMessages: 10, waitMs: 30_000 });
    expect(found.map((message) => message.payload)).toEqual(['p1']);
    expect(clock.nowMs() - started).toBeLessThanOrEqual(CAUGHT_UP_TTL_MS);
  });
});
