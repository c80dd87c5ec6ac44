import { afterAll, describe, expect, it } from 'vitest';
import { type Pulsar, pulsarClient, uniqueTopic } from '../../support/pulsar-client-fixtures.ts';

// apache/pulsar-client-node v1.18.0 tests/consumer.test.js, re-expressed against ackline/pulsar-client
// (docs/design/pulsar-client-tests.md).

const client = pulsarClient();
afterAll(async () => {
  await client.close();
});

const TOPIC_REQUIRED =
  'Topic, topics or topicsPattern is required and must be specified as a string when creating consumer';
const SUBSCRIPTION_REQUIRED =
  'Subscription is required and must be specified as a string when creating consumer';
const subscribe = (config: Record<string, unknown>) =>
  client.subscribe({
    ackTimeoutMs: 10000,
    nAckRedeliverTimeoutMs: 60000,
    ...config,
  } as unknown as Pulsar.ConsumerConfig);

describe('pulsar-client tests/consumer.test.js: Create', () => {
  it.each([
    ['No Topic', { subscription: 'sub1' }, TOPIC_REQUIRED],
    ['Not String Topic', { topic: 0, subscription: 'sub1' }, TOPIC_REQUIRED],
    ['Not String TopicsPattern', { topicsPattern: 0, subscription: 'sub1' }, TOPIC_REQUIRED],
    ['Not Array Topics', { topics: 0, subscription: 'sub1' }, TOPIC_REQUIRED],
    ['Not String in Array Topics', { topics: [0, true], subscription: 'sub1' }, TOPIC_REQUIRED],
    ['No Subscription', { topic: 'persistent://public/default/t1' }, SUBSCRIPTION_REQUIRED],
    [
      'Not String Subscription',
      { topic: 'persistent://public/default/t1', subscription: 0 },
      SUBSCRIPTION_REQUIRED,
    ],
    [
      'Not Exist Tenant',
      { topic: 'persistent://no-tenant/namespace/topic', subscription: 'sub1' },
      'Failed to create consumer: TopicNotFound',
    ],
    [
      'Not Exist Namespace',
      { topic: 'persistent://public/no-namespace/topic', subscription: 'sub1' },
      'Failed to create consumer: TopicNotFound',
    ],
    [
      'Not Positive NAckRedeliverTimeout',
      { topic: 'persistent://public/default/t1', subscription: 'sub1', nAckRedeliverTimeoutMs: -12 },
      'NAck timeout should be greater than or equal to zero',
    ],
    [
      'Ack timeout less 10000',
      { topic: 'test-topic', subscription: 'sub1', subscriptionType: 'Shared', ackTimeoutMs: 100 },
      'Ack timeout should be 0 or greater than or equal to 10000',
    ],
    [
      'NAck timeout less 0',
      { topic: 'test-topic', subscription: 'sub1', subscriptionType: 'Shared', nAckRedeliverTimeoutMs: -1 },
      'NAck timeout should be greater than or equal to zero',
    ],
    [
      'Batch Receive Config Error',
      {
        topic: 'test-batch-receive-policy-error',
        subscription: 'sub1',
        subscriptionType: 'Shared',
        batchReceivePolicy: { maxNumMessages: -1, maxNumBytes: -1, timeoutMs: -1 },
      },
      'At least one of maxNumMessages, maxNumBytes and timeoutMs must be specified.',
    ],
  ])('%s', async (_name, config, message) => {
    await expect(subscribe(config)).rejects.toThrow(message);
  });
});

describe('pulsar-client tests/consumer.test.js: Close', () => {
  it('throws error on subsequent calls to close: closing twice resolves null both times (with a listener)', async () => {
    const consumer = await client.subscribe({
      topic: uniqueTopic('my-topic'),
      subscription: 'sub1',
      subscriptionType: 'Shared',
      listener() {},
    });
    await expect(consumer.close()).resolves.toEqual(null);
    await expect(consumer.close()).resolves.toEqual(null);
  });
});

describe('pulsar-client tests/consumer.test.js: Features', () => {
  it('Batch index ack: after acknowledging 2 of 5 and resubscribing, only the other 3 come back', async () => {
    const topic = uniqueTopic('test-batch-index-ack');
    const producer = await client.createProducer({
      topic,
      batchingEnabled: true,
      batchingMaxMessages: 100,
      batchingMaxPublishDelayMs: 10000,
    });
    let consumer = await client.subscribe({
      topic,
      batchIndexAckEnabled: true,
      subscription: 'test-batch-index-ack',
    });
    for (let i = 0; i < 5; i += 1) void producer.send({ data: Buffer.from(`my-message-${i}`) });
    await producer.flush();
    const results: Pulsar.Message[] = [];
    for (let i = 0; i < 5; i += 1) results.push(await consumer.receive());
    expect(results).toHaveLength(5);
    for (let i = 0; i < 2; i += 1) await consumer.acknowledge(results[i]!);

    await consumer.close();
    consumer = await client.subscribe({
      topic,
      batchIndexAckEnabled: true,
      subscription: 'test-batch-index-ack',
    });
    const again: string[] = [];
    for (let i = 2; i < 5; i += 1) again.push((await consumer.receive()).getData().toString());
    expect(again.sort()).toEqual(['my-message-2', 'my-message-3', 'my-message-4']);
    await expect(consumer.receive(1000)).rejects.toThrow('Failed to receive message: TimeOut');
    await consumer.close();
    await producer.close();
  });

  it('Regex subscription: a pattern consumer receives from every matching persistent topic and no other', async () => {
    const base = uniqueTopic('regex-sub');
    const prefix = base.slice('persistent://public/default/'.length);
    const topics = [`${base}-1`, `${base}-2`, `persistent://public/default/no-match-${prefix}-2`];
    const producers = await Promise.all(topics.map((topic) => client.createProducer({ topic })));
    const consumer = await client.subscribe({
      topicsPattern: `persistent://public/default/${prefix}.*`,
      subscription: 'sub1',
      subscriptionType: 'Shared',
      regexSubscriptionMode: 'AllTopics',
    });
    const num = 10;
    for (let i = 0; i < num; i += 1) {
      for (const producer of producers) await producer.send({ data: Buffer.from(`my-message-${i}`) });
    }
    const results: string[] = [];
    for (let i = 0; i < 2 * num; i += 1) results.push((await consumer.receive()).getData().toString());
    expect(results).toHaveLength(2 * num);
    await expect(consumer.receive(1000)).rejects.toThrow('Failed to receive message: TimeOut');
    await Promise.all(producers.map((producer) => producer.close()));
    await consumer.close();
  });

  it('Dead Letter topic: after maxRedeliverCount negative acknowledgements the messages are on the dead-letter topic', async () => {
    const topic = uniqueTopic('test-dead_letter_topic');
    const dlqTopic = `${topic}_customize`;
    const producer = await client.createProducer({ topic });
    const maxRedeliverCount = 3;
    const consumer = await client.subscribe({
      topic,
      subscription: 'sub-1',
      subscriptionType: 'Shared',
      deadLetterPolicy: {
        deadLetterTopic: dlqTopic,
        maxRedeliverCount,
        initialSubscriptionName: 'init-sub-1-dlq',
      },
      nAckRedeliverTimeoutMs: 50,
    });
    const sendNum = 5;
    const messages: string[] = [];
    for (let i = 0; i < sendNum; i += 1) {
      await producer.send({ data: Buffer.from(`my-message-${i}`) });
      messages.push(`my-message-${i}`);
    }
    let round: Pulsar.Message[] = [];
    for (let i = 1; i <= maxRedeliverCount * sendNum + sendNum; i += 1) {
      round.push(await consumer.receive());
      if (i % sendNum === 0) {
        for (const message of round) consumer.negativeAcknowledge(message);
        round = [];
      }
    }
    await expect(consumer.receive(2000)).rejects.toThrow('Failed to receive message: TimeOut');

    // pulsar-client's test subscribes the dead-letter topic afresh at Latest and still finds the
    // messages there (its client moves them as this receive(100) runs). ackline's server moves them on
    // its timer, before: read them from the policy's initial subscription, which keeps them (Pulsar's
    // purpose for initialSubscriptionName).
    const dlqConsumer = await client.subscribe({
      topic: dlqTopic,
      subscription: 'init-sub-1-dlq',
      subscriptionType: 'Shared', // ackline creates the initial subscription Shared
    });
    const dead: string[] = [];
    for (let i = 0; i < sendNum; i += 1) dead.push((await dlqConsumer.receive(10_000)).getData().toString());
    expect(dead.sort()).toEqual(messages);
    await expect(dlqConsumer.receive(500)).rejects.toThrow('Failed to receive message: TimeOut');
    await Promise.all([producer.close(), consumer.close(), dlqConsumer.close()]);
  });

  it.each([
    ['Batch Receive by maxNumberMessages', 10],
    ['Batch Receive by timeOutMs', 100],
  ])('%s: batchReceive answers the 10 messages sent, then [] after its timeout', async (_name, maxNumMessages) => {
    const topic = uniqueTopic('batch-receive-test-topic');
    const producer = await client.createProducer({ topic });
    const consumer = await client.subscribe({
      topic,
      subscription: 'sub1',
      subscriptionType: 'Shared',
      // 2 s instead of the original's 500 ms: on the shared test machine a first poll can take longer.
      batchReceivePolicy: { maxNumMessages, maxNumBytes: -1, timeoutMs: 2000 },
    });
    const messages: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      await producer.send({ data: Buffer.from(`my-message-${i}`) });
      messages.push(`my-message-${i}`);
    }
    // pulsar-client's consumer has prefetched them by now; ackline's fetches on demand, within the timeout.
    const received = await consumer.batchReceive();
    expect(received.map((message) => message.getData().toString())).toEqual(messages);
    expect(await consumer.batchReceive()).toEqual([]);
    await producer.close();
    await consumer.close();
  });
});

describe('pulsar-client tests/consumer.test.js: KeySharedPolicyTest', () => {
  it('testStickyConsumer: each key goes to the one consumer whose sticky range holds its hash, in proportion to the ranges', async () => {
    const topic = uniqueTopic('KeySharedPolicyTest-sticky-consumer');
    const subscription = 'SubscriptionName';
    const numMessages = 1000;
    const producer = await client.createProducer({
      topic,
      batchingEnabled: false,
      messageRoutingMode: 'RoundRobinDistribution',
    });
    const stickyRanges = [
      { start: 0, end: 1000 },
      { start: 1001, end: 30000 },
      { start: 30001, end: 65535 },
    ];
    const consumers: Pulsar.Consumer[] = [];
    for (const range of stickyRanges) {
      consumers.push(
        await client.subscribe({
          topic,
          subscription,
          subscriptionType: 'KeyShared',
          keySharedPolicy: { keyShareMode: 'Sticky', stickyRanges: [range] },
        }),
      );
    }
    // Beyond the original: a consumer whose range overlaps another's is refused, as Pulsar refuses it.
    await expect(
      client.subscribe({
        topic,
        subscription,
        subscriptionType: 'KeyShared',
        keySharedPolicy: { keyShareMode: 'Sticky', stickyRanges: [{ start: 500, end: 600 }] },
      }),
    ).rejects.toThrow('Failed to create consumer');

    // The original awaits each send (batching off); these are sent together, so the 1,000 requests
    // need not run one after the other on the shared 2-core machine.
    const keys = Array.from({ length: 300 }, (_, index) => index.toString());
    await Promise.all(
      Array.from({ length: numMessages }, (_, index) =>
        producer.send({
          data: Buffer.from(index.toString()),
          partitionKey: keys[Math.floor(Math.random() * keys.length)] as string,
        }),
      ),
    );

    const messagesPerConsumer = [0, 0, 0];
    const keyToConsumer = new Map<string, number>();
    let messagesReceived = 0;
    for (const [index, consumer] of consumers.entries()) {
      for (;;) {
        let message: Pulsar.Message;
        try {
          message = await consumer.receive(2000);
        } catch (error) {
          if ((error as Error).message.includes('TimeOut')) break;
          throw error;
        }
        const key = message.getPartitionKey() || message.getOrderingKey();
        messagesPerConsumer[index] = (messagesPerConsumer[index] ?? 0) + 1;
        messagesReceived += 1;
        expect(keyToConsumer.get(key) ?? index, `key ${key} assigned to different consumer`).toBe(index);
        keyToConsumer.set(key, index);
        await consumer.acknowledge(message);
      }
    }
    expect(messagesReceived).toBe(numMessages);
    expect(messagesPerConsumer[0]).toBeLessThan(100);
    expect(messagesPerConsumer[1]).toBeGreaterThan(400);
    expect(messagesPerConsumer[2]).toBeGreaterThan(400);
    await producer.close();
    for (const consumer of consumers) await consumer.close();
  }, 60_000);
});
