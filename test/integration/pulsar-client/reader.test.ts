import { describe, expect, it } from 'vitest';
import {
  admin,
  difference,
  Pulsar,
  pulsarClient,
  uniqueTopic,
} from '../../support/pulsar-client-fixtures.ts';

// apache/pulsar-client-node v1.18.0 tests/reader.test.js, re-expressed against ackline/pulsar-client
// (docs/design/pulsar-client-tests.md).

const START_ID_REQUIRED =
  'StartMessageId is required and must be specified as a MessageId object when creating reader';
const createReader = (client: Pulsar.Client, config: Record<string, unknown>) =>
  client.createReader(config as unknown as Pulsar.ReaderConfig);

describe('pulsar-client tests/reader.test.js', () => {
  it.each([
    [
      'No Topic',
      { startMessageId: Pulsar.MessageId.earliest() },
      'Topic is required and must be specified as a string when creating reader',
    ],
    [
      'Not String Topic',
      { topic: 0, startMessageId: Pulsar.MessageId.earliest() },
      'Topic is required and must be specified as a string when creating reader',
    ],
    ['No StartMessageId', { topic: 'persistent://public/default/topic' }, START_ID_REQUIRED],
    [
      'Not StartMessageId as MessageId',
      { topic: 'persistent://public/default/topic', startMessageId: 'not MessageId' },
      START_ID_REQUIRED,
    ],
  ])('%s', async (_name, config, message) => {
    const client = pulsarClient();
    await expect(createReader(client, config)).rejects.toThrow(message);
    await client.close();
  });

  it('Reader by Partitioned Topic: a reader at latest reads the 10 messages sent after it, hasNext true before and false after', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('test-reader-partitioned-topic');
    await admin().topics().createPartitionedTopic(topic, 4);
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const reader = await client.createReader({ topic, startMessageId: Pulsar.MessageId.latest() });
    const messages: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      void producer.send({ data: Buffer.from(`my-message-${i}`) });
      messages.push(`my-message-${i}`);
    }
    await producer.flush();
    expect(reader.hasNext()).toBe(true);
    const results: string[] = [];
    for (let i = 0; i < 10; i += 1) results.push((await reader.readNext()).getData().toString());
    expect(difference(messages, results)).toEqual([]);
    expect(reader.hasNext()).toBe(false);
    await producer.close();
    await reader.close();
    await client.close();
  });

  it('Reader should not throw segmentation fault when create and close: 50 readers with listeners made and closed at once', async () => {
    // pulsar-client makes 1,000 (a native-memory check); each ackline reader is a subscription made and
    // deleted over HTTP, so 50 keep the shared 2-core stack usable while checking the same races.
    const client = pulsarClient();
    const topic = uniqueTopic('my-topic');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    for (let i = 0; i < 10; i += 1) void producer.send({ data: Buffer.from(`my-message-${i}`) });
    await producer.flush();
    const read: string[] = [];
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        const reader = await client.createReader({
          topic,
          startMessageId: Pulsar.MessageId.earliest(),
          listener: (message) => {
            read.push(message.getData().toString());
          },
        });
        await reader.close();
      }),
    );
    await producer.close();
    await client.close();
    const subscriptions = await admin().topics().getSubscriptions(topic);
    expect(subscriptions).toEqual([]);
  });
});
