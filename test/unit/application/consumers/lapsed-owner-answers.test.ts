// A Failover owner that went silent past its lease is replaced by the next consumer's receive; its
// own later calls are refused: 409 while its record exists (fenced by the epoch), 404 saying its
// lease lapsed once maintenance removed the record. Never a delivery.
import { describe, expect, it } from 'vitest';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { maintainSubscriptions } from '../../../../shared/application/maintenance/maintain-subscriptions.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { NotFoundError } from '../../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { ConsumerFencedError } from '../../../../shared/domain/ownership.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/lapsed-owner');
const leaseMs = 10_000;

describe('a replaced owner whose lease lapsed', () => {
  it('is refused with 409 before maintenance and with 404 naming the lapsed lease after it', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const { ports } = inMemoryPorts({
      clock,
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
    });
    const subscribe = async () =>
      (
        await subscribeConsumer(ports, admin, {
          topic,
          subscription: 'sub',
          subscriptionType: 'Failover',
          initialPosition: 'Earliest',
          policy: {},
          leaseMs,
        })
      ).consumerId;
    const owner = await subscribe();
    await publishMessages(ports, admin, topic, {
      messages: [{ payload: 'm0', properties: {} }],
      router: new RoundRobinRouter(0),
    });
    expect(
      (await receiveMessages(ports, admin, owner, { maxMessages: 1 })).map((m) => m.redeliveryCount),
    ).toEqual([0]);

    clock.advance(leaseMs + 1);
    const standby = await subscribe();
    expect(
      (await receiveMessages(ports, admin, standby, { maxMessages: 1 })).map((m) => m.redeliveryCount),
    ).toEqual([1]);
    await expect(receiveMessages(ports, admin, owner, { maxMessages: 1 })).rejects.toThrow(
      ConsumerFencedError,
    );

    // Its refused call still renewed its membership; silent for another lease, maintenance removes it.
    clock.advance(leaseMs + 1);
    await maintainSubscriptions(ports, { deadlineMs: Number.MAX_SAFE_INTEGER });
    const gone = receiveMessages(ports, admin, owner, { maxMessages: 1 });
    await expect(gone).rejects.toThrow(NotFoundError);
    await expect(gone).rejects.toThrow(/lease lapsed/);
  });
});
