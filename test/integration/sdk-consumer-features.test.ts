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

describe('SDK multi-topic and pattern consumers', () => {
  it('merges the messages of a topic list, in order per topic, and acknowledges each on its topic', async () => {
    const sdk = client();
    const a = uniqueTopic('multi-a');
    const b = uniqueTopic('multi-b');
    const consumer = await sdk
      .newConsumer()
      .topics([a, b])
      .subscriptionName('merged')
      .subscriptionInitialPosition('Earliest')
      .subscribe();
    await publish(sdk, a, ['a0', 'a1']);
    await publish(sdk, b, ['b0', 'b1']);
    const received: Message[] = [];
    while (received.length < 4) {
      const message = await consumer.receive(8_000);
      if (!message) break;
      received.push(message);
    }
    await consumer.acknowledge(received);
    const backlogs = await Promise.all(
      [a, b].map(async (topic) => {
        const stats = (await sdk.admin().topics().getStats(topic)) as {
          subscriptions: Record<string, { msgBacklog: number }>;
        };
        return stats.subscriptions.merged?.msgBacklog;
      }),
    );
    await sdk.close();

    const values = received.map((m) => m.getValue());
    expect(values.filter((v) => v.startsWith('a'))).toEqual(['a0', 'a1']);
    expect(values.filter((v) => v.startsWith('b'))).toEqual(['b0', 'b1']);
    expect(consumer.getTopics()).toEqual([a, b].sort());
    expect(backlogs).toEqual([0, 0]);
  });

  it('subscribes the matching topics of a namespace, and those created later on discovery', async () => {
    const sdk = client();
    const prefix = `pat${randomUUID().slice(0, 6)}`;
    const namespace = 'ackline-it/sdk';
    await publish(sdk, `persistent://${namespace}/${prefix}-one`, ['x']);
    await publish(sdk, `persistent://${namespace}/other-${prefix}`, ['not matched']);
    const consumer = await sdk
      .newConsumer()
      .topicsPattern(`${namespace}/${prefix}-.*`)
      .subscriptionName('pattern')
      .subscriptionInitialPosition('Earliest')
      .subscribe();
    const before = consumer.getTopics();
    await publish(sdk, `persistent://${namespace}/${prefix}-two`, ['y']);
    await consumer.refreshTopics();
    const after = consumer.getTopics();
    const values = [];
    for (let i = 0; i < 2; i += 1) values.push((await consumer.receive(8_000))?.getValue());
    await sdk.close();

    expect(before).toEqual([`persistent://${namespace}/${prefix}-one`]);
    expect(after).toEqual([
      `persistent://${namespace}/${prefix}-one`,
      `persistent://${namespace}/${prefix}-two`,
    ]);
    // -two was subscribed after its message was published, from Earliest: it is read too.
    expect(values.sort()).toEqual(['x', 'y']);
  });
});

describe('SDK reader', () => {
  it('reads from earliest, from after a message and at it, answers hasNext, and deletes its subscription on close', async () => {
    const sdk = client();
    const topic = uniqueTopic('reader');
    const ids = await publish(sdk, topic, ['m0', 'm1', 'm2']);
    const fromEarliest = await sdk.newReader().topic(topic).startMessageId('earliest').create();
    const all: string[] = [];
    while (await fromEarliest.hasNext()) all.push((await fromEarliest.readNext()).getValue());
    const subscriptionsWhileOpen = await sdk.admin().topics().getSubscriptions(topic);
    await fromEarliest.close();
    const after = await sdk.newReader().topic(topic).startMessageId(ids[0]!).create();
    const afterFirst = [(await after.readNext(5_000))?.getValue(), (await after.readNext(5_000))?.getValue()];
    await after.seek('earliest');
    const again = (await after.readNext(5_000))?.getValue();
    await after.close();
    const at = await sdk.newReader().topic(topic).startMessageId(ids[1]!).startMessageIdInclusive().create();
    const atSecond = (await at.readNext(5_000))?.getValue();
    await at.close();
    const subscriptionsAfter = await sdk.admin().topics().getSubscriptions(topic);
    await sdk.close();

    expect(all).toEqual(['m0', 'm1', 'm2']);
    expect(subscriptionsWhileOpen).toHaveLength(1);
    expect(String(subscriptionsWhileOpen[0])).toMatch(/reader-[0-9a-f]{10}$/);
    expect(afterFirst).toEqual(['m1', 'm2']);
    expect(again).toBe('m0');
    expect(atSecond).toBe('m1');
    expect(subscriptionsAfter).toEqual([]);
  });
});
