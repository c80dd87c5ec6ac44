// Issue 24, criterion 1: what waits on a subscription, over in-memory ports and a manual clock.
import { describe, expect, it } from 'vitest';
import {
  acknowledgeMessages,
  negativeAcknowledge,
} from '../../../../shared/application/consumers/consumer-acks.ts';
import { closeConsumer } from '../../../../shared/application/consumers/consumer-session.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import { acknowledgeMessage } from '../../../../shared/application/subscriptions/acknowledge-message.ts';
import { rescheduleMessage } from '../../../../shared/application/subscriptions/reschedule-message.ts';
import {
  listScheduled,
  type ScheduledMessage,
  scheduledHistogram,
} from '../../../../shared/application/subscriptions/scheduled-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { getTopicStats } from '../../../../shared/application/topics/topic-stats.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const T0 = 1_700_000_000_000;
const MINUTE = 60_000;

function world() {
  const clock = new ManualClock(T0);
  const { ports } = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  return { clock, ports };
}

async function subscribe(ports: UseCasePorts, topic: TopicName, policy = {}) {
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: { negativeAckRedeliveryDelayMs: 120_000, ...policy },
  });
  return consumerId;
}

const scheduled = (
  ports: UseCasePorts,
  topic: TopicName,
  extra: { limit?: number; pageToken?: string } = {},
) => listScheduled(ports, { principal: admin, topic, subscription: 'sub', limit: 100, ...extra });

const view = (messages: readonly ScheduledMessage[]) =>
  messages.map((m) => [m.messageId, m.dueAt, m.reason, m.redeliveryCount, m.consumer]);

describe('scheduled: what waits on a subscription', () => {
  it('the issue: 20 published, 3 delayed by 10 minutes, 5 received: 3 delayed listed and counted in msgDelayed', async () => {
    const { clock, ports } = world();
    const topic = TopicName.parse('persistent://public/default/twenty');
    const consumer = await subscribe(ports, topic);
    const delayed = new Set([2, 9, 15]);
    const messageIds = await publishedIds(ports, admin, topic, {
      messages: Array.from({ length: 20 }, (_, i) => ({
        payload: `m${i}`,
        properties: {},
        ...(delayed.has(i) ? { deliverAtMs: T0 + 10 * MINUTE + i } : {}),
      })),
      router: new RoundRobinRouter(0),
    });
    let received = 0;
    for (let poll = 0; poll < 3 && received < 5; poll++) {
      received += (await receiveMessages(ports, admin, consumer, { maxMessages: 5 - received })).length;
    }
    expect(received).toBe(5);

    const page = await scheduled(ports, topic);

    // Entry 2 was passed by the dispatcher (released to the tracker), 9 and 15 were not reached.
    expect(view(page.messages)).toEqual(
      [2, 9, 15].map((i) => [messageIds[i], T0 + 10 * MINUTE + i, 'delayed', 0, null]),
    );
    expect(page.messages.map((m) => m.size)).toEqual([2, 2, 3]);
    expect(page.nextPageToken).toBeUndefined();
    const stats = (await getTopicStats(ports, admin, topic)).subscriptions.sub;
    expect(stats).toMatchObject({ msgDelayed: 3, msgBacklog: 20, msgBacklogNoDelayed: 17 });
    clock.advance(1);
  });

  it('a message the dispatcher has not reached, rescheduled: listed at its new time, counted in msgDelayed, a page token past it', async () => {
    const { clock, ports } = world();
    const topic = TopicName.parse('persistent://public/default/moved');
    await subscribe(ports, topic);
    const messageIds = await publishedIds(ports, admin, topic, {
      messages: [0, 1, 2].map((i) => ({ payload: `d${i}`, properties: {}, deliverAtMs: T0 + MINUTE + i })),
      router: new RoundRobinRouter(0),
    });
    const move = (i: number, deliverAtMs: number) =>
      rescheduleMessage(ports, {
        principal: admin,
        topic,
        subscription: 'sub',
        messageId: messageIds[i] as string,
        deliverAtMs,
        earlier: true,
        dryRun: false,
        requestId: `r${i}`,
      });

    await move(0, T0 + 30 * MINUTE);
    await move(2, T0 + 5_000);
    const first = await scheduled(ports, topic, { limit: 2 });
    const rest = await scheduled(ports, topic, { limit: 2, pageToken: first.nextPageToken as string });
    const stats = (await getTopicStats(ports, admin, topic)).subscriptions.sub;
    clock.advance(10_000);
    const later = (await getTopicStats(ports, admin, topic)).subscriptions.sub;

    expect(view([...first.messages, ...rest.messages])).toEqual([
      [messageIds[2], T0 + 5_000, 'rescheduled', 0, null],
      [messageIds[1], T0 + MINUTE + 1, 'delayed', 0, null],
      [messageIds[0], T0 + 30 * MINUTE, 'rescheduled', 0, null],
    ]);
    expect(rest.nextPageToken).toBeUndefined();
    expect(stats).toMatchObject({ msgDelayed: 3 });
    // Its new time has come: it is backlog, no longer delayed.
    expect(later).toMatchObject({ msgDelayed: 2 });
  });

  it('tells a nack backoff, an ack timeout and a gone consumer apart, and drops what is acknowledged', async () => {
    const { clock, ports } = world();
    const topic = TopicName.parse('persistent://public/default/reasons');
    const nacker = await subscribe(ports, topic, { ackTimeoutMs: 3_600_000 });
    const messageIds = await publishedIds(ports, admin, topic, {
      messages: Array.from({ length: 4 }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      router: new RoundRobinRouter(0),
    });
    const got = await receiveMessages(ports, admin, nacker, { maxMessages: 4 });
    await negativeAcknowledge(ports, admin, nacker, {
      messageIds: [],
      deliveryHandles: [got[0]?.deliveryHandle as string],
    });
    await acknowledgeMessages(ports, admin, nacker, {
      messageIds: [],
      deliveryHandles: [got[3]?.deliveryHandle as string],
    });
    const before = view((await scheduled(ports, topic)).messages);
    expect(before).toEqual([
      [messageIds[0], T0 + 120_000, 'nack', 1, nacker],
      [messageIds[1], T0 + 3_600_000, 'ackTimeout', 1, nacker],
      [messageIds[2], T0 + 3_600_000, 'ackTimeout', 1, nacker],
    ]);
    clock.advance(1_000);
    await closeConsumer(ports, admin, nacker);
    const after = view((await scheduled(ports, topic)).messages);
    expect(after).toEqual([
      // The consumer each last went to, kept on the tracker entry its release wrote.
      [messageIds[1], T0 + 1_000, 'consumerGone', 1, nacker],
      [messageIds[2], T0 + 1_000, 'consumerGone', 1, nacker],
      [messageIds[0], T0 + 120_000, 'nack', 1, nacker],
    ]);
  });

  it('pages through 250 delayed entries in due order, each once, and a cancelled one is gone', async () => {
    const { ports } = world();
    const topic = TopicName.parse('persistent://public/default/paged');
    await subscribe(ports, topic);
    // Dues out of log order, five entries sharing each due time (groups of the index).
    const messageIds = await publishedIds(ports, admin, topic, {
      messages: Array.from({ length: 250 }, (_, i) => ({
        payload: 'x',
        properties: {},
        deliverAtMs: T0 + MINUTE + ((i * 7) % 50) * 1000,
      })),
      router: new RoundRobinRouter(0),
    });
    const [ledgerId, entryId] = (messageIds[17] as string).split(':');
    await acknowledgeMessage(ports, {
      topic,
      ledgerId,
      entryId,
      subscriptionNames: ['sub'],
      dryRun: false,
      principal: admin,
      requestId: 'r1',
    });
    const listed: ScheduledMessage[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await scheduled(ports, topic, { limit: 100, ...(token ? { pageToken: token } : {}) });
      listed.push(...page.messages);
      token = page.nextPageToken;
      pages++;
    } while (token && pages < 10);
    const expected = messageIds
      .map((id, i) => ({ id, due: T0 + MINUTE + ((i * 7) % 50) * 1000 }))
      .filter(({ id }) => id !== messageIds[17])
      .sort((a, b) => a.due - b.due || compareIds(a.id, b.id));
    expect(listed.map((m) => [m.messageId, m.dueAt])).toEqual(expected.map(({ id, due }) => [id, due]));
    const chart = await scheduledHistogram(ports, {
      principal: admin,
      topic,
      subscription: 'sub',
      limit: 10_000,
      bucketSeconds: 10,
    });
    expect(chart.total).toBe(249);
    // The cancelled entry (17) is due at +19 s: the second bucket.
    expect(chart.buckets.map((b) => b.count)).toEqual([50, 49, 50, 50, 50]);
  });

  it('a partitioned topic merges its partitions in due order', async () => {
    const { ports } = world();
    const topic = TopicName.parse('persistent://public/default/merged');
    await createTopic(ports, admin, topic, 3);
    await subscribe(ports, topic);
    const dues = [50, 10, 40, 20, 30, 60];
    const messageIds = await publishedIds(ports, admin, topic, {
      messages: dues.map((s) => ({ payload: 'x', properties: {}, deliverAtMs: T0 + s * 1000 })),
      router: new RoundRobinRouter(0),
    });
    const first = await scheduled(ports, topic, { limit: 4 });
    const rest = await scheduled(ports, topic, { limit: 4, pageToken: first.nextPageToken as string });
    const order = [...dues.keys()].sort((a, b) => (dues[a] as number) - (dues[b] as number));
    expect([...first.messages, ...rest.messages].map((m) => m.messageId)).toEqual(
      order.map((i) => messageIds[i]),
    );
    expect(new Set(first.messages.map((m) => m.messageId.split(':')[2])).size).toBe(3);
  });
});

function compareIds(a: string, b: string): number {
  const [la, ea] = a.split(':').map(BigInt) as [bigint, bigint];
  const [lb, eb] = b.split(':').map(BigInt) as [bigint, bigint];
  return la !== lb ? (la < lb ? -1 : 1) : ea < eb ? -1 : ea > eb ? 1 : 0;
}

async function publishedIds(...args: Parameters<typeof publishMessages>): Promise<string[]> {
  return (await publishMessages(...args)).map((result) => result.messageId);
}
