import { describe, expect, it } from 'vitest';
import {
  difference,
  Pulsar,
  pulsarClient,
  sleep,
  uniqueTopic,
} from '../../support/pulsar-client-fixtures.ts';

// apache/pulsar-client-node v1.18.0 tests/end_to_end.test.js, re-expressed against ackline/pulsar-client
// (docs/design/pulsar-client-tests.md). Each test makes its own client, as the original does.

const TIMEOUT = 'Failed to receive message: TimeOut';

async function sendAll(producer: Pulsar.Producer, count: number, from = 0): Promise<string[]> {
  const messages: string[] = [];
  for (let i = from; i < from + count; i += 1) {
    void producer.send({ data: Buffer.from(`my-message-${i}`) });
    messages.push(`my-message-${i}`);
  }
  await producer.flush();
  return messages;
}

describe('pulsar-client tests/end_to_end.test.js: End To End', () => {
  // The original runs this over pulsar://, pulsar+ssl://, http:// and https://; ackline's one URL is
  // http(s) (the TLS cases are listed as not applicable in docs/design/pulsar-client-tests.md).
  it('Produce/Consume to the service URL: 10 messages with their producer name, not replicated', async () => {
    const client = pulsarClient({ connectionTimeoutMs: 20000 });
    const topic = uniqueTopic('produce-consume');
    const producer = await client.createProducer({
      topic,
      sendTimeoutMs: 30000,
      batchingEnabled: true,
      producerName: 'test-producer',
    });
    const consumer = await client.subscribe({ topic, subscription: 'sub1', ackTimeoutMs: 10000 });
    const messages = await sendAll(producer, 10);
    const results: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const msg = await consumer.receive();
      void consumer.acknowledge(msg);
      expect(msg.getProducerName()).toBe('test-producer');
      expect(msg.isReplicated()).toBe(false);
      expect(msg.getReplicatedFrom()).toBe('');
      results.push(msg.getData().toString());
    }
    expect(difference(messages, results)).toEqual([]);
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('negativeAcknowledge: the message comes back once, then nothing', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-consume');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const consumer = await client.subscribe({
      topic,
      subscription: 'sub1',
      ackTimeoutMs: 10000,
      nAckRedeliverTimeoutMs: 1000,
    });
    void producer.send({ data: Buffer.from('my-message') });
    await producer.flush();
    const msg = await consumer.receive();
    consumer.negativeAcknowledge(msg);
    const msg2 = await consumer.receive();
    void consumer.acknowledge(msg2);
    await expect(consumer.receive(1000)).rejects.toThrow(TIMEOUT);
    expect([msg.getData().toString(), msg2.getData().toString()]).toEqual(['my-message', 'my-message']);
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('getRedeliveryCount: the third delivery of a nacked message counts 2', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-consume');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const consumer = await client.subscribe({
      topic,
      subscriptionType: 'Shared',
      subscription: 'sub1',
      ackTimeoutMs: 10000,
      nAckRedeliverTimeoutMs: 100,
    });
    void producer.send({ data: Buffer.from('my-message') });
    await producer.flush();
    let msg: Pulsar.Message | undefined;
    let redeliveryCount = -1;
    for (let index = 0; index < 3; index += 1) {
      msg = await consumer.receive();
      redeliveryCount = msg.getRedeliveryCount();
      consumer.negativeAcknowledge(msg);
    }
    expect(redeliveryCount).toBe(2);
    void consumer.acknowledge(msg!);
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('Produce/Consume Listener: the listener gets the 10 messages', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-consume-listener');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const results: string[] = [];
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const consumer = await client.subscribe({
      topic,
      subscription: 'sub1',
      ackTimeoutMs: 10000,
      listener: (message, messageConsumer) => {
        results.push(message.getData().toString());
        void messageConsumer.acknowledge(message);
        if (results.length === 10) finish();
      },
    });
    const messages = await sendAll(producer, 10);
    await finished;
    expect(difference(messages, results)).toEqual([]);
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('Produce/Read Listener: a reader listener at latest gets the 10 messages sent after it', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-read-listener');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const results: string[] = [];
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const reader = await client.createReader({
      topic,
      startMessageId: Pulsar.MessageId.latest(),
      listener: (message) => {
        results.push(message.getData().toString());
        if (results.length === 10) finish();
      },
    });
    const messages = await sendAll(producer, 10);
    await finished;
    expect(difference(messages, results)).toEqual([]);
    await producer.close();
    await reader.close();
    await client.close();
  });

  it('Share consumers with message listener: a listener consumer and a receiving one each get more than their receiver queue', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('test-shared-consumer-listener');
    const producer = await client.createProducer({ topic, batchingEnabled: false });
    for (let i = 0; i < 100; i += 1) await producer.send(i as unknown as Pulsar.ProducerMessage);
    let consumer1Recv = 0;
    const consumer1 = await client.subscribe({
      topic,
      subscription: 'sub',
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
      receiverQueueSize: 10,
      listener: async (message, messageConsumer) => {
        await sleep(10);
        consumer1Recv += 1;
        await messageConsumer.acknowledge(message);
      },
    });
    const consumer2 = await client.subscribe({
      topic,
      subscription: 'sub',
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
      receiverQueueSize: 10,
    });
    let consumer2Recv = 0;
    for (;;) {
      try {
        const msg = await consumer2.receive(3000);
        await sleep(10);
        consumer2Recv += 1;
        await consumer2.acknowledge(msg);
      } catch {
        break;
      }
    }
    expect(consumer1Recv).toBeGreaterThan(10);
    expect(consumer2Recv).toBeGreaterThan(10);
    expect(consumer1Recv + consumer2Recv).toBeGreaterThanOrEqual(100);
    await consumer1.close();
    await consumer2.close();
    await producer.close();
    await client.close();
  });

  it('Share readers with message listener: a listener reader and a hasNext/readNext reader each read more than their receiver queue', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('test-shared-reader-listener');
    const producer = await client.createProducer({ topic, batchingEnabled: false });
    for (let i = 0; i < 100; i += 1) await producer.send(i as unknown as Pulsar.ProducerMessage);
    let reader1Recv = 0;
    const reader1 = await client.createReader({
      topic,
      startMessageId: Pulsar.MessageId.earliest(),
      receiverQueueSize: 10,
      listener: async () => {
        await sleep(10);
        reader1Recv += 1;
      },
    });
    const reader2 = await client.createReader({
      topic,
      startMessageId: Pulsar.MessageId.earliest(),
      receiverQueueSize: 10,
    });
    let reader2Recv = 0;
    while (reader2.hasNext()) {
      await reader2.readNext();
      await sleep(10);
      reader2Recv += 1;
    }
    expect(reader1Recv).toBeGreaterThan(10);
    expect(reader2Recv).toBe(100);
    await reader1.close();
    await reader2.close();
    await producer.close();
    await client.close();
  });

  it('Message Listener error handling: a listener that throws, or rejects, is reported to the log handler at ERROR', async () => {
    const client = pulsarClient();
    const errors: string[] = [];
    let seen: () => void = () => undefined;
    const bothSeen = new Promise<void>((resolve) => {
      seen = resolve;
    });
    Pulsar.Client.setLogHandler((level, _file, _line, message) => {
      if (level === Pulsar.LogLevel.ERROR) errors.push(message);
      const all = errors.join('\n');
      if (
        all.includes('consumer1 callback expected error') &&
        all.includes('consumer2 callback expected error')
      )
        seen();
    });
    const topic = uniqueTopic('test-error-listener');
    const producer = await client.createProducer({ topic, batchingEnabled: false });
    await producer.send('test-message' as unknown as Pulsar.ProducerMessage);
    const consumer1 = await client.subscribe({
      topic,
      subscription: 'sync',
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
      listener: () => {
        throw new Error('consumer1 callback expected error');
      },
    });
    const consumer2 = await client.subscribe({
      topic,
      subscription: 'async',
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
      listener: async () => {
        throw new Error('consumer2 callback expected error');
      },
    });
    await bothSeen;
    await consumer1.close();
    await consumer2.close();
    await producer.close();
    await client.close();
  });

  it('acknowledgeCumulative: acknowledging the 10th acknowledges all 10', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('acknowledgeCumulative');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const consumer = await client.subscribe({ topic, subscription: 'sub1', ackTimeoutMs: 10000 });
    await sendAll(producer, 10);
    for (let i = 0; i < 10; i += 1) {
      const msg = await consumer.receive();
      if (i === 9) void consumer.acknowledgeCumulative(msg);
    }
    await expect(consumer.receive(1000)).rejects.toThrow(TIMEOUT);
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('subscriptionInitialPosition: Latest gets what is sent after it subscribed, Earliest everything', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('subscriptionInitialPosition');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: false });
    const messages = await sendAll(producer, 2);
    const latestConsumer = await client.subscribe({
      topic,
      subscription: 'latestSub',
      subscriptionInitialPosition: 'Latest',
    });
    const earliestConsumer = await client.subscribe({
      topic,
      subscription: 'earliestSub',
      subscriptionInitialPosition: 'Earliest',
    });
    messages.push(...(await sendAll(producer, 2, 2)));
    const latestResults: string[] = [];
    const earliestResults: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      if (i < 2) {
        const latestMsg = await latestConsumer.receive(5000);
        void latestConsumer.acknowledge(latestMsg);
        latestResults.push(latestMsg.getData().toString());
      }
      const earliestMsg = await earliestConsumer.receive(5000);
      void earliestConsumer.acknowledge(earliestMsg);
      earliestResults.push(earliestMsg.getData().toString());
    }
    expect(difference(messages, latestResults)).toEqual(['my-message-0', 'my-message-1']);
    expect(difference(messages, earliestResults)).toEqual([]);
    await producer.close();
    await latestConsumer.close();
    await earliestConsumer.close();
    await client.close();
  });

  it.each([
    ['Produce/Read', {}],
    ['Produce/Read (Compression)', { compressionType: 'ZSTD' as const }],
  ])('%s: a reader at latest reads the 10 messages sent after it; hasNext true before, false after', async (_name, extra) => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-read');
    const producer = await client.createProducer({
      topic,
      sendTimeoutMs: 30000,
      batchingEnabled: true,
      ...extra,
    });
    const reader = await client.createReader({ topic, startMessageId: Pulsar.MessageId.latest() });
    const messages = await sendAll(producer, 10);
    expect(reader.hasNext()).toBe(true);
    const results: string[] = [];
    for (let i = 0; i < 10; i += 1) results.push((await reader.readNext()).getData().toString());
    expect(difference(messages, results)).toEqual([]);
    expect(reader.hasNext()).toBe(false);
    await producer.close();
    await reader.close();
    await client.close();
  });

  it('Produce-Delayed/Consume: deliverAfter and deliverAt hold the messages for 3 s', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-read-delayed');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const consumer = await client.subscribe({ topic, subscription: 'sub', subscriptionType: 'Shared' });
    const messages: string[] = [];
    const time = Date.now();
    for (let i = 0; i < 10; i += 1) {
      const data = Buffer.from(`my-message-${i}`);
      void producer.send(i < 5 ? { data, deliverAfter: 3000 } : { data, deliverAt: Date.now() + 3000 });
      messages.push(`my-message-${i}`);
    }
    await producer.flush();
    const results: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const msg = await consumer.receive();
      results.push(msg.getData().toString());
      void consumer.acknowledge(msg);
    }
    expect(difference(messages, results)).toEqual([]);
    expect(Date.now() - time).toBeGreaterThan(3000);
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('Produce/Consume/Unsubscribe: after unsubscribe, a new subscription of the same name starts at latest', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-consume-unsubscribe');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const consumer = await client.subscribe({ topic, subscription: 'sub1', ackTimeoutMs: 10000 });
    const messages = await sendAll(producer, 10);
    const results: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const msg = await consumer.receive();
      void consumer.acknowledge(msg);
      results.push(msg.getData().toString());
    }
    expect(difference(messages, results)).toEqual([]);
    await consumer.unsubscribe();
    void producer.send({ data: Buffer.from('drop') });
    await producer.flush();
    const consumer2 = await client.subscribe({ topic, subscription: 'sub1', ackTimeoutMs: 10000 });
    void producer.send({ data: Buffer.from('success') });
    await producer.flush();
    const msg = await consumer2.receive();
    void consumer2.acknowledge(msg);
    expect(msg.getData().toString()).toBe('success');
    await consumer2.close();
    await producer.close();
    await client.close();
  });

  it.each([
    ['Produce/Consume-Pattern', true],
    ['Produce/Consume-Multi-Topic', false],
  ])('%s: one consumer gets the messages of two topics', async (_name, byPattern) => {
    const client = pulsarClient();
    const base = uniqueTopic('produce-abc');
    const topic1 = `${base}def`;
    const topic2 = `${base}zef`;
    const producer1 = await client.createProducer({
      topic: topic1,
      sendTimeoutMs: 30000,
      batchingEnabled: true,
    });
    const producer2 = await client.createProducer({
      topic: topic2,
      sendTimeoutMs: 30000,
      batchingEnabled: true,
    });
    const where = byPattern ? { topicsPattern: `${base}[a-z]ef` } : { topics: [topic1, topic2] };
    const consumer = await client.subscribe({ ...where, subscription: 'sub', subscriptionType: 'Shared' });
    const messages = [...(await sendAll(producer1, 5)), ...(await sendAll(producer2, 5, 5))];
    const results: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const msg = await consumer.receive();
      results.push(msg.getData().toString());
      void consumer.acknowledge(msg);
    }
    expect(difference(messages, results)).toEqual([]);
    await producer1.close();
    await producer2.close();
    await consumer.close();
    await client.close();
  });

  it('Produce/Consume and validate MessageId: the ids send() answered are the ids received', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-consume-message-id');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    const consumer = await client.subscribe({ topic, subscription: 'sub1' });
    const messageIds: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      messageIds.push((await producer.send({ data: Buffer.from(`my-message-${i}`) })).toString());
    }
    const resultIds: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const msg = await consumer.receive();
      void consumer.acknowledge(msg);
      resultIds.push(msg.getMessageId().toString());
    }
    expect(resultIds).toEqual(messageIds);
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('Produce/Consume/Read/IsConnected: true once made, false once closed', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('produce-consume');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: true });
    expect(producer.isConnected()).toEqual(true);
    const consumer = await client.subscribe({ topic, subscription: 'sub1', ackTimeoutMs: 10000 });
    expect(consumer.isConnected()).toEqual(true);
    const reader = await client.createReader({ topic, startMessageId: Pulsar.MessageId.latest() });
    expect(reader.isConnected()).toEqual(true);
    await producer.close();
    expect(producer.isConnected()).toEqual(false);
    await consumer.close();
    expect(consumer.isConnected()).toEqual(false);
    await reader.close();
    expect(reader.isConnected()).toEqual(false);
    await client.close();
  });

  it('Consumer seek by message Id: the next message is the one after the id', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('seek-by-msgid');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: false });
    const msgIds: Pulsar.MessageId[] = [];
    for (let i = 0; i < 10; i += 1)
      msgIds.push(await producer.send({ data: Buffer.from(`my-message-${i}`) }));
    const consumer = await client.subscribe({ topic, subscription: 'sub' });
    await consumer.seek(msgIds[5]!);
    expect((await consumer.receive(1000)).getData().toString()).toBe('my-message-6');
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('Consumer seek by timestamp: to now nothing comes; 100 s earlier the first message', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('seek-by-timestamp');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: false });
    for (let i = 0; i < 10; i += 1) await producer.send({ data: Buffer.from(`my-message-${i}`) });
    const consumer = await client.subscribe({ topic, subscription: 'sub' });
    const currentTime = Date.now();
    await consumer.seekTimestamp(currentTime);
    await expect(consumer.receive(1000)).rejects.toThrow(TIMEOUT);
    await consumer.seekTimestamp(currentTime - 100000);
    expect((await consumer.receive(1000)).getData().toString()).toBe('my-message-0');
    await producer.close();
    await consumer.close();
    await client.close();
  });

  it('Reader seek by message Id: hasNext is true and the next message is the one after the id', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('reader-seek-by-msgid');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: false });
    const msgIds: Pulsar.MessageId[] = [];
    for (let i = 0; i < 10; i += 1)
      msgIds.push(await producer.send({ data: Buffer.from(`my-message-${i}`) }));
    const reader = await client.createReader({ topic, startMessageId: Pulsar.MessageId.latest() });
    await reader.seek(msgIds[5]!);
    expect(reader.hasNext()).toBe(true);
    expect((await reader.readNext(1000)).getData().toString()).toBe('my-message-6');
    await producer.close();
    await reader.close();
    await client.close();
  });

  it('Reader seek by timestamp: to now hasNext is false; 100 s earlier it is true and the first message comes', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('reader-seek-timestamp');
    const producer = await client.createProducer({ topic, sendTimeoutMs: 30000, batchingEnabled: false });
    for (let i = 0; i < 10; i += 1) await producer.send({ data: Buffer.from(`my-message-${i}`) });
    const reader = await client.createReader({ topic, startMessageId: Pulsar.MessageId.latest() });
    const currentTime = Date.now();
    await reader.seekTimestamp(currentTime);
    expect(reader.hasNext()).toBe(false);
    await reader.seekTimestamp(currentTime - 100000);
    expect(reader.hasNext()).toBe(true);
    expect((await reader.readNext(1000)).getData().toString()).toBe('my-message-0');
    await producer.close();
    await reader.close();
    await client.close();
  });

  it('Message chunking: a 10 MB message goes in chunks and comes back whole', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('message-chunking');
    const producer = await client.createProducer({ topic, batchingEnabled: false, chunkingEnabled: true });
    const consumer = await client.subscribe({
      topic,
      subscription: 'sub',
      maxPendingChunkedMessage: 15,
      autoAckOldestChunkedMessageOnQueueFull: 1,
    });
    // pulsar-client sends zeros; bytes that differ along the message also check the chunks' order.
    const sendMsg = Buffer.alloc(10 * 1024 * 1024, 'abcdefghij');
    await producer.send({ data: sendMsg });
    const receiveMsg = await consumer.receive(30_000);
    expect(receiveMsg.getData().length).toBe(sendMsg.length);
    expect(receiveMsg.getData().equals(sendMsg)).toBe(true);
    await consumer.acknowledge(receiveMsg);
    await expect(consumer.receive(1000)).rejects.toThrow(TIMEOUT);
    await producer.close();
    await consumer.close();
    await client.close();
  }, 120_000);

  it.each([
    ['AuthenticationToken token supplier', (token: string) => () => token],
    ['AuthenticationToken async token supplier', (token: string) => async () => token],
  ])('%s: the supplier is called once, when the producer is made', async (_name, makeSupplier) => {
    const { tokenFor } = await import('../../support/admin-fixtures.ts');
    const supply = makeSupplier(tokenFor('admin'));
    let calls = 0;
    const client = pulsarClient({
      authentication: new Pulsar.AuthenticationToken({
        token: () => {
          calls += 1;
          return supply() as string;
        },
      }),
    });
    const producer = await client.createProducer({ topic: uniqueTopic('token-auth') });
    expect(calls).toBe(1);
    await producer.send({ data: Buffer.from('authenticated') });
    expect(calls).toBe(1);
    await producer.close();
    await client.close();
  });
});

describe('pulsar-client tests/end_to_end.test.js: KeyBasedBatchingTest', () => {
  const keyBatched = async (maxMessages: number) => {
    const client = pulsarClient();
    const topic = uniqueTopic('KeyBasedBatchingTest');
    const producer = await client.createProducer({
      topic,
      batchingEnabled: true,
      batchingMaxMessages: maxMessages,
      batchingType: 'KeyBasedBatching',
      batchingMaxPublishDelayMs: 3600 * 1000,
    });
    const consumer = await client.subscribe({
      topic,
      subscription: 'SubscriptionName',
      subscriptionType: 'Exclusive',
    });
    const receiveAndAck = async () => {
      const msg = await consumer.receive();
      await consumer.acknowledge(msg);
      return msg;
    };
    const close = async () => {
      await producer.close();
      await consumer.close();
      await client.close();
    };
    return { producer, receiveAndAck, close };
  };

  it('testSequenceId: a key-based batch is stored key by key, keys in the order of their first message', async () => {
    const { producer, receiveAndAck, close } = await keyBatched(6);
    for (const [value, key] of [
      ['0', 'A'],
      ['1', 'B'],
      ['2', 'C'],
      ['3', 'B'],
      ['4', 'C'],
      ['5', 'A'],
    ] as const) {
      void producer.send({ data: Buffer.from(value), partitionKey: key });
    }
    await producer.flush();
    const received: { key: string; value: string }[] = [];
    for (let i = 0; i < 6; i += 1) {
      const msg = await receiveAndAck();
      received.push({ key: msg.getPartitionKey(), value: msg.getData().toString() });
    }
    expect(received).toEqual([
      { key: 'A', value: '0' },
      { key: 'A', value: '5' },
      { key: 'B', value: '1' },
      { key: 'B', value: '3' },
      { key: 'C', value: '2' },
      { key: 'C', value: '4' },
    ]);
    await close();
  });

  it('testOrderingKeyPriority: the ordering key groups before the partition key, and both come back as sent', async () => {
    const { producer, receiveAndAck, close } = await keyBatched(3);
    void producer.send({ data: Buffer.from('0'), orderingKey: 'A', partitionKey: 'B' });
    void producer.send({ data: Buffer.from('2'), orderingKey: 'B' });
    void producer.send({ data: Buffer.from('1'), orderingKey: 'A' });
    await producer.flush();
    const msg1 = await receiveAndAck();
    expect([msg1.getData().toString(), msg1.getOrderingKey(), msg1.getPartitionKey()]).toEqual([
      '0',
      'A',
      'B',
    ]);
    const msg2 = await receiveAndAck();
    expect([msg2.getData().toString(), msg2.getOrderingKey(), msg2.getPartitionKey()]).toEqual([
      '1',
      'A',
      '',
    ]);
    const msg3 = await receiveAndAck();
    expect([msg3.getData().toString(), msg3.getOrderingKey()]).toEqual(['2', 'B']);
    await close();
  });
});
