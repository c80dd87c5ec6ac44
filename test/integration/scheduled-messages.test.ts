import { describe, expect, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi, type TimedMessage } from '../support/consumer-fixtures.ts';

// Issue 24, criterion 1, over HTTP on the shared embedded stack: what waits on a subscription.

interface ScheduledBody {
  readonly messages: {
    readonly messageId: string;
    readonly dueAt: number;
    readonly reason: string;
    readonly redeliveryCount: number;
    readonly consumer: string | null;
    readonly size: number;
  }[];
  readonly nextPageToken?: string;
}

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();
const MINUTE = 60_000;

async function scheduled(topic: TopicRef, query = ''): Promise<ScheduledBody> {
  const result = await admin.expectStatus(
    200,
    'GET',
    `${topic.adminPath}/subscription/sub/scheduled${query}`,
  );
  return result.body as ScheduledBody;
}

/** Receives until `count` messages came (short polls). */
async function receiveAll(consumer: { receive(max: number): Promise<TimedMessage[]> }, count: number) {
  const got: TimedMessage[] = [];
  for (let poll = 0; poll < 20 && got.length < count; poll++)
    got.push(...(await consumer.receive(count - got.length)));
  return got;
}

describe('GET .../subscription/{sub}/scheduled', () => {
  it('the issue: 20 published, 3 delayed by 10 minutes, 5 received: the 3 are listed and counted', async () => {
    const topic = TopicRef.unique('sched');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 120_000,
    });
    const deliverAt = Date.now() + 10 * MINUTE;
    const delayed = new Set([1, 9, 15]);
    const ids = await admin.produce(
      topic,
      Array.from({ length: 20 }, (_, i) => ({
        payload: `message-${i}`,
        ...(delayed.has(i) ? { deliverAt: deliverAt + i } : {}),
      })),
    );
    const got = await receiveAll(consumer, 5);
    expect(got).toHaveLength(5);
    await consumer.nack([got[0] as TimedMessage]);

    const page = await scheduled(topic);

    const nacked = page.messages.find((m) => m.messageId === got[0]?.messageId);
    // The consumer it last went to: the one that nacked it.
    expect(nacked).toMatchObject({ reason: 'nack', redeliveryCount: 1, consumer: consumer.id, size: 9 });
    expect(page.messages.filter((m) => m.reason === 'delayed')).toEqual(
      [1, 9, 15].map((i) => ({
        messageId: ids[i],
        dueAt: deliverAt + i,
        reason: 'delayed',
        redeliveryCount: 0,
        consumer: null,
        size: Buffer.byteLength(`message-${i}`),
      })),
    );
    expect(page.messages.map((m) => m.dueAt)).toEqual(
      [...page.messages.map((m) => m.dueAt)].sort((a, b) => a - b),
    );
    const stats = await admin.stats(topic);
    expect(stats.subscriptions.sub).toMatchObject({ msgDelayed: 3 });

    // Cancelled (PIP-423's acknowledgeMessage): no longer waits, no longer counted.
    const [ledgerId, entryId] = (ids[9] as string).split(':');
    await admin.expectStatus(
      204,
      'POST',
      `${topic.adminPath}/acknowledgeMessage?ledgerId=${ledgerId}&entryId=${entryId}&subscriptionNames=sub`,
    );
    const after = await scheduled(topic, '?histogram=3600');
    expect(after).toMatchObject({ bucketSeconds: 3600, total: 3 });
    expect((await admin.stats(topic)).subscriptions.sub).toMatchObject({ msgDelayed: 2 });
  });

  it('names the consumer each entry last went to: the nacking one, the one that went, the holder', async () => {
    const topic = TopicRef.unique('schedwho');
    const nacker = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 600_000,
    });
    const leaver = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const holder = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      ackTimeoutMs: 600_000,
    });
    await admin.produce(
      topic,
      Array.from({ length: 3 }, (_, i) => ({ payload: `w${i}` })),
    );
    const [nacked] = await receiveAll(nacker, 1);
    const [left] = await receiveAll(leaver, 1);
    const [held] = await receiveAll(holder, 1);
    await nacker.nack([nacked as TimedMessage]);
    await leaver.close();

    const byId = new Map((await scheduled(topic)).messages.map((m) => [m.messageId, m]));

    expect(byId.get(nacked?.messageId as string)).toMatchObject({ reason: 'nack', consumer: nacker.id });
    expect(byId.get(left?.messageId as string)).toMatchObject({
      reason: 'consumerGone',
      consumer: leaver.id,
    });
    expect(byId.get(held?.messageId as string)).toMatchObject({ reason: 'ackTimeout', consumer: holder.id });
    // Rescheduled, it keeps the consumer it last went to.
    await admin.expectStatus(200, 'POST', `${topic.adminPath}/subscription/sub/reschedule`, {
      body: { messageId: left?.messageId, deliverAt: Date.now() + 3_600_000 },
    });
    const moved = (await scheduled(topic)).messages.find((m) => m.messageId === left?.messageId);
    expect(moved).toMatchObject({ reason: 'rescheduled', consumer: leaver.id });
  });

  it('pages with limit and pageToken, and bounds with from and until', async () => {
    const topic = TopicRef.unique('schedpage');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'sub', { type: 'Shared', initialPosition: 'Earliest' });
    const base = Date.now() + 10 * MINUTE;
    const ids = await admin.produce(
      topic,
      Array.from({ length: 7 }, (_, i) => ({ payload: 'x', deliverAt: base + (6 - i) * 1000 })),
    );
    const first = await scheduled(topic, '?limit=3');
    const second = await scheduled(topic, `?limit=3&pageToken=${first.nextPageToken}`);
    const third = await scheduled(topic, `?limit=3&pageToken=${second.nextPageToken}`);
    expect([...first.messages, ...second.messages, ...third.messages].map((m) => m.messageId)).toEqual(
      [...ids].reverse(),
    );
    expect(third.nextPageToken).toBeUndefined();
    const window = await scheduled(topic, `?from=${base + 1000}&until=${base + 2000}`);
    expect(window.messages.map((m) => m.messageId)).toEqual([ids[5], ids[4]]);
  });

  it.each([
    ['?limit=0', /limit must be an integer >= 1/],
    ['?limit=1001', /limit must be at most 1000/],
    ['?from=yesterday', /from \(epoch ms\) must be an integer/],
    ['?from=10&until=5', /until \(5\) is before from \(10\)/],
    ['?histogram=0', /histogram \(bucket seconds\) must be an integer >= 1/],
    ['?pageToken=bm9wZQ', /not a token this API gave/],
    ['?limt=5', /Unknown query parameter limt/],
  ])('%s: 400 with a reason', async (query, reason) => {
    const topic = TopicRef.unique('schedbad');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'sub', { type: 'Shared', initialPosition: 'Earliest' });
    const result = await admin.send('GET', `${topic.adminPath}/subscription/sub/scheduled${query}`);
    expect(result.status).toBe(400);
    expect((result.body as { reason: string }).reason).toMatch(reason);
  });

  it('404 for a subscription that does not exist', async () => {
    const topic = TopicRef.unique('schednone');
    await admin.createTopic(topic);
    const result = await admin.send('GET', `${topic.adminPath}/subscription/nobody/scheduled`);
    expect(result.status).toBe(404);
  });
});

describe('GET .../subscription/{sub}/pending', () => {
  it('lists what each consumer holds and when it comes back, filtered by ?consumer=', async () => {
    const topic = TopicRef.unique('pending');
    const timed = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      ackTimeoutMs: 5_000,
    });
    const other = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.produce(
      topic,
      Array.from({ length: 4 }, (_, i) => ({ payload: `p${i}` })),
    );
    const a = await receiveAll(timed, 2);
    const b = await receiveAll(other, 2);
    const all = (await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/pending`))
      .body as {
      messages: { messageId: string; consumer: string; comesBackBecause: string; comesBackAt: number }[];
    };
    expect(all.messages.map((m) => [m.messageId, m.consumer]).sort()).toEqual(
      [...a.map((m) => [m.messageId, timed.id]), ...b.map((m) => [m.messageId, other.id])].sort(),
    );
    expect(all.messages.filter((m) => m.consumer === timed.id).map((m) => m.comesBackBecause)).toEqual([
      'ackTimeout',
      'ackTimeout',
    ]);
    expect(all.messages.filter((m) => m.consumer === other.id).map((m) => m.comesBackBecause)).toEqual([
      'lease',
      'lease',
    ]);
    const mine = (
      await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/pending?consumer=${other.id}`)
    ).body as { messages: { messageId: string }[] };
    expect(mine.messages.map((m) => m.messageId).sort()).toEqual(b.map((m) => m.messageId).sort());
  });
});
