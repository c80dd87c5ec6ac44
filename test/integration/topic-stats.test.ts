import { afterAll, describe, expect, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi, subscribePath, type TestConsumer } from '../support/consumer-fixtures.ts';

// Issue 13, criterion 1: stats that are true, over real HTTP against the shared embedded stack.
// Known traffic in; the numbers out are the traffic's (rates: within what the window allows).

const api = AdminApi.shared();
const consumers = ConsumerApi.shared();
const opened: TestConsumer[] = [];

afterAll(async () => {
  await Promise.allSettled(opened.map((consumer) => consumer.close()));
});

interface Sub {
  msgBacklog: number;
  msgBacklogNoDelayed: number;
  msgDelayed: number;
  unackedMessages: number;
  msgRedeliverCounter: number;
  msgOutCounter: number;
  msgRateOut: number;
  msgThroughputOut: number;
  msgRateRedeliver: number;
  lastAckedTimestamp?: number;
  lastConsumedTimestamp?: number;
  blockedSubscriptionOnUnackedMsgs: boolean;
  consumers: {
    consumerName: string;
    consumerId: string;
    unackedMessages: number;
    connectedSince: string;
    availablePermits: number;
    blockedConsumerOnUnackedMsgs: boolean;
  }[];
}
interface Stats {
  msgRateIn: number;
  msgThroughputIn: number;
  msgInCounter: number;
  bytesInCounter: number;
  publishers: { producerName: string; lastPublishTimestamp: number }[];
  subscriptions: Record<string, Sub>;
  partitions?: Record<string, Stats>;
  metadata?: { partitions: number };
}

describe('topic stats over HTTP', () => {
  it('fills every field it shows with what happened: rates, counters, unacked, redeliveries, consumers, publishers', async () => {
    const topic = TopicRef.unique('stats');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    const started = Date.now();
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      consumerName: 'billing-1',
      negativeAckRedeliveryDelayMs: 0,
    });
    opened.push(consumer);
    await api.produceMany(topic, 20, 'p'); // payloads p0..p19: 50 bytes in all

    const held = await consumer.receiveN(20, 10_000);
    await consumer.ack(held.slice(0, 5));
    // Five redeliveries: one message nacked five times (no backoff), each time received again.
    let target = held[5];
    for (let i = 0; i < 5; i++) {
      await consumer.nack([target as (typeof held)[number]]);
      const again = await consumer.receiveN(1, 10_000);
      target = again[0];
      expect(target?.redeliveryCount).toBe(i + 1);
    }
    const stats = (await api.expectStatus(200, 'GET', `${topic.adminPath}/stats`)).body as Stats;
    const elapsedS = (Date.now() - started) / 1000;

    expect(stats.msgInCounter).toBe(20);
    expect(stats.bytesInCounter).toBe(50);
    // All 20 came in one publish inside the window, which began at or after `started`.
    expect(stats.msgRateIn).toBeGreaterThanOrEqual(20 / Math.max(elapsedS, 10) - 1e-9);
    expect(stats.msgThroughputIn).toBeCloseTo(stats.msgRateIn * 2.5, 6);
    expect(stats.publishers.map((p) => p.producerName)).toEqual(['admin']);
    const sub = stats.subscriptions.sub as Sub;
    expect(sub).toMatchObject({
      msgBacklog: 15,
      msgBacklogNoDelayed: 15,
      msgDelayed: 0,
      unackedMessages: 15,
      msgRedeliverCounter: 5,
      msgOutCounter: 25,
    });
    expect(sub.msgRateOut).toBeGreaterThan(0);
    expect(sub.msgRateRedeliver).toBeGreaterThan(0);
    expect(sub.lastAckedTimestamp).toBeGreaterThanOrEqual(started);
    expect(sub.lastConsumedTimestamp).toBeGreaterThanOrEqual(sub.lastAckedTimestamp as number);
    expect(sub.consumers).toEqual([
      expect.objectContaining({ consumerName: 'billing-1', unackedMessages: 15 }),
    ]);
    expect(Date.parse(sub.consumers[0]?.connectedSince as string)).toBeGreaterThanOrEqual(started - 1_000);
  });

  it('partitioned-stats sums the partitions, lists them unless perPartition=false, and is 404 for a plain topic', async () => {
    const topic = TopicRef.unique('pstats');
    await api.createTopic(topic, 2);
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    await api.produce(
      topic,
      Array.from({ length: 6 }, (_, i) => ({ payload: `m${i}`, key: `k${i}` })),
    );
    const all = (await api.expectStatus(200, 'GET', `${topic.adminPath}/partitioned-stats`)).body as Stats;
    expect(all.metadata).toEqual({ partitions: 2 });
    expect(Object.keys(all.partitions ?? {})).toHaveLength(2);
    expect(all.msgInCounter).toBe(6);
    expect(Object.values(all.partitions ?? {}).reduce((sum, p) => sum + p.msgInCounter, 0)).toBe(6);
    expect(all.subscriptions.sub?.msgBacklog).toBe(6);
    const summary = (
      await api.expectStatus(200, 'GET', `${topic.adminPath}/partitioned-stats?perPartition=false`)
    ).body as Stats;
    expect(summary.partitions).toBeUndefined();
    expect(summary.msgInCounter).toBe(6);

    const plain = TopicRef.unique('plainstats');
    await api.createTopic(plain);
    expect((await api.send('GET', `${plain.adminPath}/partitioned-stats`)).status).toBe(404);
  });

  it('availablePermits: what the dispatcher may still hand each consumer before its cap (50,000), Lambda consumers too', async () => {
    const topic = TopicRef.unique('permits');
    await api.createTopic(topic);
    const poller = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      consumerName: 'poller',
      subscriptionInitialPosition: 'Earliest',
    });
    opened.push(poller);
    const lambda = await api.expectStatus(200, 'POST', subscribePath(topic, 'sub'), {
      body: {
        subscriptionType: 'Shared',
        consumerKind: 'lambda',
        functionTimeoutMs: 20_000,
        consumerName: 'fn',
      },
    });
    const lambdaId = (lambda.body as { consumerId: string }).consumerId;
    const consumersNow = async () =>
      ((await api.expectStatus(200, 'GET', `${topic.adminPath}/stats`)).body as Stats).subscriptions.sub
        ?.consumers ?? [];

    expect((await consumersNow()).find((c) => c.consumerName === 'poller')).toMatchObject({
      availablePermits: 50_000,
      blockedConsumerOnUnackedMsgs: false,
    });
    await api.produceMany(topic, 3);
    const taken = await poller.receiveN(3, 5_000);
    expect(taken).toHaveLength(3);
    const after = await consumersNow();
    expect(after.find((c) => c.consumerName === 'poller')).toMatchObject({
      availablePermits: 50_000 - 3,
      unackedMessages: 3,
      blockedConsumerOnUnackedMsgs: false,
    });
    expect(after.find((c) => c.consumerId === lambdaId)).toMatchObject({
      consumerName: 'fn',
      unackedMessages: 0,
      availablePermits: 50_000,
    });
    await poller.ack(taken.slice(0, 2));
    expect((await consumersNow()).find((c) => c.consumerName === 'poller')?.availablePermits).toBe(
      50_000 - 1,
    );
    expect(
      ((await api.expectStatus(200, 'GET', `${topic.adminPath}/stats`)).body as Stats).subscriptions.sub
        ?.blockedSubscriptionOnUnackedMsgs,
    ).toBe(false);
  });
});
