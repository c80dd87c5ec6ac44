// Only real handles acknowledge (issue 21, criterion 8), over in-memory ports: a handle the server
// did not issue (unsigned, forged, naming another topic's ledger or an entry not written yet) is
// refused and acknowledges nothing; a genuine one from any consumer of the subscription, even a
// stale one, acknowledges as Pulsar does, with no ledger read, and the counts stay right.
import { describe, expect, it } from 'vitest';
import {
  acknowledgeMessages,
  negativeAcknowledge,
  redeliverUnacknowledged,
} from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { getTopicStats } from '../../../../shared/application/topics/topic-stats.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import {
  DELIVERY_HANDLE_KEY_BYTES,
  DELIVERY_HANDLE_PREFIX,
  DeliveryHandleSigner,
  InvalidDeliveryHandleError,
} from '../../../../shared/domain/delivery-handle.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts, unusedPort } from '../../../support/in-memory-ports.ts';
import { twoProcesses } from '../../../support/in-memory-processes.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const orders = TopicName.parse('persistent://public/default/orders');
const audit = TopicName.parse('persistent://public/default/audit');

function world(): UseCasePorts {
  return inMemoryPorts({
    clock: new ManualClock(1_700_000_000_000),
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  }).ports;
}

async function subscribe(ports: UseCasePorts, topic: TopicName, consumerName: string): Promise<string> {
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    consumerName,
    policy: { negativeAckRedeliveryDelayMs: 0 },
  });
  return consumerId;
}

async function publish(ports: UseCasePorts, topic: TopicName, count: number): Promise<string[]> {
  const results = await publishMessages(ports, admin, topic, {
    messages: Array.from({ length: count }, (_, i) => ({ payload: `m-${i}`, properties: {} })),
    router: new RoundRobinRouter(0),
  });
  return results.map((result) => result.messageId as string);
}

/** The fields of a handle's payload, as a client can read them (it is only base64url). */
function fieldsOf(handle: string): [string, string, string, number, number] {
  const payload = handle.slice(DELIVERY_HANDLE_PREFIX.length).split('.')[0] as string;
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
}

/** A genuine handle's tag over a payload the client chose. */
function retargeted(handle: string, change: { ledgerId?: string; entryId?: string }): string {
  const [cursorId, ledgerId, entryId, partitionIndex, count] = fieldsOf(handle);
  const payload = Buffer.from(
    JSON.stringify([cursorId, change.ledgerId ?? ledgerId, change.entryId ?? entryId, partitionIndex, count]),
  ).toString('base64url');
  return `${DELIVERY_HANDLE_PREFIX}${payload}.${handle.split('.')[2]}`;
}

/** The unsigned handle of earlier versions: base64url JSON [cursorId, receipt, ledger, entry, partition, count]. */
function unsigned(handle: string, entryId: string): string {
  const [cursorId, ledgerId, , partitionIndex, count] = fieldsOf(handle);
  return Buffer.from(JSON.stringify([cursorId, '-', ledgerId, entryId, partitionIndex, count])).toString(
    'base64url',
  );
}

async function subscriptionStats(ports: UseCasePorts, topic: TopicName) {
  const stats = await getTopicStats(ports, admin, topic);
  const sub = stats.subscriptions.sub;
  return {
    backlog: sub?.msgBacklog,
    unacked: sub?.unackedMessages,
    perConsumer: Object.fromEntries((sub?.consumers ?? []).map((c) => [c.consumerName, c.unackedMessages])),
  };
}

describe('delivery handles the server did not issue', () => {
  it('are refused (400 family), acknowledge nothing, and the entries they name are delivered once written', async () => {
    const ports = world();
    const consumer = await subscribe(ports, orders, 'a');
    await subscribe(ports, audit, 'b');
    await publish(ports, orders, 2);
    const [auditId] = await publish(ports, audit, 1);
    const received = await receiveMessages(ports, admin, consumer, { maxMessages: 10 });
    const genuine = received[0]?.deliveryHandle as string;
    const [cursorId, ledgerId] = fieldsOf(genuine);
    const otherKey = new DeliveryHandleSigner(Buffer.alloc(DELIVERY_HANDLE_KEY_BYTES, 1));
    const refused: [string, string][] = [
      ['an unsigned handle (earlier versions) of an entry not written yet', unsigned(genuine, '3')],
      ['a genuine handle retargeted at an entry not written yet', retargeted(genuine, { entryId: '5' })],
      [
        'a genuine handle retargeted at another topic’s ledger',
        retargeted(genuine, { ledgerId: (auditId as string).split(':')[0] as string }),
      ],
      [
        'a handle signed with another key',
        otherKey.issue({ cursorId, ledgerId, entryId: '4', partitionIndex: -1, redeliveryCount: 0 }),
      ],
    ];

    for (const [label, handle] of refused) {
      for (const call of [
        () =>
          acknowledgeMessages(ports, admin, consumer, { messageIds: [], deliveryHandles: [genuine, handle] }),
        () =>
          negativeAcknowledge(ports, admin, consumer, { messageIds: [], deliveryHandles: [genuine, handle] }),
        () => redeliverUnacknowledged(ports, admin, consumer, [genuine, handle]),
      ]) {
        await expect(call(), label).rejects.toThrow(InvalidDeliveryHandleError);
        await expect(call(), label).rejects.toThrow(/not a handle this server issued/);
      }
    }
    expect(await subscriptionStats(ports, orders)).toEqual({ backlog: 2, unacked: 2, perConsumer: { a: 2 } });
    expect(await subscriptionStats(ports, audit)).toEqual({ backlog: 1, unacked: 0, perConsumer: { b: 0 } });

    await publish(ports, orders, 6);
    const later = await receiveMessages(ports, admin, consumer, { maxMessages: 10 });

    // Entries 2 to 7, those the forged handles named among them: none was swallowed.
    expect(later.map((m) => m.messageId.split(':')[1])).toEqual(['2', '3', '4', '5', '6', '7']);
    expect(await subscriptionStats(ports, orders)).toEqual({ backlog: 8, unacked: 8, perConsumer: { a: 8 } });
  });
});

describe('genuine delivery handles', () => {
  it('acknowledge from any consumer of the subscription, even stale, once, with the counts right', async () => {
    const ports = world();
    const a = await subscribe(ports, orders, 'a');
    const b = await subscribe(ports, orders, 'b');
    await publish(ports, orders, 2);
    const [first, second] = await receiveMessages(ports, admin, a, { maxMessages: 2 });
    // a gives the first back (delay 0): b gets it, count 1. a's handle is stale now.
    await negativeAcknowledge(ports, admin, a, {
      messageIds: [],
      deliveryHandles: [first?.deliveryHandle as string],
    });
    const [again] = await receiveMessages(ports, admin, b, { maxMessages: 2 });
    expect(again).toMatchObject({ messageId: first?.messageId, redeliveryCount: 1 });

    // The stale handle acknowledges b's delivery; b's own handle then changes nothing.
    await acknowledgeMessages(ports, admin, a, {
      messageIds: [],
      deliveryHandles: [first?.deliveryHandle as string],
    });
    const afterStale = await subscriptionStats(ports, orders);
    await acknowledgeMessages(ports, admin, b, {
      messageIds: [],
      deliveryHandles: [again?.deliveryHandle as string],
    });
    // b acknowledges what a holds, with a's handle (Pulsar takes any consumer's acknowledgement).
    await acknowledgeMessages(ports, admin, b, {
      messageIds: [],
      deliveryHandles: [second?.deliveryHandle as string],
    });
    // Stale nacks and acks of acknowledged entries change nothing either.
    await negativeAcknowledge(ports, admin, a, {
      messageIds: [],
      deliveryHandles: [first?.deliveryHandle as string, second?.deliveryHandle as string],
    });
    await acknowledgeMessages(ports, admin, a, {
      messageIds: [],
      deliveryHandles: [again?.deliveryHandle as string],
    });

    expect(afterStale).toEqual({ backlog: 1, unacked: 1, perConsumer: { a: 1, b: 0 } });
    expect(await subscriptionStats(ports, orders)).toEqual({
      backlog: 0,
      unacked: 0,
      perConsumer: { a: 0, b: 0 },
    });
    expect(await receiveMessages(ports, admin, a, { maxMessages: 10 })).toEqual([]);
    expect(await receiveMessages(ports, admin, b, { maxMessages: 10 })).toEqual([]);
  });

  it('acknowledge without reading the ledger', async () => {
    const ports = world();
    const consumer = await subscribe(ports, orders, 'a');
    await publish(ports, orders, 3);
    const received = await receiveMessages(ports, admin, consumer, { maxMessages: 3 });

    await acknowledgeMessages(
      { ...ports, ledger: unusedPort('ledger', 'an ack by handle') },
      admin,
      consumer,
      {
        messageIds: [],
        deliveryHandles: received.map((m) => m.deliveryHandle),
      },
    );

    expect(await subscriptionStats(ports, orders)).toMatchObject({ backlog: 0, unacked: 0 });
  });

  it('issued in one process acknowledge in another (one key per deployment)', async () => {
    const [first, second] = twoProcesses();
    const consumer = await subscribe(first, orders, 'a');
    await publish(first, orders, 2);
    const received = await receiveMessages(first, admin, consumer, { maxMessages: 2 });

    await acknowledgeMessages(second, admin, consumer, {
      messageIds: [],
      deliveryHandles: received.map((m) => m.deliveryHandle),
    });

    expect(await subscriptionStats(first, orders)).toMatchObject({ backlog: 0, unacked: 0 });
  });
});
