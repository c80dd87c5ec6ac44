import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { AcklineClient, MultiplierRedeliveryBackoff } from '../../shared/index.ts';
import { tokenFor } from '../support/admin-fixtures.ts';

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
