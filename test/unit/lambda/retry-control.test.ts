// Issue 24, criterion 6: retry control beyond Pulsar. A Lambda consumer's nonRetryableErrors go
// straight to the dead-letter topic; a RetryAfterError sets that nack's delay; the HTTP nack takes
// a delayMs; the multiplier backoff's jitter only ever adds delay.
import { describe, expect, it } from 'vitest';
import { InProcessFunctionInvoker } from '../../../shared/adapters/lambda/in-process-function-invoker.ts';
import { negativeAcknowledge } from '../../../shared/application/consumers/consumer-acks.ts';
import { processQueueRecords } from '../../../shared/application/consumers/process-queue-records.ts';
import { receiveMessages } from '../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../shared/application/producers/publish-messages.ts';
import { listScheduled } from '../../../shared/application/subscriptions/scheduled-messages.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import { MultiplierRedeliveryBackoff } from '../../../shared/domain/redelivery-backoff.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import { acklineConsumer } from '../../../shared/lambda/ackline-consumer.ts';
import { batchHandlerOf } from '../../../shared/lambda/consumer-runner.ts';
import { RetryAfterError } from '../../../shared/lambda/retry-after-error.ts';
import { twoProcesses } from '../../support/in-memory-processes.ts';
import type { ManualClock } from '../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };

class PoisonError extends Error {}

async function lambdaConsumer(topic: TopicName, process: (payload: string) => void) {
  const [ports] = twoProcesses();
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'fn',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {
      negativeAckRedeliveryDelayMs: 60_000,
      deadLetterPolicy: { maxRedeliverCount: 5, initialSubscriptionName: 'dead' },
    },
    lambda: { functionTimeoutMs: 2_000 },
  });
  const cursorId = (await ports.consumers.get(consumerId))?.partitions[0]?.cursorId as string;
  const handler = acklineConsumer({
    process: (message) => process(message.payload),
    nonRetryableErrors: [PoisonError],
  });
  const step = () =>
    processQueueRecords(ports, {
      consumerId,
      records: [{ recordId: 'r1', cursorId, body: '' }],
      handleBatch: batchHandlerOf(new InProcessFunctionInvoker(handler)),
    });
  return { ports, step, clock: ports.clock as ManualClock };
}

const publish = (ports: UseCasePorts, topic: TopicName, payloads: readonly string[]) =>
  publishMessages(ports, admin, topic, {
    messages: payloads.map((payload) => ({ payload, properties: {} })),
    router: new RoundRobinRouter(0),
  });

async function deadLettered(ports: UseCasePorts, topic: TopicName): Promise<string[]> {
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic: TopicName.parse(`${topic.toString()}-fn-DLQ`),
    subscription: 'dead',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {},
  });
  return (await receiveMessages(ports, admin, consumerId, { maxMessages: 10 })).map((m) => m.payload);
}

describe('retry control beyond Pulsar', () => {
  it('a nonRetryableErrors error goes to the dead-letter topic at its first delivery; others retry', async () => {
    const topic = TopicName.parse('persistent://public/default/nonretry');
    const { ports, step } = await lambdaConsumer(topic, (payload) => {
      if (payload === 'poison') throw new PoisonError('does not parse');
      if (payload === 'flaky') throw new Error('try again');
    });
    await publish(ports, topic, ['poison', 'flaky', 'fine']);

    const result = await step();

    expect(result.outcomes.map((o) => [o.message.payload, o.kind])).toEqual([
      ['poison', 'negativelyAcknowledged'],
      ['flaky', 'negativelyAcknowledged'],
      ['fine', 'acknowledged'],
    ]);
    expect(await deadLettered(ports, topic)).toEqual(['poison']);
    const waiting = await listScheduled(ports, { principal: admin, topic, subscription: 'fn', limit: 10 });
    expect(waiting.messages.map((m) => [m.reason, m.redeliveryCount])).toEqual([['nack', 1]]);
  });

  it('a RetryAfterError sets that nack delay instead of the backoff', async () => {
    const topic = TopicName.parse('persistent://public/default/retryafter');
    const { ports, step, clock } = await lambdaConsumer(topic, (payload) => {
      throw new RetryAfterError(payload === 'soon' ? 5_000 : 3_600_000);
    });
    await publish(ports, topic, ['soon', 'late']);
    const now = clock.nowMs();
    await step();
    const waiting = await listScheduled(ports, { principal: admin, topic, subscription: 'fn', limit: 10 });
    expect(waiting.messages.map((m) => m.dueAt)).toEqual([now + 5_000, now + 3_600_000]);
    expect(() => new RetryAfterError(-1)).toThrow(RangeError);
    expect(() => new RetryAfterError(86_400_001)).toThrow(RangeError);
  });

  it('an HTTP nack with delayMs comes back after it, whatever the consumer backoff', async () => {
    const topic = TopicName.parse('persistent://public/default/nackdelay');
    const [ports] = twoProcesses();
    const { consumerId } = await subscribeConsumer(ports, admin, {
      topic,
      subscription: 'fn',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: { negativeAckRedeliveryDelayMs: 60_000 },
    });
    await publish(ports, topic, ['a', 'b']);
    const [a, b] = await receiveMessages(ports, admin, consumerId, { maxMessages: 2 });
    const now = ports.clock.nowMs();
    await negativeAcknowledge(ports, admin, consumerId, {
      messageIds: [],
      deliveryHandles: [a?.deliveryHandle as string],
      delayMs: 2_000,
    });
    await negativeAcknowledge(ports, admin, consumerId, {
      messageIds: [],
      deliveryHandles: [b?.deliveryHandle as string],
    });
    const waiting = await listScheduled(ports, { principal: admin, topic, subscription: 'fn', limit: 10 });
    expect(waiting.messages.map((m) => m.dueAt)).toEqual([now + 2_000, now + 60_000]);
  });

  it.each([
    [0, 1_000, 1_000],
    [0.999_999, 1_000, 1_499],
    [0.5, 8_000, 10_000],
  ])('jitter 0.5 with random %d: count %d ms gives %d ms (never below next(count))', (random, base, expected) => {
    const backoff = MultiplierRedeliveryBackoff.builder()
      .minDelayMs(1_000)
      .maxDelayMs(60_000)
      .jitter(0.5)
      .build();
    const count = Math.log2(base / 1_000);
    expect(backoff.next(count)).toBe(base);
    expect(backoff.nextWithJitter(count, random)).toBe(expected);
    expect(backoff.latest(count)).toBe(base * 1.5);
  });

  it('jitter is kept in the stored form, only when set, and refused outside 0..1', () => {
    const plain = MultiplierRedeliveryBackoff.builder().build();
    expect(plain.toJSON().params).not.toHaveProperty('jitter');
    expect(MultiplierRedeliveryBackoff.builder().jitter(0.25).build().toJSON().params).toMatchObject({
      jitter: 0.25,
    });
    expect(() => MultiplierRedeliveryBackoff.builder().jitter(1.5).build()).toThrow(
      /jitter "1.5" must be a number from 0 to 1/,
    );
    expect(() => MultiplierRedeliveryBackoff.builder().jitter(-0.1).build()).toThrow(/jitter/);
  });
});
