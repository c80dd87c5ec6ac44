import { describe, it } from 'vitest';
import { AdminApi, NamespaceRef, TopicRef, uniqueRole } from '../support/admin-fixtures.ts';
import {
  ConsumerApi,
  type ReceivedMessage,
  type SubscribeBody,
  sleep,
  type TestConsumer,
} from '../support/consumer-fixtures.ts';
import type { HttpResult } from '../support/http-client.ts';

// Issue 12, criterion 1: writes made on a consumer's behalf (dead letters, a dead-letter policy's
// initial subscription) are authorised as the consumer's role, at subscribe and again when a
// message is dead-lettered, as Pulsar's client creates its dead-letter producer with its own
// credentials. A refusal is 403 with a reason and writes nothing. Real HTTP against the shared
// embedded stack; every role and namespace is this file's own.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

/** The origin topic in a namespace of its own, a role that may consume it, and a DLQ namespace. */
async function arrange(label: string) {
  const topic = TopicRef.unique(label);
  await admin.createTopic(topic);
  const role = uniqueRole(label);
  await admin.grant(topic, role, ['consume']);
  const victim = NamespaceRef.unique(`${label}-dlq`);
  return { topic, role, victim, deadLetterTopic: victim.topic('inbox'), as: consumers.as(role) };
}

/** The topics of a namespace, as the admin API lists them. */
async function topicsOf(namespace: NamespaceRef): Promise<unknown> {
  return (await admin.expectStatus(200, 'GET', namespace.adminPath())).body;
}

async function subscriptionsOf(topic: TopicRef): Promise<unknown> {
  return (await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscriptions`)).body;
}

function reasonOf(result: HttpResult): string {
  return (result.body as { reason?: string } | undefined)?.reason ?? '';
}

async function revoke(topic: TopicRef, role: string): Promise<void> {
  await admin.expectStatus(204, 'DELETE', `${topic.adminPath}/permissions/${encodeURIComponent(role)}`);
}

/** Receives until one message arrived (nothing else is in flight in these tests). */
async function receiveOne(consumer: TestConsumer, timeoutMs = 5000) {
  const [message] = await consumer.receiveN(1, timeoutMs);
  if (!message) throw new Error(`no message within ${timeoutMs} ms`);
  return message;
}

describe('at subscribe', () => {
  it('a dead-letter topic the role may not produce on: 403 with a reason, nothing created', async ({
    expect,
  }) => {
    const { topic, role, deadLetterTopic, victim, as } = await arrange('nodlqproduce');

    const result = await as.sendSubscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      deadLetterPolicy: {
        maxRedeliverCount: 1,
        deadLetterTopic: deadLetterTopic.name,
        initialSubscriptionName: 'squat',
      },
    });

    expect(result.status).toBe(403);
    expect(reasonOf(result)).toContain(`Role ${role} is not allowed to produce`);
    expect(reasonOf(result)).toContain(deadLetterTopic.name);
    expect(await subscriptionsOf(topic)).toEqual([]);
    expect(await topicsOf(victim)).toEqual([]);
  });

  it('initialSubscriptionName where the role may produce but not consume: 403, nothing created', async ({
    expect,
  }) => {
    const { topic, role, deadLetterTopic, victim, as } = await arrange('nodlqconsume');
    await admin.grantOnNamespace(victim, role, ['produce']);

    const result = await as.sendSubscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      deadLetterPolicy: {
        maxRedeliverCount: 1,
        deadLetterTopic: deadLetterTopic.name,
        initialSubscriptionName: 'squat',
      },
    });

    expect(result.status).toBe(403);
    expect(reasonOf(result)).toContain(`Role ${role} is not allowed to consume`);
    expect(await subscriptionsOf(topic)).toEqual([]);
    expect(await topicsOf(victim)).toEqual([]);
  });

  it('the default dead-letter topic needs produce too: consume on the namespace alone is 403', async ({
    expect,
  }) => {
    // Pulsar's client creates its dead-letter producer with its own credentials, so a role that may
    // only consume cannot dead-letter even to {topic}-{subscription}-DLQ; ackline refuses at
    // subscribe instead of at the first dead letter.
    const namespace = NamespaceRef.unique('defaultdlq');
    const topic = namespace.topic('orders');
    await admin.createTopic(topic);
    const role = uniqueRole('defaultdlq');
    await admin.grantOnNamespace(namespace, role, ['consume']);
    const as = consumers.as(role);

    const refused = await as.sendSubscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      deadLetterPolicy: { maxRedeliverCount: 1 },
    });
    const withoutPolicy = await as.sendSubscribe(topic, 'plain', { subscriptionType: 'Shared' });

    expect(refused.status).toBe(403);
    expect(reasonOf(refused)).toContain(`produce on ${topic.name}-sub-DLQ`);
    expect(withoutPolicy.status).toBe(200);
    expect(await subscriptionsOf(topic)).toEqual(['plain']);
    expect(await topicsOf(namespace)).toEqual([topic.name]);
  });
});

describe('when a message is dead-lettered', () => {
  const policyTo = (deadLetterTopic: TopicRef, extra: Partial<SubscribeBody> = {}): SubscribeBody => ({
    subscriptionType: 'Shared',
    negativeAckRedeliveryDelayMs: 0,
    deadLetterPolicy: { maxRedeliverCount: 1, deadLetterTopic: deadLetterTopic.name },
    ...extra,
  });

  it('granted: the dead letter arrives, as the consumer’s role (only that role may produce there)', async ({
    expect,
  }) => {
    const { topic, role, deadLetterTopic, as } = await arrange('dlqallowed');
    await admin.grant(deadLetterTopic, role, ['produce']);
    await admin.createTopic(deadLetterTopic);
    await admin.createSubscription(deadLetterTopic, 'reader');
    const consumer = await as.subscribe(topic, 'sub', policyTo(deadLetterTopic));
    const [messageId] = await admin.produce(topic, [{ payload: 'poison', properties: { a: '1' } }]);

    await consumer.nack([await receiveOne(consumer)]);
    const nacked = await consumer.sendNack({
      deliveryHandles: [(await receiveOne(consumer)).deliveryHandle],
    });
    const reader = await consumers.subscribe(deadLetterTopic, 'reader', { subscriptionType: 'Shared' });
    const letter = await receiveOne(reader);

    expect(nacked.status).toBe(204);
    expect(letter).toMatchObject({
      payload: 'poison',
      properties: { a: '1', REAL_TOPIC: topic.name, ORIGIN_MESSAGE_ID: messageId, REAL_SUBSCRIPTION: 'sub' },
    });
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it('grant revoked before the nack that would dead-letter: 403, the message stays, nothing written', async ({
    expect,
  }) => {
    const { topic, role, deadLetterTopic, victim, as } = await arrange('dlqrevokednack');
    await admin.grant(deadLetterTopic, role, ['produce']);
    const consumer = await as.subscribe(topic, 'sub', policyTo(deadLetterTopic));
    const [messageId] = await admin.produce(topic, [{ payload: 'poison' }]);
    await consumer.nack([await receiveOne(consumer)]);
    const last = await receiveOne(consumer);

    await revoke(deadLetterTopic, role);
    const nacked = await consumer.sendNack({ deliveryHandles: [last.deliveryHandle] });
    await consumer.close();
    const other = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const again = await receiveOne(other);

    expect(last.redeliveryCount).toBe(1);
    expect(nacked.status).toBe(403);
    expect(reasonOf(nacked)).toContain(`Role ${role} is not allowed to produce on ${deadLetterTopic.name}`);
    expect(again.messageId).toBe(messageId);
    expect(await topicsOf(victim)).toEqual([]);
  });

  interface PastMaxCase {
    readonly label: string;
    readonly extra: Partial<SubscribeBody>;
    /** Lets go of a delivery without acknowledging it, so it comes back with count + 1. */
    readonly letGo: (consumer: TestConsumer, message: ReceivedMessage) => Promise<void>;
    readonly waitMs: number;
  }

  it.for<PastMaxCase>([
    {
      label: 'redelivered at once',
      extra: {},
      letGo: (consumer, message) => consumer.redeliverUnacknowledged([message]),
      waitMs: 0,
    },
    { label: 'ack timeout', extra: { ackTimeoutMs: 1000 }, letGo: async () => {}, waitMs: 1500 },
  ])('grant revoked, $label past maxRedeliverCount: receive is 403 with a reason, the message stays', async ({
    extra,
    letGo,
    waitMs,
  }, { expect }) => {
    const { topic, role, deadLetterTopic, victim, as } = await arrange('dlqrevoked');
    await admin.grant(deadLetterTopic, role, ['produce']);
    const consumer = await as.subscribe(topic, 'sub', policyTo(deadLetterTopic, extra));
    const [messageId] = await admin.produce(topic, [{ payload: 'poison' }]);
    await letGo(consumer, await receiveOne(consumer));
    const last = await receiveOne(consumer);

    await revoke(deadLetterTopic, role);
    await letGo(consumer, last);
    await sleep(waitMs);
    const received = await consumer.sendReceive({ maxMessages: 10, waitMs: 0 });
    await consumer.close();
    const other = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const again = await receiveOne(other);

    expect(last.redeliveryCount).toBe(1);
    expect(received.status).toBe(403);
    expect(reasonOf(received)).toContain(`Role ${role} is not allowed to produce on ${deadLetterTopic.name}`);
    expect(again.messageId).toBe(messageId);
    expect(await admin.backlogs(topic)).toEqual({ sub: 1 });
    expect(await topicsOf(victim)).toEqual([]);
  });
});

describe('a refused dead letter next to other redeliveries', () => {
  it('a redelivery due before the refused one is handed out, not held unseen; the refusal comes next', async ({
    expect,
  }) => {
    const { topic, role, deadLetterTopic, as } = await arrange('dlqmixed');
    await admin.grant(deadLetterTopic, role, ['produce']);
    const consumer = await as.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 0,
      deadLetterPolicy: { maxRedeliverCount: 1, deadLetterTopic: deadLetterTopic.name },
    });
    const [poisonId, fineId] = await admin.produce(topic, [{ payload: 'poison' }, { payload: 'fine' }]);
    const first = await consumer.receiveN(2, 5000);
    const [poison, fine] = [
      first.find((m) => m.messageId === poisonId),
      first.find((m) => m.messageId === fineId),
    ];
    await consumer.nack([poison as ReceivedMessage]);
    const poisonAgain = await receiveOne(consumer);
    await revoke(deadLetterTopic, role);
    // Due first: the fine message (count 1 next); then the poison one, past maxRedeliverCount.
    await consumer.nack([fine as ReceivedMessage]);
    await sleep(5);
    await consumer.redeliverUnacknowledged([poisonAgain]);

    const handedOut = await consumer.sendReceive({ maxMessages: 10, waitMs: 0 });
    const refused = await consumer.sendReceive({ maxMessages: 10, waitMs: 3000 });

    expect(poisonAgain.messageId).toBe(poisonId);
    expect(handedOut.status).toBe(200);
    expect(
      (handedOut.body as { messages: ReceivedMessage[] }).messages.map((m) => [
        m.messageId,
        m.redeliveryCount,
      ]),
    ).toEqual([[fineId, 1]]);
    expect(refused.status).toBe(403);
    expect(reasonOf(refused)).toContain(`not allowed to produce on ${deadLetterTopic.name}`);
  });

  it('one nack of a fresh delivery and a refused dead letter: 403, and neither is released', async ({
    expect,
  }) => {
    const { topic, role, deadLetterTopic, as } = await arrange('dlqmixednack');
    await admin.grant(deadLetterTopic, role, ['produce']);
    const consumer = await as.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 0,
      deadLetterPolicy: { maxRedeliverCount: 1, deadLetterTopic: deadLetterTopic.name },
    });
    const [poisonId, fineId] = await admin.produce(topic, [{ payload: 'poison' }, { payload: 'fine' }]);
    const first = await consumer.receiveN(2, 5000);
    await consumer.nack(first.filter((m) => m.messageId === poisonId));
    const poisonAgain = await receiveOne(consumer);
    await revoke(deadLetterTopic, role);

    const nacked = await consumer.sendNack({
      deliveryHandles: [
        ...first.filter((m) => m.messageId === fineId).map((m) => m.deliveryHandle),
        poisonAgain.deliveryHandle,
      ],
    });
    const after = await consumer.sendReceive({ maxMessages: 10, waitMs: 500 });

    expect(nacked.status).toBe(403);
    expect(reasonOf(nacked)).toContain(`not allowed to produce on ${deadLetterTopic.name}`);
    // Both are still held by the consumer, as before the refused nack: nothing to receive.
    expect((after.body as { messages: ReceivedMessage[] }).messages).toEqual([]);
    expect(await admin.backlogs(topic)).toEqual({ sub: 2 });
  });
});
