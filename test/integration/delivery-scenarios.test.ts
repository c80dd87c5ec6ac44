import { describe, expect, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import {
  ConsumerApi,
  expectReplacedOwnerRefused,
  payloads,
  sleep,
  type TimedMessage,
} from '../support/consumer-fixtures.ts';

// Issue 11, criterion 7: the delivery failures found by trying ackline as a user would, over HTTP
// on the embedded stack, and variations of them. Scenario 5 (large messages) is in
// message-sizes.test.ts.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

function entryOf(messageId: string): [bigint, bigint] {
  const [ledgerId, entryId] = messageId.split(':').map(BigInt) as [bigint, bigint];
  return [ledgerId, entryId];
}

function isAfter(a: string, b: string): boolean {
  const [la, ea] = entryOf(a);
  const [lb, eb] = entryOf(b);
  return la !== lb ? la > lb : ea > eb;
}

describe.concurrent('delivery scenarios (issue 11)', () => {
  it.each([
    ['Exclusive', 2_500, 5],
    ['Failover', 700, 40],
  ] as const)(
    '1. %s at Earliest over a %i-message backlog, %i published right after: every message once, in publish order',
    async (subscriptionType, backlog, after) => {
      const topic = TopicRef.unique('order');
      for (let from = 0; from < backlog; from += 500) {
        await admin.produce(
          topic,
          Array.from({ length: Math.min(500, backlog - from) }, (_, i) => ({ payload: `b${from + i}` })),
        );
      }
      const consumer = await consumers.subscribe(topic, 'sub', {
        subscriptionType,
        subscriptionInitialPosition: 'Earliest',
      });
      const live = admin.produce(
        topic,
        Array.from({ length: after }, (_, i) => ({ payload: `l${i}` })),
      );
      const received: TimedMessage[] = [];
      const total = backlog + after;
      const deadline = Date.now() + 60_000;
      while (received.length < total && Date.now() < deadline) {
        const batch = await consumer.receive(100, 1000);
        received.push(...batch);
        // A cumulative ack of what arrived: it may never cover what did not.
        const last = batch[batch.length - 1];
        if (last) await consumer.ackCumulative(last.messageId);
      }
      await live;
      const backwards = received.filter(
        (m, i) => i > 0 && !isAfter(m.messageId, (received[i - 1] as TimedMessage).messageId),
      );
      expect(backwards.map((m) => m.messageId)).toEqual([]);
      expect(received).toHaveLength(total);
      expect(payloads(received)).toEqual([
        ...Array.from({ length: backlog }, (_, i) => `b${i}`),
        ...Array.from({ length: after }, (_, i) => `l${i}`),
      ]);
      expect(received.every((m) => m.redeliveryCount === 0)).toBe(true);
      expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
    },
    90_000,
  );

  it.each([
    'Shared',
    'Key_Shared',
  ] as const)('2. %s: consumers that join and close without receiving leave counts at 0, and the first nack redelivers', async (subscriptionType) => {
    const topic = TopicRef.unique('closecount');
    const policy = {
      subscriptionType,
      subscriptionInitialPosition: 'Earliest' as const,
      negativeAckRedeliveryDelayMs: 0,
      deadLetterPolicy: { maxRedeliverCount: 1 },
    };
    const idle = [
      await consumers.subscribe(topic, 'sub', policy),
      await consumers.subscribe(topic, 'sub', policy),
    ];
    await admin.produce(
      topic,
      ['a', 'b', 'c'].map((payload) => ({ payload, key: payload })),
    );
    for (const consumer of idle) await consumer.close();
    const worker = await consumers.subscribe(topic, 'sub', policy);

    const first = await worker.receiveN(3, 10_000);
    expect(first.map((m) => [m.payload, m.redeliveryCount]).sort()).toEqual([
      ['a', 0],
      ['b', 0],
      ['c', 0],
    ]);
    await worker.nack(first);
    const again = await worker.receiveN(3, 10_000);
    expect(again.map((m) => [m.payload, m.redeliveryCount]).sort()).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
    await worker.ack(again);
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  }, 60_000);

  it.each([
    ['Failover', 5, 10],
    ['Exclusive', 3, 6],
  ] as const)(
    '3. %s: the owner receives %i of %i and goes silent; the next consumer gets them, in order, within the lease plus 30 s',
    async (subscriptionType, taken, published) => {
      const topic = TopicRef.unique('silent');
      const leaseMs = 10_000;
      const owner = await consumers.subscribe(topic, 'sub', {
        subscriptionType,
        subscriptionInitialPosition: 'Earliest',
        leaseMs,
      });
      await admin.produceMany(topic, published);
      const held = await owner.receiveN(taken, 10_000);
      expect(payloads(held)).toEqual(Array.from({ length: taken }, (_, i) => `m${i}`));

      const startedAt = Date.now();
      let standby: Awaited<ReturnType<ConsumerApi['subscribe']>> | undefined;
      // Exclusive takes no second consumer while the owner is alive: retry until its lease lapsed.
      while (!standby && Date.now() - startedAt < leaseMs + 30_000) {
        const attempt = await consumers.sendSubscribe(topic, 'sub', {
          subscriptionType,
          subscriptionInitialPosition: 'Earliest',
          leaseMs,
        });
        if (attempt.status === 200)
          standby = consumers.consumer((attempt.body as { consumerId: string }).consumerId);
        else await sleep(500);
      }
      if (!standby) throw new Error('the next consumer could not subscribe');
      const got = await standby.receiveN(published, leaseMs + 30_000);
      expect(Date.now() - startedAt).toBeLessThan(leaseMs + 30_000);
      expect(payloads(got)).toEqual(Array.from({ length: published }, (_, i) => `m${i}`));
      expect(got.map((m) => m.redeliveryCount)).toEqual(
        Array.from({ length: published }, (_, i) => (i < taken ? 1 : 0)),
      );
      // The silent owner is fenced: its receive and cumulative ack are refused.
      expectReplacedOwnerRefused(await owner.sendReceive({ maxMessages: 1, waitMs: 0 }));
      expectReplacedOwnerRefused(await owner.sendAckCumulative((held[0] as TimedMessage).messageId));
    },
    60_000,
  );

  it('4. an abandoned long poll takes nothing after its consumer closed: the next consumer gets the messages', async () => {
    const topic = TopicRef.unique('abandoned');
    const first = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    // The client gives up after 0.5 s; the server-side poll goes on.
    const giveUp = new AbortController();
    const abandoned = fetch(`${consumers.url}/consumers/${first.id}/receive?maxMessages=10&waitMs=20000`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${consumers.token}` },
      signal: giveUp.signal,
    }).catch(() => undefined);
    await sleep(500);
    giveUp.abort();
    await first.close();
    const next = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.produceMany(topic, 3);
    const got = await next.receiveN(3, 40_000);
    expect(payloads(got).sort()).toEqual(['m0', 'm1', 'm2']);
    expect(got.every((m) => m.redeliveryCount === 0)).toBe(true);
    await abandoned;
  }, 60_000);
});
