import { afterAll, describe, expect, it } from 'vitest';
import {
  admin,
  Pulsar,
  partitionOf,
  pulsarClient,
  sleep,
  uniqueTopic,
} from '../../support/pulsar-client-fixtures.ts';

// apache/pulsar-client-node v1.18.0 tests/producer.test.js, re-expressed against ackline/pulsar-client
// (docs/design/pulsar-client-tests.md).

const client = pulsarClient();
afterAll(async () => {
  await client.close();
});

describe('pulsar-client tests/producer.test.js: Create', () => {
  it('No Topic', async () => {
    await expect(
      client.createProducer({
        sendTimeoutMs: 30000,
        batchingEnabled: true,
      } as unknown as Pulsar.ProducerConfig),
    ).rejects.toThrow('Topic is required and must be specified as a string when creating producer');
  });

  it('Not String Topic', async () => {
    await expect(client.createProducer({ topic: 0 } as unknown as Pulsar.ProducerConfig)).rejects.toThrow(
      'Topic is required and must be specified as a string when creating producer',
    );
  });

  it('Not Exist Tenant', async () => {
    await expect(client.createProducer({ topic: 'persistent://no-tenant/namespace/topic' })).rejects.toThrow(
      'Failed to create producer: TopicNotFound',
    );
  });

  it('Not Exist Namespace', async () => {
    await expect(client.createProducer({ topic: 'persistent://public/no-namespace/topic' })).rejects.toThrow(
      'Failed to create producer: TopicNotFound',
    );
  });

  it('Automatic Producer Name', async () => {
    const producer = await client.createProducer({ topic: uniqueTopic('topic') });
    expect(typeof producer.getProducerName()).toBe('string');
    expect(producer.getProducerName()).not.toBe('');
    await producer.close();
  });

  it('Explicit Producer Name', async () => {
    const producer = await client.createProducer({
      topic: uniqueTopic('topic'),
      producerName: 'test-producer',
    });
    expect(producer.getProducerName()).toBe('test-producer');
    await producer.close();
  });

  it('Topic Name', async () => {
    const topic = uniqueTopic('topic');
    const producer = await client.createProducer({ topic });
    expect(producer.getTopic()).toBe(topic);
    await producer.close();
  });
});

describe('pulsar-client tests/producer.test.js: Access Mode', () => {
  it('Exclusive: a second Exclusive producer is refused ResultProducerFenced while the first holds the topic', async () => {
    const topic = uniqueTopic('test-access-mode-exclusive');
    const producer1 = await client.createProducer({ topic, producerName: 'p-1', accessMode: 'Exclusive' });
    expect(producer1.getProducerName()).toBe('p-1');
    await expect(
      client.createProducer({ topic, producerName: 'p-2', accessMode: 'Exclusive' }),
    ).rejects.toThrow('Failed to create producer: ResultProducerFenced');
    // Beyond the original: a Shared producer is refused too (Pulsar's ProducerBusy), and the holder publishes.
    await expect(client.createProducer({ topic, producerName: 'p-3' })).rejects.toThrow(
      'Failed to create producer: ProducerBusy',
    );
    await producer1.send({ data: Buffer.from('from p-1') });
    await producer1.close();
    // Closed: the topic is free again.
    const producer4 = await client.createProducer({ topic, producerName: 'p-4', accessMode: 'Exclusive' });
    await producer4.close();
  });

  it('WaitForExclusive: created once the Exclusive producer closes', async () => {
    const topic = uniqueTopic('test-access-mode-wait-for-exclusive');
    const producer1 = await client.createProducer({ topic, producerName: 'p-1', accessMode: 'Exclusive' });
    expect(producer1.getProducerName()).toBe('p-1');
    let created = false;
    const waiting = client
      .createProducer({ topic, producerName: 'p-2', accessMode: 'WaitForExclusive' })
      .then((producer) => {
        created = true;
        return producer;
      });
    // Beyond the original (which closes p-1 at once): p-2 still waits while p-1 holds the topic.
    await sleep(1_500);
    expect(created).toBe(false);
    const closing = producer1.close();
    const producer2 = await waiting;
    await closing;
    expect(producer2.getProducerName()).toBe('p-2');
    await producer2.send({ data: Buffer.from('from p-2') });
    await producer2.close();
  });

  it('ExclusiveWithFencing: the producer taken over is fenced, its send rejects ResultProducerFenced', async () => {
    const topic = uniqueTopic('test-access-mode');
    const producer1 = await client.createProducer({ topic, producerName: 'p-1', accessMode: 'Exclusive' });
    expect(producer1.getProducerName()).toBe('p-1');
    const producer2 = await client.createProducer({
      topic,
      producerName: 'p-2',
      accessMode: 'ExclusiveWithFencing',
    });
    expect(producer2.getProducerName()).toBe('p-2');
    await expect(producer1.send({ data: Buffer.from('test-msg') })).rejects.toThrow(
      'Failed to send message: ResultProducerFenced',
    );
    // Beyond the original: p-1 stays fenced and stored nothing; p-2 publishes.
    expect(producer1.isConnected()).toBe(false);
    await expect(producer1.send({ data: Buffer.from('again') })).rejects.toThrow('ResultProducerFenced');
    await producer2.send({ data: Buffer.from('from p-2') });
    const reader = await client.createReader({ topic, startMessageId: Pulsar.MessageId.earliest() });
    const read = await reader.readNext(5_000);
    expect(read.getData().toString()).toBe('from p-2');
    await expect(reader.readNext(1_000)).rejects.toThrow('TimeOut');
    await reader.close();
    await producer2.close();
    await producer1.close();
  });
});

describe('pulsar-client tests/producer.test.js: Message Routing', () => {
  it('Custom Message Router: each message goes to the partition the router picks', async () => {
    const topic = uniqueTopic('test-custom-router');
    const numPartitions = 3;
    await admin().topics().createPartitionedTopic(topic, numPartitions);
    const producer = await client.createProducer({
      topic,
      batchingMaxMessages: 2,
      messageRouter: (message, topicMetadata) =>
        Number.parseInt(message.getPartitionKey(), 10) % topicMetadata.numPartitions,
      messageRoutingMode: 'CustomPartition',
    });
    const ids: Pulsar.MessageId[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push(await producer.send({ partitionKey: `${i}`, data: Buffer.from(`msg-${i}`) }));
    }
    expect(ids.map(partitionOf)).toEqual([0, 1, 2, 0, 1]);
    await producer.close();
  });

  it('Exception in router: the send rejects with UnknownError', async () => {
    const topic = uniqueTopic('test-exception-in-router');
    await admin().topics().createPartitionedTopic(topic, 2);
    const producer = await client.createProducer({
      topic,
      messageRouter: () => {
        throw new Error('Custom error in message router');
      },
      messageRoutingMode: 'CustomPartition',
    });
    await expect(producer.send({ data: Buffer.from('test') })).rejects.toThrow(
      'Failed to send message: UnknownError',
    );
    await producer.close();
  });

  it('Not CustomPartition: a router is ignored unless the mode is CustomPartition; keyless messages use one partition', async () => {
    const topic = uniqueTopic('test-not-custom-part');
    await admin().topics().createPartitionedTopic(topic, 2);
    let index = 0;
    const producer = await client.createProducer({
      topic,
      messageRouter: (_message, topicMetadata) => {
        const result = index % topicMetadata.numPartitions;
        index += 1;
        return result;
      },
      messageRoutingMode: 'UseSinglePartition',
    });
    const partitions = new Set<number>();
    for (let i = 0; i < 10; i += 1)
      partitions.add(partitionOf(await producer.send({ data: Buffer.from('msg') })));
    expect(partitions.size).toBe(1);
    expect(index).toBe(0);
    await producer.close();
  });
});

describe('pulsar-client tests/producer.test.js: Batching', () => {
  it('should batch messages based on max allowed size in bytes: 30 messages arrive in order with their properties', async () => {
    const topic = uniqueTopic('test-batch-size-in-bytes');
    const producer = await client.createProducer({
      topic,
      compressionType: 'LZ4',
      batchingEnabled: true,
      batchingMaxMessages: 10000,
      batchingMaxAllowedSizeInBytes: 20,
    });
    const consumer = await client.subscribe({ topic, subscription: 'subscription-name' });
    const sent: Promise<Pulsar.MessageId>[] = [];
    for (let i = 0; i < 30; i += 1) {
      sent.push(producer.send({ data: Buffer.from(`12345678${i}`), properties: { msgIndex: String(i) } }));
    }
    await producer.flush();
    await Promise.all(sent);
    for (let i = 0; i < 30; i += 1) {
      const received = await consumer.receive(5000);
      // ackline stores no batch entries: the batch index is -1 (pulsar-client's test wants it below 2).
      expect(received.getMessageId().toString()).toMatch(/,-1\)$/);
      expect(received.getProperties().msgIndex).toBe(String(i));
      expect(received.getData().toString()).toBe(`12345678${i}`);
      await consumer.acknowledge(received);
    }
    await producer.close();
    await consumer.close();
  });
});
