import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { AcklineClient, MultiplierRedeliveryBackoff } from '../../shared/index.ts';
import { TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import { ConsumerApi, expectReplacedOwnerRefused, payloads, sleep } from '../support/consumer-fixtures.ts';

// The SDK against the real embedded stack (its unit tests use a fake fetch).
const client = () =>
  AcklineClient.builder().serviceUrl(inject('acklineUrl')).authToken(tokenFor('admin')).build();

describe('TypeScript SDK end to end', () => {
  it('runs the PIP-106 "process or nack" loop: a failed message comes back once with count 1, then is acknowledged', async () => {
    const sdk = client();
    const topic = `persistent://ackline-it/sdk/orders-${randomUUID().slice(0, 8)}`;
    const consumer = await sdk
      .newConsumer()
      .topic(topic)
      .subscriptionName('billing')
      .subscriptionType('Shared')
      .negativeAckRedeliveryBackoff(
        MultiplierRedeliveryBackoff.builder().minDelayMs(1000).maxDelayMs(60000).multiplier(2).build(),
      )
      .subscribe();
    const producer = await sdk.newProducer().topic(topic).create();
    await producer.newMessage().value('order 1').key('customer-7').property('trace', 'abc').send();
    await producer.send('order 2');

    const seen: { value: string; count: number }[] = [];
    let failedOnce = false;
    while (seen.filter((s) => s.count >= 0).length < 3) {
      const msg = await consumer.receive(8_000);
      if (!msg) break;
      seen.push({ value: msg.getValue(), count: msg.getRedeliveryCount() });
      if (msg.getValue() === 'order 1' && !failedOnce) {
        failedOnce = true;
        await consumer.negativeAcknowledge(msg);
      } else {
        await consumer.acknowledge(msg);
      }
    }
    const stats = (await sdk.admin().topics().getStats(topic)) as {
      subscriptions: Record<string, { msgBacklog: number }>;
    };
    await consumer.close();
    await sdk.close();

    expect(seen).toEqual(
      expect.arrayContaining([
        { value: 'order 1', count: 0 },
        { value: 'order 2', count: 0 },
        { value: 'order 1', count: 1 },
      ]),
    );
    expect(seen).toHaveLength(3);
    expect(stats.subscriptions.billing?.msgBacklog).toBe(0);
  });

  it('keeps an idle consumer alive with background heartbeats: after 15 s silent (lease 10 s) it still owns its Failover subscription, while a raw consumer silent as long was replaced', async () => {
    const sdk = client();
    const raw = ConsumerApi.shared();
    const topic = TopicRef.unique('lease');
    const body = {
      subscriptionType: 'Failover',
      subscriptionInitialPosition: 'Earliest',
      leaseMs: 10_000,
    } as const;
    const consumer = await sdk
      .newConsumer()
      .topic(topic.name)
      .subscriptionName('sdk')
      .subscriptionType('Failover')
      .subscriptionInitialPosition('Earliest')
      .leaseMs(10_000)
      .subscribe();
    const silent = await raw.subscribe(topic, 'raw', body);

    // Neither application makes a call; only the SDK's heartbeats (every 3.3 s) reach the server.
    await sleep(15_000);
    await sdk
      .newProducer()
      .topic(topic.name)
      .create()
      .then((producer) => producer.send('m0'));
    // Failover takes over from an owner whose lease lapsed at the next consumer's receive; no
    // maintenance run is needed for that (the shared stack runs it once a minute).
    const rawStandby = await raw.subscribe(topic, 'raw', body);
    const takenOver = await rawStandby.receiveN(1, 5_000);
    const silentReceive = await silent.sendReceive({ maxMessages: 1, waitMs: 0 });
    const sdkStandby = await raw.subscribe(topic, 'sdk', body);
    const toStandby = await sdkStandby.receive(10, 0);
    const message = await consumer.receive(5_000);
    if (message) await consumer.acknowledgeCumulative(message);
    const stats = (await sdk.admin().topics().getStats(topic.name)) as {
      subscriptions: Record<string, { msgBacklog: number }>;
    };
    await Promise.all([rawStandby.close(), sdkStandby.close()]);
    await sdk.close();

    expect(payloads(takenOver)).toEqual(['m0']);
    expectReplacedOwnerRefused(silentReceive);
    expect(toStandby).toEqual([]);
    expect(message?.getValue()).toBe('m0');
    expect(stats.subscriptions.sdk?.msgBacklog).toBe(0);
  }, 30_000);

  it('cancels a scheduled message with admin().topics().acknowledgeMessage (PIP-423)', async () => {
    const sdk = client();
    const topic = `persistent://ackline-it/sdk/reminders-${randomUUID().slice(0, 8)}`;
    const consumer = await sdk
      .newConsumer()
      .topic(topic)
      .subscriptionName('mailer')
      .subscriptionType('Shared')
      .subscribe();
    const producer = await sdk.newProducer().topic(topic).create();
    const scheduled = await producer.newMessage().value('reminder').deliverAfter(2_000).send();
    await producer.send('now');

    await sdk
      .admin()
      .topics()
      .acknowledgeMessage(topic, scheduled.ledgerId.toString(), scheduled.entryId.toString(), ['mailer']);
    const first = await consumer.receive(3_000);
    if (first) await consumer.acknowledge(first);
    const after = await consumer.receive(3_500);
    await consumer.close();
    await sdk.close();

    expect(first?.getValue()).toBe('now');
    expect(after).toBeUndefined();
  });
});
