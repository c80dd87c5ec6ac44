import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { AcklineClient, type Message } from '../../shared/index.ts';
import { tokenFor } from '../support/admin-fixtures.ts';

// The SDK's Pulsar consumer capabilities against the real embedded stack, over HTTP.
const client = () =>
  AcklineClient.builder().serviceUrl(inject('acklineUrl')).authToken(tokenFor('admin')).build();
const uniqueTopic = (name: string) => `persistent://ackline-it/sdk/${name}-${randomUUID().slice(0, 8)}`;

async function publish(sdk: AcklineClient, topic: string, values: readonly string[]) {
  const producer = await sdk.newProducer().topic(topic).create();
  const ids = [];
  for (const value of values) ids.push(await producer.send(value));
  return ids;
}

async function receiveValues(
  consumer: { receive(timeoutMs: number): Promise<Message | undefined> },
  count: number,
): Promise<string[]> {
  const values: string[] = [];
  while (values.length < count) {
    const message = await consumer.receive(8_000);
    if (!message) break;
    values.push(message.getValue());
  }
  return values;
}

describe('SDK consumer: listener, seek, receiver queue', () => {
  it('hands every message to the listener, one at a time, in order; receive() is refused meanwhile', async () => {
    const sdk = client();
    const topic = uniqueTopic('listener');
    const seen: string[] = [];
    let concurrent = 0;
    let maxConcurrent = 0;
    const done = new Promise<void>((resolve) => {
      void sdk
        .newConsumer()
        .topic(topic)
        .subscriptionName('listen')
        .subscriptionInitialPosition('Earliest')
        .messageListener(async (message, consumer) => {
          concurrent += 1;
          maxConcurrent = Math.max(maxConcurrent, concurrent);
          await new Promise((r) => setTimeout(r, 20));
          seen.push(message.getValue());
          await consumer.acknowledge(message);
          concurrent -= 1;
          if (seen.length === 5) resolve();
        })
        .subscribe()
        .then(async (consumer) => {
          await expect(consumer.receive(0)).rejects.toThrow(/message listener/);
        });
    });
    await publish(sdk, topic, ['m0', 'm1', 'm2', 'm3', 'm4']);
    await done;
    await sdk.close();

    expect(seen).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(maxConcurrent).toBe(1);
  });

  it('seeks back to a message id, to earliest and latest, and by publish time', async () => {
    const sdk = client();
    const topic = uniqueTopic('seek');
    const consumer = await sdk
      .newConsumer()
      .topic(topic)
      .subscriptionName('seeker')
      .subscriptionInitialPosition('Earliest')
      .subscribe();
    const ids = await publish(sdk, topic, ['m0', 'm1', 'm2', 'm3']);
    const first = await receiveValues(consumer, 4);

    await consumer.seek(ids[2]!);
    const fromId = await receiveValues(consumer, 2);
    await consumer.seek('earliest');
    const fromEarliest = await receiveValues(consumer, 4);
    await consumer.seek('latest');
    const afterLatest = await consumer.receive(1_500);
    const cutMs = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await publish(sdk, topic, ['m4']);
    await consumer.seekTimestamp(cutMs);
    const fromTime = await receiveValues(consumer, 1);
    await sdk.close();

    expect(first).toEqual(['m0', 'm1', 'm2', 'm3']);
    expect(fromId).toEqual(['m2', 'm3']);
    expect(fromEarliest).toEqual(['m0', 'm1', 'm2', 'm3']);
    expect(afterLatest).toBeUndefined();
    expect(fromTime).toEqual(['m4']);
  });

  it('keeps at most receiverQueueSize messages ahead: one poll of 3 when the queue is 3', async () => {
    const sdk = client();
    const topic = uniqueTopic('queue');
    await publish(sdk, topic, ['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    const small = await sdk
      .newConsumer()
      .topic(topic)
      .subscriptionName('shared')
      .subscriptionType('Shared')
      .subscriptionInitialPosition('Earliest')
      .receiverQueueSize(3)
      .subscribe();
    const other = await sdk
      .newConsumer()
      .topic(topic)
      .subscriptionName('shared')
      .subscriptionType('Shared')
      .receiverQueueSize(0)
      .subscribe();
    const one = await small.receive(8_000);
    // The small consumer keeps two more; the other one gets the three left.
    const rest = await receiveValues(other, 3);
    await sdk.close();

    expect(one?.getValue()).toBe('m0');
    expect(rest).toEqual(['m3', 'm4', 'm5']);
  });
});

describe('SDK consumer: unsubscribe', () => {
  it('deletes the subscription and closes the consumer; refused with 412 while another consumer is connected', async () => {
    const sdk = client();
    const topic = uniqueTopic('unsub');
    await publish(sdk, topic, ['m0']);
    const subscribe = () =>
      sdk.newConsumer().topic(topic).subscriptionName('gone').subscriptionType('Shared').subscribe();
    const first = await subscribe();
    const second = await subscribe();
    const refused = await first.unsubscribe().catch((error: unknown) => error);
    const listedWhileTwo = await sdk.admin().topics().getSubscriptions(topic);
    await second.close();
    await first.unsubscribe();
    const listedAfter = await sdk.admin().topics().getSubscriptions(topic);
    const afterward = await first.receive(0).catch((error: unknown) => error);
    await sdk.close();

    expect((refused as { statusCode?: number }).statusCode).toBe(412);
    expect(listedWhileTwo).toEqual(['gone']);
    expect(listedAfter).toEqual([]);
    expect(String(afterward)).toMatch(/closed/);
  });
});
