import { describe, expect, it } from 'vitest';
import { subscriptionKey } from '../../../../shared/application/consumers/consumer-session.ts';
import { deliveryHandlesOf } from '../../../../shared/application/consumers/delivery-handles.ts';
import { findLambdaConsumer } from '../../../../shared/application/consumers/find-lambda-consumer.ts';
import {
  connectedConsumers,
  requireNoConnectedConsumers,
} from '../../../../shared/application/consumers/live-consumers.ts';
import { ConflictError, NotFoundError, PreconditionFailedError } from '../../../../shared/domain/errors.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { ConsumerRecord } from '../../../../shared/ports/consumer-registry.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// Who is connected to a subscription, which event-driven consumer a function is, and the
// deployment's handle signer (mutation testing, issue 21 criterion 5).

const NOW = 1_700_000_000_000;
const TOPIC = 'persistent://acme/orders/created';
const KEY = subscriptionKey(TOPIC, 'sub');

function world() {
  const clock = new ManualClock(NOW);
  const consumers = new InMemoryConsumerRegistry();
  const { ports } = inMemoryPorts({ clock, consumers });
  const record = (consumerId: string, extra: Partial<ConsumerRecord> = {}): ConsumerRecord => ({
    consumerId,
    consumerName: `name-${consumerId}`,
    role: 'app',
    topic: TOPIC,
    subscription: 'sub',
    subscriptionType: 'Shared',
    partitions: [],
    policy: { ackTimeoutMs: 0, negativeAckRedeliveryDelayMs: 60_000 },
    createdAtMs: NOW,
    ...extra,
  });
  const join = async (consumerId: string, untilMs: number, extra: Partial<ConsumerRecord> = {}) => {
    await consumers.register(record(consumerId, extra));
    await consumers.heartbeat(KEY, consumerId, untilMs);
  };
  return { ports, clock, join };
}

describe('connectedConsumers', () => {
  it('lists the consumers whose lease has not lapsed, up to its last millisecond', async () => {
    const { ports, join } = world();
    await join('a', NOW - 1);
    await join('b', NOW);
    await join('c', NOW + 60_000);
    const topic = TopicName.parse(TOPIC);
    expect(await connectedConsumers(ports, topic, 'sub')).toEqual(['b', 'c']);
    expect(await connectedConsumers(ports, topic, 'other')).toEqual([]);
    // A partition's name finds its partitioned topic's subscription.
    expect(await connectedConsumers(ports, TopicName.parse(`${TOPIC}-partition-0`), 'sub')).toEqual([
      'b',
      'c',
    ]);
  });

  it('refuses with 412, naming the count and the subscription, while any is connected', async () => {
    const { ports, join } = world();
    const topic = TopicName.parse(TOPIC);
    await expect(
      requireNoConnectedConsumers(ports, topic, ['sub', 'other'], 'Topic'),
    ).resolves.toBeUndefined();
    await join('a', NOW + 1);
    await join('b', NOW + 1);
    await expect(requireNoConnectedConsumers(ports, topic, ['other', 'sub'], 'Subscription')).rejects.toThrow(
      PreconditionFailedError,
    );
    await expect(requireNoConnectedConsumers(ports, topic, ['sub'], 'Topic')).rejects.toThrow(
      'Topic has active connected consumers: 2 on subscription sub',
    );
  });
});

describe('findLambdaConsumer', () => {
  it('finds the one event-driven consumer among the members', async () => {
    const { ports, join } = world();
    await join('http-1', NOW + 60_000);
    await join('fn-1', NOW + 1e12, { kind: 'lambda' });
    expect(await findLambdaConsumer(ports, { topic: TOPIC, subscription: 'sub' })).toBe('fn-1');
  });

  it('tells several apart by consumerName, and refuses to guess without one', async () => {
    const { ports, join } = world();
    await join('fn-1', NOW + 1e12, { kind: 'lambda', consumerName: 'billing' });
    await join('fn-2', NOW + 1e12, { kind: 'lambda', consumerName: 'audit' });
    expect(
      await findLambdaConsumer(ports, { topic: TOPIC, subscription: 'sub', consumerName: 'audit' }),
    ).toBe('fn-2');
    const guess = findLambdaConsumer(ports, { topic: TOPIC, subscription: 'sub' });
    await expect(guess).rejects.toThrow(ConflictError);
    await expect(findLambdaConsumer(ports, { topic: TOPIC, subscription: 'sub' })).rejects.toThrow(
      'Subscription sub of persistent://acme/orders/created has 2 event-driven consumers (billing, audit): give the function its consumerName',
    );
  });

  it('passes over a member whose record is gone', async () => {
    const { ports, join } = world();
    await ports.consumers.heartbeat(KEY, 'gone', NOW + 60_000);
    await join('fn-1', NOW + 1e12, { kind: 'lambda' });
    expect(await findLambdaConsumer(ports, { topic: TOPIC, subscription: 'sub' })).toBe('fn-1');
  });

  it('finds none where only HTTP consumers are, or none of that name', async () => {
    const { ports, join } = world();
    await join('http-1', NOW + 60_000);
    await expect(findLambdaConsumer(ports, { topic: TOPIC, subscription: 'sub' })).rejects.toThrow(
      `No event-driven consumer on subscription sub of ${TOPIC}: subscribe one first (consumerKind "lambda")`,
    );
    await join('fn-1', NOW + 1e12, { kind: 'lambda', consumerName: 'billing' });
    await expect(
      findLambdaConsumer(ports, { topic: TOPIC, subscription: 'sub', consumerName: 'audit' }),
    ).rejects.toThrow(
      new NotFoundError(
        `No event-driven consumer named audit on subscription sub of ${TOPIC}: subscribe one first (consumerKind "lambda")`,
      ),
    );
  });
});

describe('deliveryHandlesOf', () => {
  it('signs with the deployment’s one key: a handle one signer issued verifies with another', async () => {
    const { ports } = world();
    const handle = { cursorId: 'c1', ledgerId: '4', entryId: '9', partitionIndex: 0, redeliveryCount: 2 };
    const issued = (await deliveryHandlesOf(ports)).issue(handle);
    expect((await deliveryHandlesOf(ports)).verify(issued)).toEqual(handle);
  });
});
