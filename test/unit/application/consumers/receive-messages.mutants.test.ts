import { describe, expect, it } from 'vitest';
import { negativeAcknowledge } from '../../../../shared/application/consumers/consumer-acks.ts';
import {
  consumerMessageOf,
  receiveMessages,
} from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { CounterName } from '../../../../shared/ports/counters.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// A receive's messages as consumers see them, what it counts, and one byte budget across the
// partitions (mutation testing, issue 21 criterion 5).

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/receive');

describe('consumerMessageOf', () => {
  const partition = { topic: topic.partition(2).toString(), partitionIndex: 2, cursorId: 'c' };
  const position = Position.of(7, 3);

  it('gives every field, absent ones as null, and no producer or encoding it does not have', () => {
    expect(
      consumerMessageOf(partition, {
        position,
        redeliveryCount: 2,
        entry: { position, payload: 'hello', properties: {}, publishTimeMs: 11 },
      }),
    ).toStrictEqual({
      messageId: '7:3:2',
      payload: 'hello',
      key: null,
      properties: {},
      redeliveryCount: 2,
      publishTime: 11,
      eventTime: null,
    });
  });

  it('says base64 for bytes, and carries the key, properties, event time and producer', () => {
    expect(
      consumerMessageOf(partition, {
        position,
        redeliveryCount: 0,
        entry: {
          position,
          payload: 'AAE=',
          binary: true,
          key: 'k',
          properties: { a: '1' },
          publishTimeMs: 11,
          eventTimeMs: 9,
          producerName: 'p-1',
        },
      }),
    ).toEqual({
      messageId: '7:3:2',
      payload: 'AAE=',
      key: 'k',
      properties: { a: '1' },
      redeliveryCount: 0,
      publishTime: 11,
      eventTime: 9,
      payloadEncoding: 'base64',
      producerName: 'p-1',
    });
  });
});

async function world(partitions: number) {
  const { ports, counted } = inMemoryPorts({
    clock: new ManualClock(1_700_000_000_000),
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  await createTopic(ports, admin, topic, partitions);
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: { negativeAckRedeliveryDelayMs: 0 },
  });
  for (let i = 0; i < 4; i++) {
    await ports.ledger.append(topic.partition(i % partitions), [{ payload: `m${i}`, properties: {} }], 0);
  }
  return { ports, counted, consumerId };
}

describe('receiveMessages', () => {
  it('counts what it delivered and, of it, what it redelivered', async () => {
    const w = await world(1);
    const counter = (name: CounterName) => w.counted.get(name) ?? 0;
    const first = await receiveMessages(w.ports, admin, w.consumerId, { maxMessages: 2 });
    expect([counter('delivered'), counter('redelivered')]).toEqual([2, 0]);
    await negativeAcknowledge(w.ports, admin, w.consumerId, {
      messageIds: [],
      deliveryHandles: first.map((m) => m.deliveryHandle),
    });
    expect(await receiveMessages(w.ports, admin, w.consumerId, { maxMessages: 4 })).toHaveLength(4);
    expect([counter('delivered'), counter('redelivered')]).toEqual([6, 2]);
  });

  it('spends one byte budget across the partitions', async () => {
    const w = await world(2);
    // Each message takes 100 bytes of the answer: 3 fit, 2 on one partition and 1 on the other.
    const received = await receiveMessages(w.ports, admin, w.consumerId, {
      maxMessages: 10,
      answer: { bytes: 350, sizeOf: () => 100 },
    });
    expect(received).toHaveLength(3);
    expect(await receiveMessages(w.ports, admin, w.consumerId, { maxMessages: 10 })).toHaveLength(1);
  });
});

describe('receiveMessages across partitions and consumers', () => {
  it('takes at most maxMessages in all, whatever the partitions hold', async () => {
    const w = await world(2);
    expect(await receiveMessages(w.ports, admin, w.consumerId, { maxMessages: 3 })).toHaveLength(3);
  });

  it('Shared: any consumer takes any key (no Key_Shared routing)', async () => {
    const w = await world(1);
    await subscribeConsumer(w.ports, admin, {
      topic,
      subscription: 'sub',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    await w.ports.ledger.append(
      topic.partition(0),
      Array.from({ length: 8 }, (_, i) => ({ payload: `k${i}`, key: `key-${i}`, properties: {} })),
      0,
    );
    expect(await receiveMessages(w.ports, admin, w.consumerId, { maxMessages: 20 })).toHaveLength(12);
  });
});
