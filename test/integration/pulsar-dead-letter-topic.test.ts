import { describe, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import {
  ConsumerApi,
  numbered,
  payloads,
  type SubscribeBody,
  type TestConsumer,
  type TimedMessage,
} from '../support/consumer-fixtures.ts';
import { countsByPayload, defaultDeadLetterTopic, eachDelivered } from '../support/dead-letter-fixtures.ts';

// Issue 21, criterion 9: Apache Pulsar's DeadLetterTopicTest
// (pulsar-broker/src/test/java/org/apache/pulsar/client/api/DeadLetterTopicTest.java), the methods
// that ackline's surface can express, over real HTTP on the shared embedded stack. Each test is
// named after the Pulsar method it ports; docs/design/pulsar-tests.md maps every method, ported
// or not and why. Re-expressed: 100 messages become 10 or 20 (the same counts per message, in a
// few seconds); Pulsar's `receive()` one at a time becomes a receive of up to 10.
//
// Pulsar's client dead-letters on its own timer: the consumer's last allowed delivery times out,
// the broker redelivers it and the client publishes it to the dead-letter topic without the
// application calling receive. Here the original consumer goes on polling for a few seconds after
// its last allowed delivery, so these tests check what reaches the dead-letter topic (counts,
// keys, event times, properties, no delivery past maxRedeliverCount) whoever triggers it; the
// "without another receive" case is testDeadLetterTopic, in pulsar-dead-letter-races.test.ts,
// with the ports of races between several consumers (one dead letter per message).

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

const SUBSCRIPTION = 'my-subscription';

/** Pulsar's consumer of these tests: Shared, ack timeout 1 s, from Earliest, with `maxRedeliverCount`. */
function policyOf(maxRedeliverCount: number, extra: Partial<SubscribeBody> = {}): SubscribeBody {
  return {
    subscriptionType: 'Shared',
    ackTimeoutMs: 1000,
    subscriptionInitialPosition: 'Earliest',
    deadLetterPolicy: { maxRedeliverCount },
    ...extra,
  };
}

/**
 * Receives without acknowledging until `expected` deliveries arrived, then polls `quietMs` more
 * (the last deliveries' ack timeouts pass meanwhile): every delivery, in order.
 */
async function receiveNeverAcking(
  consumer: TestConsumer,
  expected: number,
  quietMs = 3000,
): Promise<TimedMessage[]> {
  const deliveries = await consumer.receiveN(expected, 15_000);
  return [...deliveries, ...(await consumer.receiveFor(quietMs))];
}

/** Reads `count` dead letters (acknowledging them), then 1 s more to see one too many. */
async function readDeadLetters(reader: TestConsumer, count: number): Promise<TimedMessage[]> {
  const letters = await reader.receiveN(count, 10_000);
  if (letters.length > 0) await reader.ack(letters);
  return [...letters, ...(await reader.receiveFor(1000))];
}

/** What a fresh consumer of the subscription receives within 3 s (Pulsar's check consumer). */
async function leftOnSubscription(topic: TopicRef, policy: SubscribeBody): Promise<TimedMessage[]> {
  const check = await consumers.subscribe(topic, SUBSCRIPTION, {
    subscriptionType: policy.subscriptionType,
    subscriptionInitialPosition: 'Earliest',
  });
  const left = await check.receiveFor(3000);
  await check.close();
  return left;
}

describe.concurrent("Pulsar's DeadLetterTopicTest", () => {
  it('testDeadLetterTopicWithMessageKey: maxRedeliverCount 1, 10 keyed messages: each delivered twice, then in the default DLQ with its key', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqkey');
    const consumer = await consumers.subscribe(topic, SUBSCRIPTION, policyOf(1));
    const reader = await consumers.subscribe(defaultDeadLetterTopic(topic, SUBSCRIPTION), SUBSCRIPTION, {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    const sent = numbered(10, 'Hello Pulsar ');
    await admin.produce(
      topic,
      sent.map((payload) => ({ payload, key: 'test-key' })),
    );

    const deliveries = await receiveNeverAcking(consumer, 20);
    const letters = await readDeadLetters(reader, 10);

    expect(countsByPayload(deliveries)).toEqual(eachDelivered(sent, 1));
    expect(payloads(letters).sort()).toEqual([...sent].sort());
    expect(letters.map((m) => m.key)).toEqual(sent.map(() => 'test-key'));
  });

  it('testDeadLetterTopicMessagesWithEventTime: the event time reaches the DLQ', async ({ expect }) => {
    const topic = TopicRef.unique('dlqeventtime');
    const consumer = await consumers.subscribe(topic, SUBSCRIPTION, policyOf(1));
    const reader = await consumers.subscribe(defaultDeadLetterTopic(topic, SUBSCRIPTION), SUBSCRIPTION, {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    const eventTime = Date.now();
    const sent = numbered(10, `Hello Pulsar, eventTime: ${eventTime} `);
    await admin.produce(
      topic,
      sent.map((payload) => ({ payload, eventTime })),
    );

    const deliveries = await receiveNeverAcking(consumer, 20);
    const letters = await readDeadLetters(reader, 10);

    expect(countsByPayload(deliveries)).toEqual(eachDelivered(sent, 1));
    expect(letters).toHaveLength(10);
    expect(letters.map((m) => m.eventTime)).toEqual(sent.map(() => eventTime));
  });

  it('testDeadLetterTopicHasOriginalInfo: REAL_TOPIC, REAL_SUBSCRIPTION and ORIGIN_MESSAGE_ID name where each dead letter came from', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqorigin');
    const consumer = await consumers.subscribe(topic, SUBSCRIPTION, policyOf(1));
    const reader = await consumers.subscribe(defaultDeadLetterTopic(topic, SUBSCRIPTION), SUBSCRIPTION, {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    const ids = await admin.produceMany(topic, 10, 'Hello Pulsar ');

    const deliveries = await receiveNeverAcking(consumer, 20);
    const letters = await readDeadLetters(reader, 10);

    expect(deliveries).toHaveLength(20);
    expect(letters).toHaveLength(10);
    for (const letter of letters) {
      expect(letter.properties.REAL_TOPIC).toBe(topic.name);
      expect(letter.properties.REAL_SUBSCRIPTION).toBe(SUBSCRIPTION);
    }
    expect(letters.map((m) => m.properties.ORIGIN_MESSAGE_ID).sort()).toEqual([...ids].sort());
  });

  it('testDeadLetterTopicByCustomTopicName: maxRedeliverCount 2 to a named DLQ: three deliveries each, all in that topic, nothing left on the subscription', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqcustom');
    const deadLetterTopic = topic.namespace.topic('dead-letter-custom-topic-my-subscription-custom-DLQ');
    const policy = policyOf(2, {
      deadLetterPolicy: { maxRedeliverCount: 2, deadLetterTopic: deadLetterTopic.name },
    });
    const consumer = await consumers.subscribe(topic, SUBSCRIPTION, policy);
    const reader = await consumers.subscribe(deadLetterTopic, SUBSCRIPTION, {
      subscriptionType: 'Exclusive',
    });
    const sent = (await admin.produceMany(topic, 10, 'Hello Pulsar ')).map((_, i) => `Hello Pulsar ${i}`);

    const deliveries = await receiveNeverAcking(consumer, 30);
    const letters = await readDeadLetters(reader, 10);
    await consumer.close();

    expect(countsByPayload(deliveries)).toEqual(eachDelivered(sent, 2));
    expect(payloads(letters).sort()).toEqual([...sent].sort());
    expect(await leftOnSubscription(topic, policy)).toEqual([]);
    expect(
      (await admin.send('GET', `${defaultDeadLetterTopic(topic, SUBSCRIPTION).adminPath}/stats`)).status,
    ).toBe(404);
  });

  it('testDeadLetterWithoutConsumerReceiveImmediately: a message nobody received is not dead-lettered, however long it waits', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqnoreceive');
    const consumer = await consumers.subscribe(topic, SUBSCRIPTION, {
      subscriptionType: 'Shared',
      ackTimeoutMs: 1000,
      deadLetterPolicy: { maxRedeliverCount: 1, initialSubscriptionName: 'dlq-reader' },
    });
    await admin.produce(topic, [{ payload: 'a message' }]);

    await new Promise((resolve) => setTimeout(resolve, 5000));
    const [message] = await consumer.receive(1, 1000);

    expect(message?.payload).toBe('a message');
    expect(message?.redeliveryCount).toBe(0);
    expect(await admin.backlogs(defaultDeadLetterTopic(topic, SUBSCRIPTION))).toEqual({ 'dlq-reader': 0 });
  });

  it("testDeadLetterTopicUnderPartitionedTopicWithKeyShareType: Key_Shared on 2 partitions, maxRedeliverCount 2: three deliveries, then one dead letter (in the topic's DLQ, not one per partition)", async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqkeyshared');
    await admin.createTopic(topic, 2);
    const policy = policyOf(2, { subscriptionType: 'Key_Shared' });
    const consumer = await consumers.subscribe(topic, SUBSCRIPTION, policy);
    const reader = await consumers.subscribe(defaultDeadLetterTopic(topic, SUBSCRIPTION), SUBSCRIPTION, {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    const [messageId] = await admin.produce(topic, [{ payload: 'Hello Pulsar 0' }]);
    const partition = Number((messageId as string).split(':')[2]);

    const deliveries = await receiveNeverAcking(consumer, 3);
    const letters = await readDeadLetters(reader, 1);
    await consumer.close();

    expect(deliveries.map((m) => m.redeliveryCount)).toEqual([0, 1, 2]);
    expect(letters).toHaveLength(1);
    expect(letters[0]?.properties.REAL_TOPIC).toBe(topic.partition(partition).name);
    expect(await leftOnSubscription(topic, policy)).toEqual([]);
    for (const perPartition of [0, 1].map((i) => defaultDeadLetterTopic(topic.partition(i), SUBSCRIPTION))) {
      expect((await admin.send('GET', `${perPartition.adminPath}/stats`)).status).toBe(404);
    }
  });

  it('testDeadLetterTopicWithInitialSubscription: the DLQ is listed in the namespace with its initial subscription, which holds every dead letter', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqinitial');
    const deadLetterTopic = defaultDeadLetterTopic(topic, SUBSCRIPTION);
    const consumer = await consumers.subscribe(
      topic,
      SUBSCRIPTION,
      policyOf(1, { deadLetterPolicy: { maxRedeliverCount: 1, initialSubscriptionName: 'init-sub' } }),
    );
    const sent = (await admin.produceMany(topic, 10, 'Hello Pulsar ')).map((_, i) => `Hello Pulsar ${i}`);

    const deliveries = await receiveNeverAcking(consumer, 20);
    const listed = (await admin.send('GET', topic.namespace.adminPath())).body as string[];
    const subscriptions = (await admin.send('GET', `${deadLetterTopic.adminPath}/subscriptions`)).body;
    const reader = await consumers.subscribe(deadLetterTopic, 'init-sub', { subscriptionType: 'Shared' });
    const letters = await readDeadLetters(reader, 10);

    expect(countsByPayload(deliveries)).toEqual(eachDelivered(sent, 1));
    expect(listed).toContain(deadLetterTopic.name);
    expect(subscriptions).toContain('init-sub');
    expect(payloads(letters).sort()).toEqual([...sent].sort());
  });

  it('where ackline differs on purpose: a close counts as a delivery of what the consumer held (in Pulsar the count stays 0), so two closes take a message past maxRedeliverCount 1', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqclose');
    const policy: SubscribeBody = {
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
      deadLetterPolicy: { maxRedeliverCount: 1, initialSubscriptionName: 'dlq-reader' },
    };
    await admin.produce(topic, [{ payload: 'poison' }]);
    const seen: TimedMessage[] = [];
    for (let i = 0; i < 2; i++) {
      const crashing = await consumers.subscribe(topic, SUBSCRIPTION, policy);
      seen.push(...(await crashing.receiveN(1, 5000)));
      await crashing.close();
    }

    const last = await consumers.subscribe(topic, SUBSCRIPTION, policy);
    const after = await last.receiveFor(2000);
    const reader = await consumers.subscribe(defaultDeadLetterTopic(topic, SUBSCRIPTION), 'dlq-reader', {
      subscriptionType: 'Shared',
    });
    const letters = await readDeadLetters(reader, 1);

    expect(seen.map((m) => [m.payload, m.redeliveryCount])).toEqual([
      ['poison', 0],
      ['poison', 1],
    ]);
    expect(after).toEqual([]);
    expect(payloads(letters)).toEqual(['poison']);
  });
});
