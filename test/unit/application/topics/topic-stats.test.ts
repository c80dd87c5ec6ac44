// Topic stats (issue 13, criterion 1) over in-memory ports and a manual clock: known traffic in,
// exact numbers out.
import { describe, expect, it } from 'vitest';
import {
  acknowledgeMessages,
  negativeAcknowledge,
} from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { DEFAULT_ENGINE_LIMITS } from '../../../../shared/application/engine/engine-context.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { getTopicStats } from '../../../../shared/application/topics/topic-stats.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const producer: Principal = { role: 'orders-app', superuser: true };
const admin: Principal = { role: 'admin', superuser: true };
const T0 = 1_700_000_000_000;

function world(parts: Partial<UseCasePorts> = {}) {
  const clock = new ManualClock(T0);
  const { ports } = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    ...parts,
  });
  return { clock, ports };
}

async function subscribe(ports: UseCasePorts, topic: TopicName, consumerName: string) {
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    consumerName,
    policy: { negativeAckRedeliveryDelayMs: 60_000 },
  });
  return consumerId;
}

const tenBytes = (i: number) => ({ payload: `payload-${i.toString().padStart(2, '0')}`, properties: {} });

describe('topic stats', () => {
  it('counts and rates what was published, delivered, redelivered and acknowledged', async () => {
    const { clock, ports } = world();
    const topic = TopicName.parse('persistent://public/default/stats');
    const consumer = await subscribe(ports, topic, 'billing-1');
    await publishMessages(ports, producer, topic, {
      messages: Array.from({ length: 100 }, (_, i) => tenBytes(i)),
      router: new RoundRobinRouter(0),
    });

    clock.advance(20_000);
    const first = await receiveMessages(ports, admin, consumer, { maxMessages: 30 });
    expect(first).toHaveLength(30);
    clock.advance(5_000);
    await acknowledgeMessages(ports, admin, consumer, {
      messageIds: [],
      deliveryHandles: first.slice(0, 10).map((m) => m.deliveryHandle),
    });
    await negativeAcknowledge(ports, admin, consumer, {
      messageIds: [],
      deliveryHandles: first.slice(10, 15).map((m) => m.deliveryHandle),
    });
    clock.advance(61_000);
    const redelivered = await receiveMessages(ports, admin, consumer, { maxMessages: 5 });
    expect(redelivered.map((m) => m.redeliveryCount)).toEqual([1, 1, 1, 1, 1]);
    clock.advance(10_000);

    const stats = await getTopicStats(ports, admin, topic);

    expect(stats.msgInCounter).toBe(100);
    expect(stats.bytesInCounter).toBe(1_000);
    // The partition's rate snapshot was taken by the first publish (T0, count 0): 100 over 96 s.
    expect(stats.msgRateIn).toBeCloseTo(100 / 96, 9);
    expect(stats.msgThroughputIn).toBeCloseTo(1_000 / 96, 9);
    expect(stats.publishers).toEqual([{ producerName: 'orders-app', lastPublishTimestamp: T0 }]);
    const sub = stats.subscriptions.sub;
    expect(sub).toMatchObject({
      type: 'Shared',
      msgBacklog: 90,
      msgBacklogNoDelayed: 90,
      msgDelayed: 0,
      unackedMessages: 20,
      msgRedeliverCounter: 5,
      msgOutCounter: 35,
      bytesOutCounter: 350,
      lastAckedTimestamp: T0 + 25_000,
      lastConsumedTimestamp: T0 + 86_000,
      consumers: [
        {
          consumerName: 'billing-1',
          consumerId: consumer,
          connectedSince: new Date(T0).toISOString(),
          unackedMessages: 20,
        },
      ],
    });
    // First deliveries: 30 since the claim counter's snapshot (T0 + 20 s); redeliveries: 5 in 10 s.
    expect(sub?.msgRateOut).toBeCloseTo(30 / 76 + 5 / 10, 9);
    expect(sub?.msgThroughputOut).toBeCloseTo(300 / 76 + 50 / 10, 9);
    expect(sub?.msgRateRedeliver).toBeCloseTo(5 / 10, 9);
    expect(stats.msgRateOut).toBeCloseTo(sub?.msgRateOut as number, 9);
    expect(stats.msgOutCounter).toBe(35);
  });

  it('counts delayed messages the dispatcher holds back, and leaves out what was never measured', async () => {
    const { clock, ports } = world();
    const topic = TopicName.parse('persistent://public/default/delayed');
    const consumer = await subscribe(ports, topic, 'c');
    await publishMessages(ports, producer, topic, {
      messages: [
        tenBytes(0),
        { ...tenBytes(1), deliverAtMs: T0 + 3_600_000 },
        { ...tenBytes(2), deliverAtMs: T0 + 3_600_000 },
      ],
      router: new RoundRobinRouter(0),
    });
    const idle = (await getTopicStats(ports, admin, topic)).subscriptions.sub;
    expect(idle?.lastConsumedTimestamp).toBeUndefined();
    expect(idle?.lastAckedTimestamp).toBeUndefined();
    expect(idle?.msgRateOut).toBe(0);
    clock.advance(1_000);
    expect(await receiveMessages(ports, admin, consumer, { maxMessages: 10 })).toHaveLength(1);
    const sub = (await getTopicStats(ports, admin, topic)).subscriptions.sub;
    expect(sub).toMatchObject({ msgBacklog: 3, msgDelayed: 2, msgBacklogNoDelayed: 1, unackedMessages: 1 });
  });

  it('partitioned: sums the partitions, lists each with perPartition, and refuses partitioned-stats of a plain topic', async () => {
    const { clock, ports } = world();
    const topic = TopicName.parse('persistent://public/default/parted');
    await createTopic(ports, admin, topic, 3);
    await subscribe(ports, topic, 'c');
    await publishMessages(ports, producer, topic, {
      messages: Array.from({ length: 9 }, (_, i) => ({ ...tenBytes(i), key: `k${i}` })),
      router: new RoundRobinRouter(0),
    });
    clock.advance(30_000);
    const all = await getTopicStats(ports, admin, topic, { partitionedOnly: true });
    const partitions = Object.values(all.partitions ?? {});
    expect(partitions).toHaveLength(3);
    expect(all.msgInCounter).toBe(9);
    expect(partitions.reduce((sum, p) => sum + p.msgInCounter, 0)).toBe(9);
    expect(all.msgRateIn).toBeCloseTo(9 / 30, 9);
    expect(all.subscriptions.sub?.msgBacklog).toBe(9);
    expect(all.subscriptions.sub?.consumers).toHaveLength(1);
    const summary = await getTopicStats(ports, admin, topic, { partitionedOnly: true, perPartition: false });
    expect(summary.partitions).toBeUndefined();
    expect(summary.metadata).toEqual({ partitions: 3 });
    const plain = TopicName.parse('persistent://public/default/plain');
    await createTopic(ports, admin, plain, 0);
    await expect(getTopicStats(ports, admin, plain, { partitionedOnly: true })).rejects.toThrow(
      /not a partitioned topic/,
    );
  });

  it('availablePermits: what a consumer may still be handed before its cap; blockedConsumerOnUnackedMsgs at 0', async () => {
    const { ports } = world({ engineLimits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 4 } });
    const topic = TopicName.parse('persistent://public/default/permits');
    const a = await subscribe(ports, topic, 'a');
    const b = await subscribe(ports, topic, 'b');
    await publishMessages(ports, producer, topic, {
      messages: Array.from({ length: 8 }, (_, i) => tenBytes(i)),
      router: new RoundRobinRouter(0),
    });
    const permits = async () => {
      const consumers = (await getTopicStats(ports, admin, topic)).subscriptions.sub?.consumers ?? [];
      return Object.fromEntries(
        consumers.map((c) => [c.consumerName, [c.availablePermits, c.blockedConsumerOnUnackedMsgs]]),
      );
    };
    expect(await permits()).toEqual({ a: [4, false], b: [4, false] });
    const taken = await receiveMessages(ports, admin, a, { maxMessages: 3 });
    expect(taken).toHaveLength(3);
    expect(await permits()).toEqual({ a: [1, false], b: [4, false] });
    expect(await receiveMessages(ports, admin, a, { maxMessages: 10 })).toHaveLength(1);
    expect(await permits()).toEqual({ a: [0, true], b: [4, false] });
    await acknowledgeMessages(ports, admin, a, {
      messageIds: [],
      deliveryHandles: [taken[0]?.deliveryHandle as string],
    });
    expect(await permits()).toEqual({ a: [1, false], b: [4, false] });
    expect(await receiveMessages(ports, admin, b, { maxMessages: 10 })).toHaveLength(4);
    expect(await permits()).toEqual({ a: [1, false], b: [0, true] });
  });

  it('blockedSubscriptionOnUnackedMsgs: true while the window holds the cap of unacknowledged entries, as the dispatcher pauses', async () => {
    const { ports } = world({ engineLimits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerSubscription: 5 } });
    const topic = TopicName.parse('persistent://public/default/capped');
    const consumer = await subscribe(ports, topic, 'c');
    await publishMessages(ports, producer, topic, {
      messages: Array.from({ length: 8 }, (_, i) => tenBytes(i)),
      router: new RoundRobinRouter(0),
    });
    const blocked = async () => {
      const sub = (await getTopicStats(ports, admin, topic)).subscriptions.sub;
      return [sub?.blockedSubscriptionOnUnackedMsgs, sub?.unackedMessages];
    };
    expect(await blocked()).toEqual([false, 0]);
    const held = await receiveMessages(ports, admin, consumer, { maxMessages: 8 });
    expect(held).toHaveLength(5);
    expect(await blocked()).toEqual([true, 5]);
    expect(await receiveMessages(ports, admin, consumer, { maxMessages: 8 })).toEqual([]);

    // An acknowledgement behind the first held entry frees nothing (mark-delete stays)...
    await acknowledgeMessages(ports, admin, consumer, {
      messageIds: [],
      deliveryHandles: [held[2]?.deliveryHandle as string],
    });
    expect(await blocked()).toEqual([true, 4]);
    expect(await receiveMessages(ports, admin, consumer, { maxMessages: 8 })).toEqual([]);
    // ...one at mark-delete does: the dispatcher folds it and hands out one more.
    await acknowledgeMessages(ports, admin, consumer, {
      messageIds: [],
      deliveryHandles: [held[0]?.deliveryHandle as string],
    });
    expect(await blocked()).toEqual([false, 3]);
    expect(await receiveMessages(ports, admin, consumer, { maxMessages: 8 })).toHaveLength(1);
    expect(await blocked()).toEqual([true, 4]);
  });
});
