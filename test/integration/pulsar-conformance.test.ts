import { randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi, sleep, type TestConsumer, type TimedMessage } from '../support/consumer-fixtures.ts';

// Issue 21, criterion 6: the semantic assertions of Apache Pulsar's own tests
// (DeadLetterTopicTest, KeySharedSubscriptionTest), run over ackline's HTTP API on the shared
// embedded stack, with short timeouts. Each found a defect; these keep them fixed.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

/** The default dead-letter topic of Pulsar: `{topic}-{subscription}-DLQ`. */
function deadLetterTopicOf(topic: TopicRef, subscription: string): TopicRef {
  return topic.namespace.topic(`${topic.localName}-${subscription}-DLQ`);
}

/** Receives (never acknowledging) until `untilMs`, long-polling at most 1 s a call. */
async function receiveWithoutAcking(consumer: TestConsumer, untilMs: number): Promise<TimedMessage[]> {
  const received: TimedMessage[] = [];
  while (Date.now() < untilMs) {
    received.push(...(await consumer.receive(10, Math.max(0, Math.min(1000, untilMs - Date.now())))));
  }
  return received;
}

describe.concurrent('DeadLetterTopicTest', () => {
  it('testDuplicatedMessageSendToDeadLetterTopic: 3 Shared consumers, nobody acks: one dead letter per message', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqdup');
    const policy = {
      subscriptionType: 'Shared' as const,
      ackTimeoutMs: 1000,
      deadLetterPolicy: { maxRedeliverCount: 1, initialSubscriptionName: 'dlq-reader' },
    };
    const members = [
      await consumers.subscribe(topic, 'sub', policy),
      await consumers.subscribe(topic, 'sub', policy),
      await consumers.subscribe(topic, 'sub', policy),
    ];
    const ids = await admin.produce(topic, [
      { payload: 'a', key: 'k1' },
      { payload: 'b', key: 'k2' },
    ]);

    const until = Date.now() + 8000;
    const deliveries = (
      await Promise.all(members.map((member) => receiveWithoutAcking(member, until)))
    ).flat();
    const reader = await consumers.subscribe(deadLetterTopicOf(topic, 'sub'), 'dlq-reader', {
      subscriptionType: 'Shared',
    });
    const letters = [...(await reader.receiveN(2, 3000)), ...(await reader.receiveFor(1000))];

    expect(letters.map((m) => m.properties.ORIGIN_MESSAGE_ID).sort()).toEqual([...ids].sort());
    expect((await admin.stats(deadLetterTopicOf(topic, 'sub'))).msgInCounter).toBe(2);
    expect(Math.max(...deliveries.map((m) => m.redeliveryCount))).toBeLessThanOrEqual(1);
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  }, 30_000);

  it('testDeadLetterTopic: a consumer that stops polling: dead-lettered on the timer, never redelivered with count 3', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('dlqtimer');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      ackTimeoutMs: 1000,
      deadLetterPolicy: { maxRedeliverCount: 2, initialSubscriptionName: 'dlq-reader' },
    });
    const deadLetterTopic = deadLetterTopicOf(topic, 'sub');
    const [messageId] = await admin.produce(topic, [{ payload: 'poison', key: 'k' }]);

    const deliveries = await consumer.receiveN(3, 8000);
    // The consumer stops polling: its last delivery's ack timeout is due 1 s later.
    const dueAtMs = (deliveries[2] as TimedMessage).receivedAtMs + 1000;
    let letters = 0;
    while (Date.now() < dueAtMs + 2000 && letters === 0) {
      letters = (await admin.stats(deadLetterTopic)).msgInCounter;
      if (letters === 0) await sleep(100);
    }
    const backlogAfter = await admin.backlogs(topic);
    const late = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const again = await late.receiveFor(1500);

    expect(deliveries.map((m) => [m.messageId, m.redeliveryCount])).toEqual([
      [messageId, 0],
      [messageId, 1],
      [messageId, 2],
    ]);
    expect(letters).toBe(1);
    expect(backlogAfter).toEqual({ sub: 0 });
    expect(again.map((m) => m.redeliveryCount)).toEqual([]);
  }, 30_000);
});

describe.concurrent('KeySharedSubscriptionTest', () => {
  /**
   * 3 Key_Shared consumers subscribed before `total` messages over `keys` random keys are
   * published (50 per call); each receives 20 at a time and acknowledges, until all arrived.
   */
  async function keySharedRun(label: string, keys: number, total: number) {
    const topic = TopicRef.unique(label);
    const members = [
      await consumers.subscribe(topic, 'sub', { subscriptionType: 'Key_Shared' }),
      await consumers.subscribe(topic, 'sub', { subscriptionType: 'Key_Shared' }),
      await consumers.subscribe(topic, 'sub', { subscriptionType: 'Key_Shared' }),
    ];
    const keyNames = Array.from({ length: keys }, () => `key-${randomBytes(6).toString('hex')}`);
    const messages = Array.from({ length: total }, (_, i) => ({
      payload: `m${i}`,
      key: keyNames[i % keys] as string,
    }));
    const order = new Map<string, number>();
    for (let from = 0; from < total; from += 50) {
      const ids = await admin.produce(topic, messages.slice(from, from + 50));
      for (const [i, id] of ids.entries()) order.set(id, from + i);
    }
    const received: TimedMessage[][] = members.map(() => []);
    const count = () => received.reduce((sum, list) => sum + list.length, 0);
    const deadline = Date.now() + 30_000;
    await Promise.all(
      members.map(async (member, index) => {
        while (count() < total && Date.now() < deadline) {
          const batch = await member.receive(20, 500);
          if (batch.length > 0) await member.ack(batch);
          received[index]?.push(...batch);
        }
      }),
    );
    return { received, order };
  }

  /** First deliveries of a key that reached a consumer after a later message of that key. */
  function outOfOrder(received: readonly TimedMessage[][], order: ReadonlyMap<string, number>): string[] {
    const found: string[] = [];
    for (const list of received) {
      const last = new Map<string, number>();
      for (const message of list) {
        const at = order.get(message.messageId) as number;
        const key = message.key as string;
        if ((last.get(key) ?? -1) > at) found.push(`${key}: ${message.payload}`);
        last.set(key, Math.max(last.get(key) ?? -1, at));
      }
    }
    return found;
  }

  /** Keys that reached more than one consumer. */
  function sharedKeys(received: readonly TimedMessage[][]): string[] {
    const owners = new Map<string, Set<number>>();
    received.forEach((list, index) => {
      for (const message of list) {
        const key = message.key as string;
        owners.set(key, (owners.get(key) ?? new Set()).add(index));
      }
    });
    return [...owners].filter(([, set]) => set.size > 1).map(([key]) => key);
  }

  it('600 messages over 300 keys: per-key order per consumer, each key one consumer, 20% to 47% each', async ({
    expect,
  }) => {
    const { received, order } = await keySharedRun('kssorder', 300, 600);

    const counts = received.map((list) => list.length);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(600);
    expect(outOfOrder(received, order)).toEqual([]);
    expect(sharedKeys(received)).toEqual([]);
    for (const n of counts) {
      expect(n).toBeGreaterThanOrEqual(120);
      expect(n).toBeLessThanOrEqual(282);
    }
  }, 60_000);

  it('300 messages over 10 keys: in order, and not all to one consumer', async ({ expect }) => {
    const { received, order } = await keySharedRun('kss10', 10, 300);

    const counts = received.map((list) => list.length);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(300);
    expect(outOfOrder(received, order)).toEqual([]);
    expect(sharedKeys(received)).toEqual([]);
    expect(counts.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
