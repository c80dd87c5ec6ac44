import { afterAll, describe, expect, it } from 'vitest';
import {
  AdminApi,
  parseMessageId,
  type SubscriptionType,
  TopicRef,
  uniqueRole,
} from '../support/admin-fixtures.ts';
import { ConsumerApi, payloads, type TestConsumer } from '../support/consumer-fixtures.ts';

// Issue 13, criterion 2: pulsar-admin's cursor operations over real HTTP against the shared
// embedded stack: resetcursor (by timestamp, by MessageId), skip_all, expireMessages (one and
// all subscriptions), each on a partitioned topic too, audited, with dryRun.

const api = AdminApi.shared();
const consumers = ConsumerApi.shared();
const opened: TestConsumer[] = [];

afterAll(async () => {
  await Promise.allSettled(opened.map((consumer) => consumer.close()));
});

async function consumer(topic: TopicRef, subscription: string, type: SubscriptionType) {
  const opened1 = await consumers.subscribe(topic, subscription, { subscriptionType: type });
  opened.push(opened1);
  return opened1;
}

async function topicWith(label: string, partitions = 0) {
  const topic = TopicRef.unique(label);
  await api.createTopic(topic, partitions);
  return topic;
}

const subPath = (topic: TopicRef, sub: string) => `${topic.adminPath}/subscription/${sub}`;

describe('resetcursor', () => {
  it.each<SubscriptionType>([
    'Shared',
    'Exclusive',
  ])('%s: rewinds by timestamp, and a connected consumer receives everything from there again', async (type) => {
    const topic = await topicWith(`reset-${type.toLowerCase()}`);
    await api.createSubscription(topic, 'sub', { type });
    const before = await api.produceMany(topic, 4, 'a');
    const c = await consumer(topic, 'sub', type);
    const first = await c.receiveN(4, 10_000);
    await c.ack(first);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const after = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await api.produceMany(topic, 3, 'b');
    const second = await c.receiveN(3, 10_000);
    await c.ack(second);

    // Rewind to the second batch: its three messages come again, as first deliveries.
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor/${after}`);
    const again = await c.receiveN(3, 10_000);
    expect(payloads(again)).toEqual(['b0', 'b1', 'b2']);
    expect(again.map((m) => m.redeliveryCount)).toEqual([0, 0, 0]);
    await c.ack(again);

    // Back to the start by MessageId.
    const { ledgerId, entryId } = parseMessageId(before[0] as string);
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor`, {
      body: { ledgerId: Number(ledgerId), entryId: Number(entryId) },
    });
    expect(payloads(await c.receiveN(7, 10_000))).toEqual(['a0', 'a1', 'a2', 'a3', 'b0', 'b1', 'b2']);
    expect((await api.backlogs(topic)).sub).toBe(7);
  });

  it('moves forward by MessageId (isExcluded starts after it), and answers 412 for a position not of the topic', async () => {
    const topic = await topicWith('reset-forward');
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    const ids = await api.produceMany(topic, 5);
    const { ledgerId, entryId } = parseMessageId(ids[2] as string);
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor`, {
      body: { ledgerId: Number(ledgerId), entryId: Number(entryId), isExcluded: true },
    });
    expect((await api.backlogs(topic)).sub).toBe(2);
    const c = await consumer(topic, 'sub', 'Shared');
    expect(payloads(await c.receiveN(2, 10_000))).toEqual(['m3', 'm4']);

    const other = await topicWith('reset-other');
    const [foreign] = await api.produceMany(other, 1);
    const parts = parseMessageId(foreign as string);
    const refused = await api.send('POST', `${subPath(topic, 'sub')}/resetcursor`, {
      body: { ledgerId: Number(parts.ledgerId), entryId: Number(parts.entryId) },
    });
    expect(refused.status).toBe(412);
    expect(refused.body).toEqual({ reason: expect.stringMatching(/Unable to find position/) });
  });

  it("MessageId.earliest (-1:-1) and MessageId.latest (Long.MAX_VALUE) as Pulsar's clients send them", async () => {
    const topic = await topicWith('reset-edges', 2);
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    await api.produce(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ payload: `m${i}`, key: `k${i}` })),
    );
    expect((await api.stats(topic)).subscriptions.sub?.msgBacklog).toBe(5);
    // Long.MAX_VALUE as pulsar-admin writes it: a bare 19-digit number.
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor`, {
      rawBody: '{"ledgerId":9223372036854775807,"entryId":9223372036854775807,"partitionIndex":-1}',
    });
    expect((await api.stats(topic)).subscriptions.sub?.msgBacklog).toBe(0);
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor`, {
      body: { ledgerId: -1, entryId: -1, partitionIndex: -1 },
    });
    expect((await api.stats(topic)).subscriptions.sub?.msgBacklog).toBe(5);
    const other = await api.send('POST', `${subPath(topic, 'sub')}/resetcursor`, {
      body: { ledgerId: -1, entryId: 0 },
    });
    expect(other.status).toBe(400);
    expect(other.body).toEqual({ reason: expect.any(String) });
  });

  it('on a partitioned topic: a timestamp resets every partition, a MessageId the partition holding it', async () => {
    const topic = await topicWith('reset-parted', 2);
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    const ids = await api.produce(
      topic,
      Array.from({ length: 6 }, (_, i) => ({ payload: `m${i}`, key: `k${i}` })),
    );
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/skip_all`);
    expect((await api.stats(topic)).subscriptions.sub?.msgBacklog).toBe(0);

    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor/0`);
    expect((await api.stats(topic)).subscriptions.sub?.msgBacklog).toBe(6);

    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/skip_all`);
    const partitionOf = (messageId: string) => Number(messageId.split(':')[2]);
    const id = parseMessageId(ids[0] as string);
    const partitionIndex = partitionOf(ids[0] as string);
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor`, {
      body: { ledgerId: Number(id.ledgerId), entryId: Number(id.entryId), partitionIndex },
    });
    const fromIt = ids.filter(
      (other) =>
        partitionOf(other) === partitionIndex && Number(parseMessageId(other).entryId) >= Number(id.entryId),
    );
    expect(fromIt.length).toBeGreaterThan(0);
    expect((await api.stats(topic)).subscriptions.sub?.msgBacklog).toBe(fromIt.length);
    const wrongPartition = await api.send('POST', `${subPath(topic, 'sub')}/resetcursor`, {
      body: { ledgerId: Number(id.ledgerId), entryId: 0, partitionIndex: partitionIndex === 0 ? 1 : 0 },
    });
    expect(wrongPartition.status).toBe(412);
  });

  it('dryRun answers where each cursor would go and moves nothing; every call is audited', async () => {
    const topic = await topicWith('reset-dry');
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    const ids = await api.produceMany(topic, 3);
    const before = await api.cursors(topic);
    const dry = await api.expectStatus(200, 'POST', `${subPath(topic, 'sub')}/skip_all?dryRun=true`);
    const last = parseMessageId(ids[2] as string);
    expect(dry.body).toMatchObject({
      operation: 'skipAll',
      dryRun: true,
      subscriptions: {
        sub: [
          {
            partition: topic.name,
            newMarkDeletePosition: `${last.ledgerId}:${last.entryId}`,
          },
        ],
      },
    });
    expect(await api.cursors(topic)).toEqual(before);
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor/0`);
    const missing = await api.send('POST', `${subPath(topic, 'nope')}/expireMessages/10`);
    expect(missing.status).toBe(404);
    const audit = (await api.expectStatus(200, 'GET', `${topic.adminPath}/acknowledgeMessage/audit`))
      .body as { operation?: string; dryRun: boolean; outcome: string; position: string }[];
    expect(audit.map((record) => [record.operation, record.dryRun, record.outcome.split(':')[0]])).toEqual([
      ['expireMessages', false, 'refused'],
      ['resetCursor', false, 'done'],
      ['skipAll', true, 'dry run'],
    ]);
  });
});

describe("on a partitioned topic, by its name and by a partition's", () => {
  interface Moves {
    operation: string;
    dryRun: boolean;
    subscriptions: Record<string, { partition: string; newMarkDeletePosition: string }[]>;
  }
  /** `{ sub: [backlog of partition 0, backlog of partition 1] }`. */
  async function partitionBacklogs(topic: TopicRef): Promise<Record<string, number[]>> {
    const stats = await api.stats(topic);
    const result: Record<string, number[]> = {};
    for (const index of [0, 1]) {
      const partition = stats.partitions?.[topic.partition(index).name];
      for (const [name, sub] of Object.entries(partition?.subscriptions ?? {})) {
        result[name] = [...(result[name] ?? []), sub.msgBacklog];
      }
    }
    return result;
  }
  const dry = async (path: string, body?: unknown) =>
    (await api.expectStatus(200, 'POST', `${path}?dryRun=true`, body === undefined ? {} : { body }))
      .body as Moves;
  const movedPartitions = (moves: Moves, sub: string) =>
    (moves.subscriptions[sub] ?? []).map((move) => move.partition).sort();

  it('every cursor operation, with dryRun first: the dry run names each partition it would move and moves none', async () => {
    const topic = await topicWith('parted-ops', 2);
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    await api.createSubscription(topic, 'other', { type: 'Failover' });
    const p0 = await api.produceMany(topic.partition(0), 3, 'a');
    const p1 = await api.produceMany(topic.partition(1), 3, 'b');
    const both = [topic.partition(0).name, topic.partition(1).name];
    expect(await partitionBacklogs(topic)).toEqual({ sub: [3, 3], other: [3, 3] });

    // skip_all: by the topic's name every partition, by a partition's name that one.
    const skipDry = await dry(`${subPath(topic, 'sub')}/skip_all`);
    expect(movedPartitions(skipDry, 'sub')).toEqual(both);
    expect(skipDry.subscriptions.sub?.find((m) => m.partition === both[1])?.newMarkDeletePosition).toBe(
      parseMessageId(p1[2] as string).position,
    );
    expect(await partitionBacklogs(topic)).toEqual({ sub: [3, 3], other: [3, 3] });
    expect(movedPartitions(await dry(`${subPath(topic.partition(1), 'sub')}/skip_all`), 'sub')).toEqual([
      both[1],
    ]);
    await api.expectStatus(204, 'POST', `${subPath(topic.partition(1), 'sub')}/skip_all`);
    expect(await partitionBacklogs(topic)).toEqual({ sub: [3, 0], other: [3, 3] });

    // resetcursor to a timestamp: every partition back to the start.
    expect(movedPartitions(await dry(`${subPath(topic, 'sub')}/resetcursor/0`), 'sub')).toEqual(both);
    expect(await partitionBacklogs(topic)).toEqual({ sub: [3, 0], other: [3, 3] });
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor/0`);
    expect(await partitionBacklogs(topic)).toEqual({ sub: [3, 3], other: [3, 3] });

    // resetcursor to a MessageId: the partition that holds it, by the topic's name or its own.
    const second = parseMessageId(p0[1] as string);
    const at = { ledgerId: Number(second.ledgerId), entryId: Number(second.entryId), partitionIndex: 0 };
    expect(movedPartitions(await dry(`${subPath(topic, 'sub')}/resetcursor`, at), 'sub')).toEqual([both[0]]);
    expect(await partitionBacklogs(topic)).toEqual({ sub: [3, 3], other: [3, 3] });
    await api.expectStatus(204, 'POST', `${subPath(topic.partition(0), 'sub')}/resetcursor`, {
      body: { ...at, excluded: true },
    });
    expect(await partitionBacklogs(topic)).toEqual({ sub: [1, 3], other: [3, 3] });
    const onOtherPartition = await api.send('POST', `${subPath(topic.partition(1), 'sub')}/resetcursor`, {
      body: { ledgerId: at.ledgerId, entryId: at.entryId },
    });
    expect(onOtherPartition.status).toBe(412);

    // expireMessages: one subscription, then every one (all_subscription), each partition.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(movedPartitions(await dry(`${subPath(topic, 'sub')}/expireMessages/1`), 'sub')).toEqual(both);
    const allDry = await dry(`${topic.adminPath}/all_subscription/expireMessages/1`);
    expect(Object.keys(allDry.subscriptions).sort()).toEqual(['other', 'sub']);
    expect(movedPartitions(allDry, 'other')).toEqual(both);
    expect(await partitionBacklogs(topic)).toEqual({ sub: [1, 3], other: [3, 3] });
    await api.expectStatus(204, 'POST', `${topic.partition(0).adminPath}/all_subscription/expireMessages/1`);
    expect(await partitionBacklogs(topic)).toEqual({ sub: [0, 3], other: [0, 3] });
    await api.expectStatus(204, 'POST', `${subPath(topic, 'other')}/expireMessages/1`);
    expect(await partitionBacklogs(topic)).toEqual({ sub: [0, 3], other: [0, 0] });
    await api.expectStatus(204, 'POST', `${topic.adminPath}/all_subscription/expireMessages/1`);
    expect(await partitionBacklogs(topic)).toEqual({ sub: [0, 0], other: [0, 0] });
  });
});

describe('skip_all and expireMessages', () => {
  it('skip_all empties the backlog; what a consumer held is acknowledged, later messages come', async () => {
    const topic = await topicWith('skipall');
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    await api.produceMany(topic, 5);
    const c = await consumer(topic, 'sub', 'Shared');
    await c.receiveN(2, 10_000);
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/skip_all`);
    expect((await api.backlogs(topic)).sub).toBe(0);
    await api.produceMany(topic, 1, 'later');
    expect(payloads(await c.receiveN(1, 10_000))).toEqual(['later0']);
  });

  it('expires what was published more than N seconds ago, on one or on every subscription', async () => {
    const topic = await topicWith('expire', 2);
    await api.createSubscription(topic, 'a', { type: 'Shared' });
    await api.createSubscription(topic, 'b', { type: 'Failover' });
    await api.produce(
      topic,
      Array.from({ length: 4 }, (_, i) => ({ payload: `old${i}`, key: `k${i}` })),
    );
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await api.produce(
      topic,
      Array.from({ length: 2 }, (_, i) => ({ payload: `new${i}`, key: `k${i}` })),
    );
    // Nothing is 60 s old: nothing moves.
    await api.expectStatus(204, 'POST', `${topic.adminPath}/all_subscription/expireMessages/60`);
    expect(await api.backlogs(topic)).toEqual({ a: 6, b: 6 });
    await api.expectStatus(204, 'POST', `${subPath(topic, 'a')}/expireMessages/2`);
    expect(await api.backlogs(topic)).toEqual({ a: 2, b: 6 });
    await api.expectStatus(204, 'POST', `${topic.adminPath}/all_subscription/expireMessages/2`);
    expect(await api.backlogs(topic)).toEqual({ a: 2, b: 2 });
  });

  it('needs consume on the topic: a role with it may, one without it may not (403)', async () => {
    const topic = await topicWith('cursor-auth');
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    await api.produceMany(topic, 2);
    const allowed = uniqueRole('ops');
    await api.grant(topic, allowed, ['consume']);
    const producer = uniqueRole('producer');
    await api.grant(topic, producer, ['produce']);
    expect((await api.as(producer).send('POST', `${subPath(topic, 'sub')}/skip_all`)).status).toBe(403);
    expect((await api.as(allowed).send('POST', `${subPath(topic, 'sub')}/skip_all`)).status).toBe(204);
    const refusedOnNonPersistent = await api.send(
      'POST',
      `${topic.nonPersistentAdminPath}/subscription/sub/skip_all`,
    );
    expect(refusedOnNonPersistent.status).toBe(405);
  });
});

describe("internalStats' readPosition", () => {
  it("is the dispatcher's: the next entry never dispatched, as Pulsar's cursor readPosition", async () => {
    const topic = await topicWith('readpos');
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    const ids = await api.produceMany(topic, 5);
    const { ledgerId } = parseMessageId(ids[0] as string);
    const c = await consumer(topic, 'sub', 'Shared');
    const received = await c.receiveN(3, 10_000);
    expect(payloads(received)).toEqual(['m0', 'm1', 'm2']);
    await c.ack(received.slice(0, 1));

    const cursor = async () => (await api.internalStats(topic)).cursors.sub;
    // m0 acknowledged, m1 and m2 handed out and held: reading goes on at m3.
    expect(await cursor()).toMatchObject({
      markDeletePosition: `${ledgerId}:0`,
      readPosition: `${ledgerId}:3`,
    });

    // A reset moves it back with the mark-delete position.
    await api.expectStatus(204, 'POST', `${subPath(topic, 'sub')}/resetcursor`, {
      body: { ledgerId: -1, entryId: -1 },
    });
    expect(await cursor()).toMatchObject({
      markDeletePosition: `${ledgerId}:-1`,
      readPosition: `${ledgerId}:0`,
    });
  });
});
