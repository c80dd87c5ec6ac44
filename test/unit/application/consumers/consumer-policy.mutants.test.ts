import { describe, expect, it } from 'vitest';
import {
  ackTimeoutDelayMs,
  buildConsumerPolicy,
  type ConsumerPolicyInput,
  DEFAULT_NEGATIVE_ACK_DELAY_MS,
  negativeAckDelayMs,
} from '../../../../shared/application/consumers/consumer-policy.ts';
import { ValidationError } from '../../../../shared/domain/errors.ts';
import { RedeliveryBackoffRegistry } from '../../../../shared/domain/redelivery-backoff-registry.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';

// A consumer's redelivery settings as Pulsar's ConsumerBuilder takes them (ack timeout, PIP-106
// nack delay or backoff, PIP-130 ack-timeout backoff, the dead-letter policy), validated and
// stored (mutation testing, issue 21 criterion 5).

const registry = RedeliveryBackoffRegistry.withBuiltIns();
const topic = TopicName.parse('persistent://acme/orders/created');
const build = (input: ConsumerPolicyInput) => buildConsumerPolicy(registry, topic, 'sub', input);

describe('buildConsumerPolicy', () => {
  it('defaults: no ack timeout, Pulsar’s one-minute nack delay, no backoff, no dead-letter policy', () => {
    expect(build({})).toEqual({
      ackTimeoutMs: 0,
      negativeAckRedeliveryDelayMs: DEFAULT_NEGATIVE_ACK_DELAY_MS,
    });
    expect(DEFAULT_NEGATIVE_ACK_DELAY_MS).toBe(60_000);
  });

  it('keeps a valid ack timeout and nack delay, 0 included', () => {
    expect(build({ ackTimeoutMs: 1_000, negativeAckRedeliveryDelayMs: 0 })).toEqual({
      ackTimeoutMs: 1_000,
      negativeAckRedeliveryDelayMs: 0,
    });
  });

  it.each([-1, 1.5, Number.NaN, 2 ** 53])('refuses the nack delay %s', (delay) => {
    expect(() => build({ negativeAckRedeliveryDelayMs: delay })).toThrow(
      /negativeAckRedeliveryDelayMs must be an integer >= 0/,
    );
  });

  it('refuses a fixed nack delay together with a nack backoff (PIP-106)', () => {
    expect(() => build({ negativeAckRedeliveryDelayMs: 1_000, negativeAckRedeliveryBackoff: {} })).toThrow(
      /cannot be used together/,
    );
  });

  it('stores backoffs in their JSON form, from the Multiplier shorthand or a class name', () => {
    const policy = build({
      ackTimeoutMs: 2_000,
      ackTimeoutRedeliveryBackoff: { minDelayMs: 100, maxDelayMs: 800, multiplier: 2 },
      negativeAckRedeliveryBackoff: {
        className: 'MultiplierRedeliveryBackoff',
        params: { minDelayMs: 1_000, maxDelayMs: 4_000, multiplier: 2 },
      },
    });
    expect(registry.fromJson(policy.ackTimeoutRedeliveryBackoff).next(3)).toBe(800);
    expect(registry.fromJson(policy.negativeAckRedeliveryBackoff).next(1)).toBe(2_000);
    expect(JSON.parse(JSON.stringify(policy))).toEqual(policy);
  });

  it('takes a class name without params (its defaults)', () => {
    const policy = build({ negativeAckRedeliveryBackoff: { className: 'MultiplierRedeliveryBackoff' } });
    expect(registry.fromJson(policy.negativeAckRedeliveryBackoff).next(0)).toBe(10_000);
  });

  it('refuses an ack-timeout backoff without an ack timeout', () => {
    expect(() => build({ ackTimeoutRedeliveryBackoff: {} })).toThrow(/needs an ackTimeoutMs/);
  });

  it('names the setting whose backoff is invalid', () => {
    const invalid = { minDelayMs: 10, maxDelayMs: 5 };
    expect(() => build({ negativeAckRedeliveryBackoff: invalid })).toThrow(
      /^negativeAckRedeliveryBackoff: Invalid MultiplierRedeliveryBackoff/,
    );
    expect(() => build({ ackTimeoutMs: 1_000, ackTimeoutRedeliveryBackoff: invalid })).toThrow(
      /^ackTimeoutRedeliveryBackoff: /,
    );
    expect(() => build({ negativeAckRedeliveryBackoff: invalid })).toThrow(ValidationError);
    try {
      build({ negativeAckRedeliveryBackoff: invalid });
    } catch (error) {
      expect((error as Error).cause).toBeInstanceOf(ValidationError);
    }
  });

  it('passes on an error that is no validation error', () => {
    const broken = {
      create: () => {
        throw new TypeError('boom');
      },
    } as unknown as RedeliveryBackoffRegistry;
    expect(() => buildConsumerPolicy(broken, topic, 'sub', { negativeAckRedeliveryBackoff: {} })).toThrow(
      TypeError,
    );
  });

  it('defaults the dead-letter topic to Pulsar’s {topic}-{subscription}-DLQ', () => {
    expect(build({ deadLetterPolicy: { maxRedeliverCount: 1 } }).deadLetterPolicy).toStrictEqual({
      maxRedeliverCount: 1,
      deadLetterTopic: 'persistent://acme/orders/created-sub-DLQ',
    });
    const partition = TopicName.parse('persistent://acme/orders/created-partition-2');
    expect(
      buildConsumerPolicy(registry, partition, 's', { deadLetterPolicy: { maxRedeliverCount: 3 } })
        .deadLetterPolicy?.deadLetterTopic,
    ).toBe('persistent://acme/orders/created-s-DLQ');
  });

  it('keeps a given dead-letter topic and initial subscription', () => {
    expect(
      build({
        deadLetterPolicy: {
          maxRedeliverCount: 2,
          deadLetterTopic: 'acme/orders/dead',
          initialSubscriptionName: 'init',
        },
      }).deadLetterPolicy,
    ).toEqual({
      maxRedeliverCount: 2,
      deadLetterTopic: 'persistent://acme/orders/dead',
      initialSubscriptionName: 'init',
    });
  });

  it.each([0, -1, 1.5])('refuses maxRedeliverCount %s', (maxRedeliverCount) => {
    expect(() => build({ deadLetterPolicy: { maxRedeliverCount } })).toThrow(
      /deadLetterPolicy.maxRedeliverCount must be an integer > 0/,
    );
  });

  it('refuses a non-persistent dead-letter topic', () => {
    expect(() =>
      build({
        deadLetterPolicy: { maxRedeliverCount: 1, deadLetterTopic: 'non-persistent://acme/orders/dead' },
      }),
    ).toThrow(/must be persistent/);
  });
});

describe('redelivery delays', () => {
  it('a nack comes back after the backoff for its count, else after the fixed delay', () => {
    const fixed = build({ negativeAckRedeliveryDelayMs: 1_500 });
    expect(negativeAckDelayMs(registry, fixed, 4)).toBe(1_500);
    const backoff = build({
      negativeAckRedeliveryBackoff: { minDelayMs: 100, maxDelayMs: 10_000, multiplier: 3 },
    });
    expect([0, 1, 2].map((count) => negativeAckDelayMs(registry, backoff, count))).toEqual([100, 300, 900]);
  });

  it('an ack timeout is the timeout plus its backoff for the count; 0 when disabled', () => {
    expect(ackTimeoutDelayMs(registry, build({}), 3)).toBe(0);
    // Disabled whatever backoff a stored policy still names.
    const stored = build({ ackTimeoutMs: 1_000, ackTimeoutRedeliveryBackoff: { minDelayMs: 100 } });
    expect(ackTimeoutDelayMs(registry, { ...stored, ackTimeoutMs: 0 }, 3)).toBe(0);
    expect(ackTimeoutDelayMs(registry, build({ ackTimeoutMs: 1_000 }), 3)).toBe(1_000);
    const backoff = build({
      ackTimeoutMs: 1_000,
      ackTimeoutRedeliveryBackoff: { minDelayMs: 100, maxDelayMs: 10_000, multiplier: 2 },
    });
    expect([0, 1, 2].map((count) => ackTimeoutDelayMs(registry, backoff, count))).toEqual([
      1_100, 1_200, 1_400,
    ]);
  });
});
