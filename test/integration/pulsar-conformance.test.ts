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
