import { describe, it } from 'vitest';
import { FEED_BATCH, INLINE_BACKFILL } from '../../shared/application/feed-backlog.ts';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import {
  ConsumerApi,
  numbered,
  payloads,
  type ReceivedMessage,
  type TestConsumer,
} from '../support/consumer-fixtures.ts';

// A subscription at Earliest on a backlog bigger than what subscribe enqueues itself: the first
// INLINE_BACKFILL entries are enqueued by the subscribe request, the rest by the scheduler's feed
// jobs (FEED_BATCH each). Real HTTP against the shared embedded stack, its scheduler included.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();
const BACKLOG = INLINE_BACKFILL + FEED_BATCH;

/** Publishes `count` messages `m<from>`, ... in requests of 1,000 (the produce API's maximum). */
async function publish(topic: TopicRef, count: number, from = 0): Promise<void> {
  for (let i = 0; i < count; i += 1_000) {
    const payloadsOfRequest = numbered(Math.min(1_000, count - i), 'm', from + i);
    await admin.produce(
      topic,
      payloadsOfRequest.map((payload) => ({ payload })),
    );
  }
}

/** Receives and acknowledges until `count` messages arrived or nothing came for `quietMs`. */
async function receiveAll(
  consumer: TestConsumer,
  count: number,
  quietMs = 5_000,
): Promise<ReceivedMessage[]> {
  const received: ReceivedMessage[] = [];
  let lastArrivalMs = Date.now();
  while (received.length < count && Date.now() - lastArrivalMs < quietMs) {
    const batch = await consumer.receive(100, 500);
    if (batch.length === 0) continue;
    lastArrivalMs = Date.now();
    received.push(...batch);
    await consumer.ack(batch);
  }
  return received;
}

describe.concurrent('a subscription at Earliest on a backlog the feeder completes', () => {
  it(`delivers a backlog of ${BACKLOG} and what is published meanwhile exactly once (Shared)`, async ({
    expect,
  }) => {
    const topic = TopicRef.unique('feed-shared');
    await publish(topic, BACKLOG);

    const started = Date.now();
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
    });
    const subscribeMs = Date.now() - started;
    // Published while the feeder works: publish's fan-out sends these tokens, the feeder must not.
    await publish(topic, 200, BACKLOG);
    const received = await receiveAll(consumer, BACKLOG + 200);
    const late = await consumer.receive(100, 1_500);

    expect(subscribeMs).toBeLessThan(10_000);
    expect(received).toHaveLength(BACKLOG + 200);
    expect(new Set(received.map((m) => m.messageId)).size).toBe(BACKLOG + 200);
    expect([...payloads(received)].sort()).toEqual(numbered(BACKLOG + 200).sort());
    expect(received.every((m) => m.redeliveryCount === 0)).toBe(true);
    expect(late).toEqual([]);
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it(`delivers a backlog of ${BACKLOG} in publish order (Exclusive)`, async ({ expect }) => {
    const topic = TopicRef.unique('feed-exclusive');
    await publish(topic, BACKLOG);

    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    const received = await receiveAll(consumer, BACKLOG);
    const late = await consumer.receive(100, 1_000);

    expect(payloads(received)).toEqual(numbered(BACKLOG));
    expect(late).toEqual([]);
  });
});
