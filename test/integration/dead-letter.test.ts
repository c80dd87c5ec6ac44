import { describe, it } from 'vitest';
import { AdminApi, type SubscriptionType, TopicRef } from '../support/admin-fixtures.ts';
import {
  ConsumerApi,
  type SubscribeBody,
  type TestConsumer,
  type TimedMessage,
} from '../support/consumer-fixtures.ts';

// Dead-letter policies of issue 4 (criterion 7): with maxRedeliverCount 2 a message is delivered
// three times (redelivery counts 0, 1, 2), then published to the dead-letter topic with
// REAL_TOPIC, ORIGIN_MESSAGE_ID and REAL_SUBSCRIPTION, and acknowledged on the original
// subscription. Real HTTP against the shared embedded stack.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

const ORIGINAL = { payload: 'poison', key: 'order-42', properties: { origin: 'test', attempt: 'x' } };

/**
 * Nacks every delivery until `expected` deliveries arrived (or `timeoutMs` passed), then keeps
 * polling `quietMs` more, so a delivery too many would be seen; returns every delivery.
 */
async function nackEverything(
  consumer: TestConsumer,
  expected: number,
  timeoutMs: number,
  quietMs = 1000,
): Promise<TimedMessage[]> {
  const deliveries: TimedMessage[] = [];
  let deadline = Date.now() + timeoutMs;
  let quiet = false;
  while (Date.now() < deadline) {
    const batch = await consumer.receive(10, Math.min(1000, deadline - Date.now()));
    if (batch.length > 0) await consumer.nack(batch);
    deliveries.push(...batch);
    if (!quiet && deliveries.length >= expected) {
      quiet = true;
      deadline = Math.min(deadline, Date.now() + quietMs);
    }
  }
  return deliveries;
}

/** Receives (never acknowledging) until `expected` deliveries arrived, then `quietMs` more. */
async function receiveUntil(
  consumer: TestConsumer,
  expected: number,
  timeoutMs: number,
  quietMs = 1500,
): Promise<TimedMessage[]> {
  const deliveries = await consumer.receiveN(expected, timeoutMs);
  return [...deliveries, ...(await consumer.receiveFor(quietMs))];
}

/** The default dead-letter topic of Pulsar: `{topic}-{subscription}-DLQ`. */
function defaultDeadLetterTopic(topic: TopicRef, subscription: string): TopicRef {
  return topic.namespace.topic(`${topic.localName}-${subscription}-DLQ`);
}

/** The dead letter of {@link ORIGINAL}, taken from `topic` (a partition's name) on `subscription`. */
function deadLetterOf(topic: string, messageId: string, subscription: string) {
  return {
    payload: ORIGINAL.payload,
    key: ORIGINAL.key,
    redeliveryCount: 0,
    properties: {
      ...ORIGINAL.properties,
      REAL_TOPIC: topic,
      ORIGIN_MESSAGE_ID: messageId,
      REAL_SUBSCRIPTION: subscription,
    },
  };
}

describe.concurrent('dead letters after maxRedeliverCount 2', () => {
  it.for<SubscriptionType>([
    'Shared',
    'Key_Shared',
    'Exclusive',
    'Failover',
  ])('%s, nack with negativeAckRedeliveryDelayMs 0: three deliveries, then the default DLQ and its initial subscription', async (type, {
    expect,
  }) => {
    const topic = TopicRef.unique('dlqnack');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: type,
      negativeAckRedeliveryDelayMs: 0,
      deadLetterPolicy: { maxRedeliverCount: 2, initialSubscriptionName: 'dlq-reader' },
    });
    const deadLetterTopic = defaultDeadLetterTopic(topic, 'sub');
    const upFront = await admin.backlogs(deadLetterTopic);
    const [messageId] = await admin.produce(topic, [ORIGINAL]);

    const deliveries = await nackEverything(consumer, 3, 5000);
    const reader = await consumers.subscribe(deadLetterTopic, 'dlq-reader', { subscriptionType: 'Shared' });
    const letters = await reader.receiveN(1, 3000);

    expect(deliveries.map((m) => [m.messageId, m.redeliveryCount])).toEqual([
      [messageId, 0],
      [messageId, 1],
      [messageId, 2],
    ]);
    expect(upFront).toEqual({ 'dlq-reader': 0 });
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject(deadLetterOf(topic.name, messageId as string, 'sub'));
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
    expect((await admin.stats(deadLetterTopic)).msgInCounter).toBe(1);
  });

  it('nack with a 1 s backoff, to a configured dead-letter topic read from Earliest afterwards', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqbackoff');
    const deadLetterTopic = TopicRef.unique('dlqtarget');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryBackoff: { minDelayMs: 1000, maxDelayMs: 1000, multiplier: 2 },
      deadLetterPolicy: { maxRedeliverCount: 2, deadLetterTopic: deadLetterTopic.name },
    });
    const [messageId] = await admin.produce(topic, [ORIGINAL]);

    const deliveries = await nackEverything(consumer, 3, 6000);
    const reader = await consumers.subscribe(deadLetterTopic, 'late-reader', {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    const letters = await reader.receiveN(1, 3000);

    expect(deliveries.map((m) => m.redeliveryCount)).toEqual([0, 1, 2]);
    const gaps = deliveries
      .slice(1)
      .map((m, i) => m.receivedAtMs - (deliveries[i] as TimedMessage).receivedAtMs);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(950);
    expect(letters[0]).toMatchObject(deadLetterOf(topic.name, messageId as string, 'sub'));
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
    expect((await admin.stats(deadLetterTopic)).msgInCounter).toBe(1);
    expect((await admin.send('GET', `${defaultDeadLetterTopic(topic, 'sub').adminPath}/stats`)).status).toBe(
      404,
    );
  }, 20_000);

  it('ack timeout (ackTimeoutMs 1000): three deliveries, then the dead-letter topic', async ({ expect }) => {
    const topic = TopicRef.unique('dlqacktimeout');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      ackTimeoutMs: 1000,
      deadLetterPolicy: { maxRedeliverCount: 2, initialSubscriptionName: 'dlq-reader' },
    });
    const deadLetterTopic = defaultDeadLetterTopic(topic, 'sub');
    const [messageId] = await admin.produce(topic, [ORIGINAL]);

    const deliveries = await receiveUntil(consumer, 3, 6000);
    const reader = await consumers.subscribe(deadLetterTopic, 'dlq-reader', { subscriptionType: 'Shared' });
    const letters = await reader.receiveN(1, 3000);

    expect(deliveries.map((m) => [m.messageId, m.redeliveryCount])).toEqual([
      [messageId, 0],
      [messageId, 1],
      [messageId, 2],
    ]);
    expect(letters[0]).toMatchObject(deadLetterOf(topic.name, messageId as string, 'sub'));
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  }, 20_000);

  it('from a partition: REAL_TOPIC names the partition, ORIGIN_MESSAGE_ID its index, the DLQ the topic', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqparts');
    await admin.createTopic(topic, 2);
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 0,
      deadLetterPolicy: { maxRedeliverCount: 2, initialSubscriptionName: 'dlq-reader' },
    });
    const [messageId] = await admin.produce(topic, [ORIGINAL]);
    const partition = Number((messageId as string).split(':')[2]);

    const deliveries = await nackEverything(consumer, 3, 5000);
    const reader = await consumers.subscribe(defaultDeadLetterTopic(topic, 'sub'), 'dlq-reader', {
      subscriptionType: 'Shared',
    });
    const letters = await reader.receiveN(1, 3000);

    expect(deliveries.map((m) => m.redeliveryCount)).toEqual([0, 1, 2]);
    expect(letters[0]).toMatchObject(
      deadLetterOf(topic.partition(partition).name, messageId as string, 'sub'),
    );
  });

  it('a message acknowledged before its last redelivery is not dead-lettered', async ({ expect }) => {
    const topic = TopicRef.unique('dlqacked');
    const policy: SubscribeBody = {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 0,
      deadLetterPolicy: { maxRedeliverCount: 1, initialSubscriptionName: 'dlq-reader' },
    };
    const consumer = await consumers.subscribe(topic, 'sub', policy);
    await admin.produce(topic, [ORIGINAL]);
    const [first] = await consumer.receiveN(1, 3000);
    await consumer.nack([first as TimedMessage]);
    const [second] = await consumer.receiveN(1, 3000);

    await consumer.ack([second as TimedMessage]);
    await consumer.nack([second as TimedMessage]);
    const more = await consumer.receiveFor(1500);

    expect(second?.redeliveryCount).toBe(1);
    expect(more).toEqual([]);
    expect(await admin.backlogs(defaultDeadLetterTopic(topic, 'sub'))).toEqual({ 'dlq-reader': 0 });
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });
});
