import { describe, expect, it } from 'vitest';
import { tokenFor, uniqueRole } from '../../support/admin-fixtures.ts';
import { admin, Pulsar, pulsarClient, sleep, uniqueTopic } from '../../support/pulsar-client-fixtures.ts';

// Where request/response cannot behave exactly as Pulsar's binary protocol, ackline/pulsar-client
// does what docs/from-pulsar-client.md says; these tests hold it to that (issue 23, criterion 1).

describe('ackline/pulsar-client over HTTP', () => {
  it('an ack timeout turns prefetch off: the messages a consumer has not been handed stay free for the others', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('ack-timeout-prefetch');
    const producer = await client.createProducer({ topic, batchingEnabled: false });
    for (let i = 0; i < 3; i += 1) await producer.send({ data: Buffer.from(`m${i}`) });
    const shared = {
      topic,
      subscriptionType: 'Shared' as const,
      subscriptionInitialPosition: 'Earliest' as const,
    };

    // Without an ack timeout, the first receive prefetches the whole backlog for this consumer...
    const prefetching = await client.subscribe({
      ...shared,
      subscription: 'prefetch',
      receiverQueueSize: 1000,
    });
    await prefetching.receive(5000);
    const other = await client.subscribe({ ...shared, subscription: 'prefetch' });
    await expect(other.receive(2000)).rejects.toThrow('TimeOut');

    // ...with one, a receive takes one message: the other consumer gets the two left at once.
    const timed = await client.subscribe({
      ...shared,
      subscription: 'timed',
      receiverQueueSize: 1000,
      ackTimeoutMs: 10_000,
    });
    await timed.receive(5000);
    const peer = await client.subscribe({ ...shared, subscription: 'timed' });
    const rest = [await peer.receive(5000), await peer.receive(5000)].map((m) => m.getData().toString());
    expect(rest.sort()).toEqual(['m1', 'm2']);
    await client.close();
  });

  it('negativeAcknowledge queues its request: a failure reaches the log handler at ERROR, and close() waits for it', async () => {
    const logged: string[] = [];
    const client = pulsarClient({
      log: (level, _file, _line, message) => {
        if (level === Pulsar.LogLevel.ERROR) logged.push(message);
      },
    });
    const topic = uniqueTopic('nack-queue');
    const consumer = await client.subscribe({ topic, subscription: 'sub' });
    // An id of no message of this topic: the server refuses it.
    const bogus = Pulsar.MessageId.deserialize(Buffer.from('08ffffffff0f10001800', 'hex'));
    consumer.negativeAcknowledgeId(bogus);
    expect(logged).toEqual([]);
    await consumer.close();
    expect(logged.some((message) => message.startsWith('Failed to negatively acknowledge'))).toBe(true);
    await client.close();
  });

  it("hasNext() sees another client's message within the reader's 1 s refresh", async () => {
    const readerClient = pulsarClient();
    const producerClient = pulsarClient();
    const topic = uniqueTopic('has-next-lag');
    const producer = await producerClient.createProducer({ topic });
    const reader = await readerClient.createReader({ topic, startMessageId: Pulsar.MessageId.latest() });
    expect(reader.hasNext()).toBe(false);
    await producer.send({ data: Buffer.from('from elsewhere') });
    const sentAt = Date.now();
    while (!reader.hasNext() && Date.now() - sentAt < 5000) await sleep(50);
    expect(Date.now() - sentAt).toBeLessThan(2500);
    expect((await reader.readNext(1000)).getData().toString()).toBe('from elsewhere');
    expect(reader.hasNext()).toBe(false);
    await readerClient.close();
    await producerClient.close();
  });

  it('isConnected() turns false when the server drops the consumer (its topic deleted), and receive rejects', async () => {
    const client = pulsarClient();
    const topic = uniqueTopic('dropped');
    const consumer = await client.subscribe({ topic, subscription: 'sub' });
    // The SDK learns it at its next call: the poll after the one waiting (at most 20 s), or a heartbeat.
    const waiting = consumer.receive();
    await sleep(300);
    await admin().topics().delete(topic, { force: true });
    await expect(waiting).rejects.toThrow('Failed to receive message: AlreadyClosed');
    expect(consumer.isConnected()).toBe(false);
    await client.close();
  }, 60_000);

  it('a role with only produce and consume permissions (no superuser) produces, consumes, seeks, reads and unsubscribes', async () => {
    const role = uniqueRole('pulsar-client');
    await admin().namespaces().grantPermissionOnNamespace('public/default', role, ['produce', 'consume']);
    const client = pulsarClient({
      authentication: new Pulsar.AuthenticationToken({ token: tokenFor(role) }),
    });
    const topic = uniqueTopic('plain-role');
    const producer = await client.createProducer({ topic });
    const consumer = await client.subscribe({
      topic,
      subscription: 'sub',
      subscriptionInitialPosition: 'Earliest',
    });
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push(await producer.send({ data: Buffer.from(`m${i}`) }));
    const first = await consumer.receive(5000);
    await consumer.acknowledge(first);
    await consumer.seek(ids[1]!);
    expect((await consumer.receive(5000)).getData().toString()).toBe('m2');
    const reader = await client.createReader({ topic, startMessageId: Pulsar.MessageId.earliest() });
    const read = [];
    while (reader.hasNext()) read.push((await reader.readNext(5000)).getData().toString());
    expect(read).toEqual(['m0', 'm1', 'm2']);
    await reader.close();
    await consumer.unsubscribe();
    await client.close();
    expect(await admin().topics().getSubscriptions(topic)).toEqual([]);
  });
});
