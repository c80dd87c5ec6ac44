// Issue 22, criterion 1: a receive claims only what its answer can carry within Lambda's 6 MB.
// The receive use case over in-memory ports with the data API's own answer budget; payloads of
// control characters, which JSON escapes to 6 bytes and the proxy result's body string to 7.
import { describe, expect, it } from 'vitest';
import { acknowledgeMessages } from '../../../../shared/application/consumers/consumer-acks.ts';
import {
  type DeliveredMessage,
  receiveMessages,
} from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { getTopicStats } from '../../../../shared/application/topics/topic-stats.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { proxyResultOf } from '../../../../shared/http/http-api.ts';
import { ok } from '../../../../shared/http/http-types.ts';
import {
  LAMBDA_PAYLOAD_LIMIT_BYTES,
  listAnswerBudget,
  proxyResultBytes,
} from '../../../../shared/http/lambda-payload.ts';
import { MAX_PAYLOAD_BYTES } from '../../../../shared/http/produce-request.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';

const admin: Principal = { role: 'admin', superuser: true };
const COUNT = 20;

describe('a receive within the answer’s byte budget', () => {
  it.each([
    ['a topic', 0],
    ['a topic of 3 partitions (one budget across them)', 3],
  ])('%s: 20 messages of 256 KiB of control characters arrive over answers under 6 MB, none held unseen', async (_, partitions) => {
    const { ports } = inMemoryPorts({
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
    });
    const topic = TopicName.parse(`persistent://public/default/budget-${partitions}`);
    await createTopic(ports, admin, topic, partitions);
    const { consumerId } = await subscribeConsumer(ports, admin, {
      topic,
      subscription: 'sub',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    const payloads = Array.from({ length: COUNT }, (_, i) => `${i}:`.padEnd(MAX_PAYLOAD_BYTES, '\u0001'));
    await publishMessages(ports, admin, topic, {
      messages: payloads.map((payload) => ({ payload, properties: {} })),
      router: new RoundRobinRouter(0),
    });
    const answer = listAnswerBudget<DeliveredMessage>('messages');
    const unackedOf = async () =>
      (await getTopicStats(ports, admin, topic)).subscriptions.sub?.unackedMessages;

    const received: DeliveredMessage[] = [];
    const answers: { count: number; bytes: number; unackedAfter: number | undefined }[] = [];
    for (let call = 0; call < COUNT && received.length < COUNT; call++) {
      const messages = await receiveMessages(ports, admin, consumerId, { maxMessages: 100, answer });
      received.push(...messages);
      const bytes = proxyResultBytes(proxyResultOf(ok({ messages })));
      answers.push({ count: messages.length, bytes, unackedAfter: await unackedOf() });
    }
    await acknowledgeMessages(ports, admin, consumerId, {
      messageIds: [],
      deliveryHandles: received.map((message) => message.deliveryHandle),
    });
    const stats = (await getTopicStats(ports, admin, topic)).subscriptions.sub;

    // 7 bytes a character in the answer: 1.8 MB a message, so three an answer.
    expect(answers.map((a) => a.count)).toEqual([3, 3, 3, 3, 3, 3, 2]);
    for (const { bytes } of answers) expect(bytes).toBeLessThanOrEqual(LAMBDA_PAYLOAD_LIMIT_BYTES);
    expect(Math.max(...answers.map((a) => a.bytes))).toBeGreaterThan(5_400_000);
    // After each answer, what the subscription holds unacknowledged is exactly what was answered.
    const answeredSoFar = answers.map((_, i) => countUpTo(answers, i));
    expect(answers.map((a) => a.unackedAfter)).toEqual(answeredSoFar);
    expect(new Set(received.map((message) => message.payload))).toEqual(new Set(payloads));
    expect(stats).toMatchObject({ msgBacklog: 0, unackedMessages: 0 });
  });

  it('without a budget (the Lambda consumer, the SDK in process), maxMessages alone bounds a receive', async () => {
    const { ports } = inMemoryPorts({
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
    });
    const topic = TopicName.parse('persistent://public/default/unbudgeted');
    const { consumerId } = await subscribeConsumer(ports, admin, {
      topic,
      subscription: 'sub',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    await publishMessages(ports, admin, topic, {
      messages: Array.from({ length: 5 }, () => ({
        payload: '\u0001'.repeat(MAX_PAYLOAD_BYTES),
        properties: {},
      })),
      router: new RoundRobinRouter(0),
    });

    const messages = await receiveMessages(ports, admin, consumerId, { maxMessages: 100 });

    expect(messages).toHaveLength(5);
  });
});

/** The messages answered by answers 0..i. */
function countUpTo(answers: readonly { count: number }[], i: number): number {
  return answers.slice(0, i + 1).reduce((sum, a) => sum + a.count, 0);
}
