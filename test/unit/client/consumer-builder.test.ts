import { describe, expect, it } from 'vitest';
import type { ConsumerBuilder } from '../../../shared/client/consumer-builder.ts';
import { AcklineClientArgumentError } from '../../../shared/client/errors.ts';
import {
  FixedRedeliveryBackoff,
  MultiplierRedeliveryBackoff,
  type RedeliveryBackoff,
} from '../../../shared/domain/redelivery-backoff.ts';
import { CONSUMER_ID, FakeDataApi } from './fake-data-api.ts';
import { jsonResponse, reasonResponse } from './fake-fetch.ts';
import { BASE, clientOf, failure, SUBSCRIBE_PATH, subscribed, TOPIC } from './sdk-fixtures.ts';

const PIP_106_BACKOFF = MultiplierRedeliveryBackoff.builder()
  .minDelayMs(1000)
  .maxDelayMs(60000)
  .multiplier(2);

describe('ConsumerBuilder.subscribe(): the request', () => {
  it('POSTs every setting to the subscription path and keeps the consumer id', async () => {
    const { consumer, api } = await subscribed((builder) =>
      builder
        .subscriptionType('Key_Shared')
        .subscriptionInitialPosition('Earliest')
        .consumerName('billing-1')
        .ackTimeout(30_000)
        .ackTimeoutRedeliveryBackoff(FixedRedeliveryBackoff.of(5000))
        .negativeAckRedeliveryBackoff(PIP_106_BACKOFF.build())
        .deadLetterPolicy({
          maxRedeliverCount: 5,
          deadLetterTopic: 'my-tenant/my-ns/orders-DLQ',
          initialSubscriptionName: 'dlq-audit',
        }),
    );

    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]).toMatchObject({ method: 'POST', url: `${BASE}${SUBSCRIBE_PATH}` });
    expect(api.requests[0]!.headers).toMatchObject({
      authorization: 'Bearer tok',
      'content-type': 'application/json',
    });
    expect(api.bodiesTo(SUBSCRIBE_PATH)[0]).toEqual({
      consumerName: 'billing-1',
      subscriptionType: 'Key_Shared',
      subscriptionInitialPosition: 'Earliest',
      ackTimeoutMs: 30000,
      ackTimeoutRedeliveryBackoff: { className: 'FixedRedeliveryBackoff', params: { delayMs: 5000 } },
      negativeAckRedeliveryBackoff: {
        className: 'MultiplierRedeliveryBackoff',
        params: { minDelayMs: 1000, maxDelayMs: 60000, multiplier: 2 },
      },
      deadLetterPolicy: {
        maxRedeliverCount: 5,
        deadLetterTopic: 'my-tenant/my-ns/orders-DLQ',
        initialSubscriptionName: 'dlq-audit',
      },
    });
    expect(consumer.getConsumerId()).toBe(CONSUMER_ID);
    expect(consumer.getTopic()).toBe(TOPIC);
    expect(consumer.getSubscription()).toBe('billing');
  });

  it("sends only the subscription type, Pulsar's default Exclusive, when nothing else is set", async () => {
    const { api } = await subscribed();

    expect(api.requests[0]!.body).toBe('{"subscriptionType":"Exclusive"}');
  });

  it('sends a fixed negativeAckRedeliveryDelay as negativeAckRedeliveryDelayMs', async () => {
    const { api } = await subscribed((builder) => builder.negativeAckRedeliveryDelay(5000));

    expect(api.bodiesTo(SUBSCRIBE_PATH)[0]).toEqual({
      subscriptionType: 'Exclusive',
      negativeAckRedeliveryDelayMs: 5000,
    });
  });

  it('sends leaseMs as set, at both ends of its range', async () => {
    const bodies = [];
    for (const leaseMs of [10_000, 3_600_000]) {
      const { api } = await subscribed((builder) => builder.leaseMs(leaseMs));
      bodies.push(api.bodiesTo(SUBSCRIBE_PATH)[0]);
    }

    expect(bodies).toEqual([
      { subscriptionType: 'Exclusive', leaseMs: 10_000 },
      { subscriptionType: 'Exclusive', leaseMs: 3_600_000 },
    ]);
  });

  const custom: RedeliveryBackoff = {
    next: () => 7,
    toJSON: () => ({ className: 'com.example.Jittered', params: { baseMs: 7 } }),
  };
  it.each<[string, (builder: ConsumerBuilder) => ConsumerBuilder, unknown]>([
    [
      'a MultiplierRedeliveryBackoff, by its toJSON()',
      (builder) => builder.negativeAckRedeliveryBackoff(PIP_106_BACKOFF.build()),
      {
        className: 'MultiplierRedeliveryBackoff',
        params: { minDelayMs: 1000, maxDelayMs: 60000, multiplier: 2 },
      },
    ],
    [
      'a FixedRedeliveryBackoff',
      (builder) => builder.negativeAckRedeliveryBackoff(FixedRedeliveryBackoff.of(250)),
      { className: 'FixedRedeliveryBackoff', params: { delayMs: 250 } },
    ],
    [
      'a class name and params',
      (builder) =>
        builder.negativeAckRedeliveryBackoff('org.apache.pulsar.client.impl.MultiplierRedeliveryBackoff', {
          minDelayMs: 500,
        }),
      { className: 'org.apache.pulsar.client.impl.MultiplierRedeliveryBackoff', params: { minDelayMs: 500 } },
    ],
    [
      'a class name alone, with empty params',
      (builder) => builder.negativeAckRedeliveryBackoff('MultiplierRedeliveryBackoff'),
      { className: 'MultiplierRedeliveryBackoff', params: {} },
    ],
    [
      'any RedeliveryBackoff implementation',
      (builder) => builder.negativeAckRedeliveryBackoff(custom),
      { className: 'com.example.Jittered', params: { baseMs: 7 } },
    ],
  ])('negativeAckRedeliveryBackoff: %s', async (_name, configure, expected) => {
    const { api } = await subscribed(configure);

    expect(api.bodiesTo(SUBSCRIBE_PATH)[0]).toHaveProperty('negativeAckRedeliveryBackoff', expected);
  });

  it.each<[string, (builder: ConsumerBuilder) => ConsumerBuilder, unknown]>([
    [
      'a backoff object',
      (builder) => builder.ackTimeout(10_000).ackTimeoutRedeliveryBackoff(PIP_106_BACKOFF.build()),
      {
        className: 'MultiplierRedeliveryBackoff',
        params: { minDelayMs: 1000, maxDelayMs: 60000, multiplier: 2 },
      },
    ],
    [
      'a class name and params',
      (builder) =>
        builder.ackTimeout(10_000).ackTimeoutRedeliveryBackoff('FixedRedeliveryBackoff', { delayMs: 1 }),
      { className: 'FixedRedeliveryBackoff', params: { delayMs: 1 } },
    ],
  ])('ackTimeoutRedeliveryBackoff: %s', async (_name, configure, expected) => {
    const { api } = await subscribed(configure);

    expect(api.bodiesTo(SUBSCRIBE_PATH)[0]).toMatchObject({
      ackTimeoutMs: 10_000,
      ackTimeoutRedeliveryBackoff: expected,
    });
  });

  it('percent-encodes the topic and subscription in the path', async () => {
    const api = new FakeDataApi();

    await clientOf(api).newConsumer().topic('t/ns/a b').subscriptionName('sub/1 x').subscribe();

    expect(api.calls()).toEqual(['POST /consumers/persistent/t/ns/a%20b/subscription/sub%2F1%20x']);
  });

  it('resolves a bare topic name to public/default', async () => {
    const api = new FakeDataApi();

    const consumer = await clientOf(api).newConsumer().topic('orders').subscriptionName('s').subscribe();

    expect(api.calls()).toEqual(['POST /consumers/persistent/public/default/orders/subscription/s']);
    expect(consumer.getTopic()).toBe('persistent://public/default/orders');
  });
});

describe('ConsumerBuilder.subscribe(): refused settings', () => {
  it.each<[string, (builder: ConsumerBuilder) => ConsumerBuilder, string]>([
    [
      'both negativeAckRedeliveryDelay and negativeAckRedeliveryBackoff (PIP-106)',
      (builder) =>
        builder.negativeAckRedeliveryDelay(1000).negativeAckRedeliveryBackoff(PIP_106_BACKOFF.build()),
      'not both',
    ],
    [
      'both, set the other way round',
      (builder) =>
        builder.negativeAckRedeliveryBackoff('MultiplierRedeliveryBackoff').negativeAckRedeliveryDelay(0),
      'not both',
    ],
    ['an ack timeout under 1 s', (builder) => builder.ackTimeout(500), 'ackTimeoutMs'],
    [
      'a negative nack delay',
      (builder) => builder.negativeAckRedeliveryDelay(-1),
      'negativeAckRedeliveryDelay',
    ],
    ['a receiver queue above 100 000', (builder) => builder.receiverQueueSize(100_001), 'receiverQueueSize'],
    [
      'an unknown subscription type',
      (builder) => builder.subscriptionType('shared' as 'Shared'),
      'subscriptionType',
    ],
    [
      'an unknown initial position',
      (builder) => builder.subscriptionInitialPosition('Oldest' as 'Earliest'),
      'subscriptionInitialPosition',
    ],
    ['an empty consumer name', (builder) => builder.consumerName(''), 'consumerName'],
    ['a lease under 10 s', (builder) => builder.leaseMs(9_999), 'leaseMs'],
    ['a lease over 1 h', (builder) => builder.leaseMs(3_600_001), 'leaseMs'],
    ['a fractional lease', (builder) => builder.leaseMs(10_000.5), 'leaseMs'],
    ['a NaN lease', (builder) => builder.leaseMs(Number.NaN), 'leaseMs'],
    [
      'a dead letter policy with maxRedeliverCount 0',
      (builder) => builder.deadLetterPolicy({ maxRedeliverCount: 0 }),
      'maxRedeliverCount',
    ],
    [
      'a dead letter policy with an empty topic',
      (builder) => builder.deadLetterPolicy({ maxRedeliverCount: 3, deadLetterTopic: '' }),
      'deadLetterTopic',
    ],
    ['an empty backoff class name', (builder) => builder.negativeAckRedeliveryBackoff(''), 'class name'],
    [
      'a backoff whose toJSON() has no params object',
      (builder) =>
        builder.negativeAckRedeliveryBackoff({
          next: () => 0,
          toJSON: () => ({ className: 'X', params: 3 as unknown as Record<string, never> }),
        }),
      'params',
    ],
    [
      'batchReceivePolicy maxNumMessages 0',
      (builder) => builder.batchReceivePolicy({ maxNumMessages: 0 }),
      'maxNumMessages',
    ],
    ['a subscription named ..', (builder) => builder.subscriptionName('..'), 'subscription'],
    ['a topic without a namespace', (builder) => builder.topic('t/orders'), 'topic'],
    ['no topic', (builder) => builder.topic(''), 'topic is required'],
    ['no subscription name', (builder) => builder.subscriptionName(''), 'subscriptionName is required'],
  ])('refuses %s before sending anything', async (_name, configure, reason) => {
    const api = new FakeDataApi();
    const builder = clientOf(api).newConsumer().topic(TOPIC).subscriptionName('billing');

    const error = await failure(configure(builder).subscribe());

    expect(error).toBeInstanceOf(AcklineClientArgumentError);
    expect(error.statusCode).toBe(-1);
    expect(error.reason).toContain(reason);
    expect(api.requests).toHaveLength(0);
  });
});

describe('ConsumerBuilder.subscribe(): server answers', () => {
  it.each([
    [409, 'Conflict', 'Subscription billing is Shared, not Exclusive'],
    [400, 'Bad Request', 'Unknown redelivery backoff class "X"'],
  ])("rejects a %i with the server's reason", async (status, statusText, reason) => {
    const api = new FakeDataApi(() => reasonResponse(status, statusText, reason));

    const error = await failure(subscribed(undefined, api));

    expect(error.statusCode).toBe(status);
    expect(error.reason).toBe(reason);
  });

  it('refuses an answer without a consumer id', async () => {
    const api = new FakeDataApi(() => jsonResponse({ id: 'c-1' }));

    const error = await failure(subscribed(undefined, api));

    expect(error.statusCode).toBe(200);
    expect(error.reason).toContain('consumerId');
  });
});
