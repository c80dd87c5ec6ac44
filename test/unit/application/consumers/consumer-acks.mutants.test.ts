import { describe, expect, it } from 'vitest';
import {
  acknowledgeCumulative,
  acknowledgeMessages,
  negativeAcknowledge,
  redeliverUnacknowledged,
} from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { PreconditionFailedError, ValidationError } from '../../../../shared/domain/errors.ts';
import { PositionNotFoundError } from '../../../../shared/domain/ledger-layout.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { CounterName } from '../../../../shared/ports/counters.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from '../../../support/in-memory-delivery-queue.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// Acknowledgements by message id and handle, cumulative acks, nacks and redeliverUnacknowledged
// through the consumer use cases (mutation testing, issue 21 criterion 5).

const admin: Principal = { role: 'admin', superuser: true };
const NOW = 1_700_000_000_000;

async function world(
  options: {
    type?: SubscriptionType;
    partitions?: number;
    nackDelayMs?: number;
    maxRedeliverCount?: number;
  } = {},
) {
  const clock = new ManualClock(NOW);
  const deliveryQueue = new InMemoryDeliveryQueue();
  const { ports, counted } = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    deliveryQueue,
  });
  const topic = TopicName.parse('persistent://public/default/acks');
  if (options.partitions) await createTopic(ports, admin, topic, options.partitions);
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: options.type ?? 'Shared',
    initialPosition: 'Earliest',
    policy: {
      negativeAckRedeliveryDelayMs: options.nackDelayMs ?? 0,
      ...(options.maxRedeliverCount
        ? { deadLetterPolicy: { maxRedeliverCount: options.maxRedeliverCount } }
        : {}),
    },
  });
  const publish = async (count: number) =>
    (
      await publishMessages(ports, admin, topic, {
        messages: Array.from({ length: count }, (_, i) => ({ payload: `m-${i}`, properties: {} })),
        router: new RoundRobinRouter(0),
      })
    ).map((result) => result.messageId as string);
  const receive = (max = 10, who = consumerId) => receiveMessages(ports, admin, who, { maxMessages: max });
  return { ports, clock, counted, deliveryQueue, topic, consumerId, publish, receive };
}

const counter = (counted: Map<CounterName, number>, name: CounterName) => counted.get(name) ?? 0;

describe('acknowledgeMessages', () => {
  it('acknowledges by message id and by handle, and counts both', async () => {
    const w = await world();
    const ids = await w.publish(4);
    const received = await w.receive(4);
    await acknowledgeMessages(w.ports, admin, w.consumerId, {
      messageIds: [ids[0] as string],
      deliveryHandles: [received[1]?.deliveryHandle as string],
    });
    expect(counter(w.counted, 'acked')).toBe(2);
    await redeliverUnacknowledged(w.ports, admin, w.consumerId, []);
    expect((await w.receive(10)).map((m) => m.messageId)).toEqual([ids[2], ids[3]]);
  });

  it('refuses an id of an entry not written yet, acknowledging nothing of the call', async () => {
    const w = await world();
    const ids = await w.publish(2);
    const [ledger] = (ids[0] as string).split(':');
    await expect(
      acknowledgeMessages(w.ports, admin, w.consumerId, {
        messageIds: [ids[0] as string, `${ledger}:7`],
        deliveryHandles: [],
      }),
    ).rejects.toThrow(new PositionNotFoundError(`Message ${ledger}:7 not found in topic ${w.topic}`));
    expect(counter(w.counted, 'acked')).toBe(0);
    expect((await w.receive(10)).map((m) => m.messageId)).toEqual(ids);
  });

  it('resolves ids of a partitioned topic by their partition, and refuses one of no partition', async () => {
    const w = await world({ partitions: 2 });
    const ids = await w.publish(4);
    const byPartition = (p: number) => ids.filter((id) => id.endsWith(`:${p}`));
    expect(byPartition(0)).toHaveLength(2);
    await acknowledgeMessages(w.ports, admin, w.consumerId, {
      messageIds: byPartition(1),
      deliveryHandles: [],
    });
    expect((await w.receive(10)).map((m) => m.messageId).sort()).toEqual(byPartition(0).sort());
    const [ledger, entry] = (ids[0] as string).split(':');
    await expect(
      acknowledgeMessages(w.ports, admin, w.consumerId, {
        messageIds: [`${ledger}:${entry}:5`],
        deliveryHandles: [],
      }),
    ).rejects.toThrow(
      new ValidationError(`Message id ${ledger}:${entry}:5 names no partition of ${w.topic}`),
    );
  });
});

describe('acknowledgeCumulative', () => {
  it('is refused on Shared with 412', async () => {
    const w = await world();
    const [id] = await w.publish(1);
    await expect(acknowledgeCumulative(w.ports, admin, w.consumerId, id as string)).rejects.toThrow(
      new PreconditionFailedError('Cumulative acknowledgement is not allowed on a Shared subscription'),
    );
  });

  it('acknowledges everything up to the id on Exclusive, and refuses an id not written', async () => {
    const w = await world({ type: 'Exclusive' });
    const ids = await w.publish(4);
    await w.receive(4);
    await acknowledgeCumulative(w.ports, admin, w.consumerId, ids[2] as string);
    await redeliverUnacknowledged(w.ports, admin, w.consumerId, []);
    expect((await w.receive(10)).map((m) => m.messageId)).toEqual([ids[3]]);
    const [ledger] = (ids[0] as string).split(':');
    await expect(acknowledgeCumulative(w.ports, admin, w.consumerId, `${ledger}:99`)).rejects.toThrow(
      PositionNotFoundError,
    );
  });
});

describe('negativeAcknowledge', () => {
  it('brings a message back after the nack delay, rings the doorbell then, and counts it', async () => {
    const w = await world({ nackDelayMs: 5_000 });
    const [id] = await w.publish(1);
    const [message] = await w.receive(1);
    const rings = [...w.deliveryQueue.rings.values()].flat().length;
    await negativeAcknowledge(w.ports, admin, w.consumerId, {
      messageIds: [],
      deliveryHandles: [message?.deliveryHandle as string],
    });
    expect(counter(w.counted, 'nacked')).toBe(1);
    expect([...w.deliveryQueue.rings.values()].flat().slice(rings)).toEqual([5]);
    expect(await w.receive(1)).toEqual([]);
    w.clock.advance(5_000);
    const [again] = await w.receive(1);
    expect([again?.messageId, again?.redeliveryCount]).toEqual([id, 1]);
  });

  it('by message id too; immediate (redeliverUnacknowledged of given handles) skips the delay', async () => {
    const w = await world({ nackDelayMs: 60_000 });
    const ids = await w.publish(2);
    const received = await w.receive(2);
    await negativeAcknowledge(w.ports, admin, w.consumerId, {
      messageIds: [ids[0] as string],
      deliveryHandles: [],
    });
    await redeliverUnacknowledged(w.ports, admin, w.consumerId, [received[1]?.deliveryHandle as string]);
    expect((await w.receive(10)).map((m) => [m.messageId, m.redeliveryCount])).toEqual([[ids[1], 1]]);
    w.clock.advance(60_000);
    expect((await w.receive(10)).map((m) => [m.messageId, m.redeliveryCount])).toEqual([[ids[0], 1]]);
  });
});

describe('consumer acks, more edges', () => {
  it('takes an id with any partition index on a non-partitioned topic', async () => {
    const w = await world();
    const [first, second] = await w.publish(2);
    const [ledger, entry] = (first as string).split(':');
    await acknowledgeMessages(w.ports, admin, w.consumerId, {
      messageIds: [`${ledger}:${entry}:3`],
      deliveryHandles: [],
    });
    expect((await w.receive(10)).map((m) => m.messageId)).toEqual([second]);
  });

  it('refuses a handle of another subscription (400), acknowledging nothing', async () => {
    const w = await world();
    await w.publish(1);
    const { consumerId: other } = await subscribeConsumer(w.ports, admin, {
      topic: w.topic,
      subscription: 'other',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    const [theirs] = await w.receive(1, other);
    await expect(
      acknowledgeMessages(w.ports, admin, w.consumerId, {
        messageIds: [],
        deliveryHandles: [theirs?.deliveryHandle as string],
      }),
    ).rejects.toThrow(new ValidationError('Delivery handle does not belong to this consumer’s subscription'));
    expect(await w.receive(1)).toHaveLength(1);
  });

  it('reads no handle key for ids only, and no head for handles only', async () => {
    const w = await world();
    const ids = await w.publish(2);
    const received = await w.receive(1);
    let keyLoads = 0;
    const handleKeys = w.ports.handleKeys;
    const ports = {
      ...w.ports,
      handleKeys: {
        ...handleKeys,
        loadOrCreate: async () => {
          keyLoads++;
          return handleKeys.loadOrCreate();
        },
      },
    };
    await acknowledgeMessages(ports, admin, w.consumerId, {
      messageIds: [ids[1] as string],
      deliveryHandles: [],
    });
    expect(keyLoads).toBe(0);
    const dispatch = w.ports.dispatch as unknown as { usage: { reads: number } };
    const reads = dispatch.usage.reads;
    await acknowledgeMessages(ports, admin, w.consumerId, {
      messageIds: [],
      deliveryHandles: [received[0]?.deliveryHandle as string],
    });
    expect(keyLoads).toBe(1);
    expect(dispatch.usage.reads).toBe(reads);
  });

  it('counts nothing where the ports keep no counters', async () => {
    const w = await world();
    const ids = await w.publish(2);
    const ports = { ...w.ports, counters: undefined };
    await w.receive(2);
    await acknowledgeMessages(ports, admin, w.consumerId, {
      messageIds: [ids[0] as string],
      deliveryHandles: [],
    });
    await negativeAcknowledge(ports, admin, w.consumerId, {
      messageIds: [ids[1] as string],
      deliveryHandles: [],
    });
    expect([w.counted.get('acked'), w.counted.get('nacked')]).toEqual([undefined, undefined]);
  });

  it('dead-letters past maxRedeliverCount on a nack at once, never on an immediate redelivery', async () => {
    const w = await world({ maxRedeliverCount: 1 });
    const dlq = TopicName.parse(`${w.topic}-sub-DLQ`);
    const inDlq = async () => (await w.ports.ledger.state(dlq))?.msgInCounter ?? 0;
    await w.publish(2);
    const first = await w.receive(2);
    const handles = first.map((m) => m.deliveryHandle);
    await negativeAcknowledge(w.ports, admin, w.consumerId, { messageIds: [], deliveryHandles: handles });
    const second = await w.receive(2);
    expect(second.map((m) => m.redeliveryCount)).toEqual([1, 1]);
    // Count 1 handed out: the next delivery would pass maxRedeliverCount.
    await redeliverUnacknowledged(w.ports, admin, w.consumerId, [second[0]?.deliveryHandle as string]);
    expect(await inDlq()).toBe(0);
    await negativeAcknowledge(w.ports, admin, w.consumerId, {
      messageIds: [],
      deliveryHandles: [second[1]?.deliveryHandle as string],
    });
    expect(await inDlq()).toBe(1);
  });
});
