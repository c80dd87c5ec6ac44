import { describe, expect, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi, type TimedMessage } from '../support/consumer-fixtures.ts';

// Issue 24, criteria 3 and 5, over HTTP: a delayed message the dispatcher has not reached yet
// (no consumer has received past it) is rescheduled through an override the dispatcher honours,
// and its preview starts at its deliverAt.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();
const MINUTE = 60_000;

interface Listed {
  readonly messageId: string;
  readonly dueAt: number;
  readonly reason: string;
  readonly redeliveryCount: number;
  readonly consumer: string | null;
}

const reschedule = (topic: TopicRef, body: unknown, query = '') =>
  admin.send('POST', `${topic.adminPath}/subscription/sub/reschedule${query}`, { body });

async function scheduledOf(topic: TopicRef): Promise<Listed[]> {
  return (
    (await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/scheduled`)).body as {
      messages: Listed[];
    }
  ).messages;
}

describe('reschedule of a message the dispatcher has not reached', () => {
  it('moves its due time on a partitioned topic: earlier only when asked, dry run, audited, never early', async () => {
    const topic = TopicRef.unique('reschedund');
    await admin.createTopic(topic, 2);
    await admin.createSubscription(topic, 'sub', { type: 'Shared', initialPosition: 'Earliest' });
    const deliverAt = Date.now() + 10 * MINUTE;
    const ids = await admin.produce(
      topic,
      Array.from({ length: 4 }, (_, i) => ({ payload: `d${i}`, key: `k${i}`, deliverAt: deliverAt + i })),
    );
    const early = ids.find((id) => id.endsWith(':1')) as string;
    const late = ids.find((id) => id !== early) as string;
    const before = await scheduledOf(topic);
    expect(before.map((m) => [m.messageId, m.reason])).toEqual(ids.map((id) => [id, 'delayed']));
    const soon = Date.now() + 2_000;

    const refused = await reschedule(topic, { messageId: early, deliverAt: soon });
    const dry = await reschedule(topic, { messageId: early, deliverAt: soon, earlier: true }, '?dryRun=true');
    const afterDry = await scheduledOf(topic);
    const done = await reschedule(topic, { messageId: early, deliverAt: soon, earlier: true });
    const later = deliverAt + 60 * MINUTE;
    const pushed = await reschedule(topic, { messageId: late, deliverAt: later });
    const listed = await scheduledOf(topic);

    expect([refused.status, (refused.body as { reason: string }).reason]).toEqual([
      412,
      expect.stringMatching(/earlier=true/),
    ]);
    const earlyDeliverAt = before.find((m) => m.messageId === early)?.dueAt;
    expect([dry.status, dry.body]).toEqual([
      200,
      {
        messageId: early,
        subscription: 'sub',
        from: earlyDeliverAt,
        deliverAt: soon,
        redeliveryCount: 0,
        dryRun: true,
      },
    ]);
    expect(afterDry).toEqual(before);
    expect([done.status, pushed.status]).toEqual([200, 200]);
    expect(listed[0]).toEqual({
      ...before.find((m) => m.messageId === early),
      dueAt: soon,
      reason: 'rescheduled',
    });
    expect(listed.at(-1)).toMatchObject({
      messageId: late,
      dueAt: later,
      reason: 'rescheduled',
      consumer: null,
    });
    expect(listed).toHaveLength(4);

    // A consumer now: the moved message comes at its new time, never before; the others wait.
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const got = await consumer.receiveN(1, 10_000, 250);
    expect(got.map((m) => [m.messageId, m.redeliveryCount])).toEqual([[early, 0]]);
    expect(got[0]?.receivedAtMs).toBeGreaterThanOrEqual(soon);
    expect(await consumer.receive(10)).toEqual([]);
    // Passed by the dispatcher, the pushed one keeps the operator's time (and its reason).
    const after = await scheduledOf(topic);
    expect(after.map((m) => [m.messageId, m.reason])).toEqual([
      ...ids.filter((id) => id !== early && id !== late).map((id) => [id, 'delayed']),
      [late, 'rescheduled'],
    ]);
    expect(after.at(-1)?.dueAt).toBe(later);
    const audit = (await admin.expectStatus(200, 'GET', `${topic.adminPath}/acknowledgeMessage/audit`))
      .body as { operation?: string; outcome: string; dryRun: boolean }[];
    expect(
      audit.filter((r) => r.operation === 'reschedule').map((r) => [r.dryRun, r.outcome.split(' ')[0]]),
    ).toEqual([
      [false, 'rescheduled'],
      [false, 'rescheduled'],
      [true, 'dry'],
      [false, 'refused:'],
    ]);
  });

  it('on Exclusive (first deliveries in log order, deliverAt ignored) it answers 409 with why', async () => {
    const topic = TopicRef.unique('reschedexcl');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'sub', { type: 'Exclusive', initialPosition: 'Earliest' });
    const [id] = await admin.produce(topic, [{ payload: 'x', deliverAt: Date.now() + MINUTE }]);

    const result = await reschedule(topic, { messageId: id, deliverAt: Date.now() + 2 * MINUTE });

    expect([result.status, (result.body as { reason: string }).reason]).toEqual([
      409,
      expect.stringMatching(/not dispatched on sub yet.*Exclusive or Failover/),
    ]);
  });
});

describe('preview of a delayed message', () => {
  it('starts from its deliverAt (or the due time an operator set), not from now', async () => {
    const topic = TopicRef.unique('previewdelayed');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 30_000,
    });
    const deliverAt = Date.now() + 10 * MINUTE;
    const [reached, , unreached] = await admin.produce(topic, [
      { payload: 'a', deliverAt },
      { payload: 'now' },
      { payload: 'b', deliverAt: deliverAt + 1 },
    ]);
    // One receive of one message passes the first (released to the tracker) and stops at the
    // second (handed out): the third stays unreached.
    const got: TimedMessage[] = [];
    for (let poll = 0; poll < 10 && got.length < 1; poll++) got.push(...(await consumer.receive(1)));
    expect(got.map((m) => m.payload)).toEqual(['now']);
    const preview = async (id: string) =>
      (
        await admin.expectStatus(
          200,
          'GET',
          `${topic.adminPath}/subscription/sub/preview?messageId=${id}&consumer=${consumer.id}&count=2`,
        )
      ).body as { redeliveryCount: number; nack: { redeliveryCount: number; earliestMs: number }[] };

    const steps = (at: number) => [
      { redeliveryCount: 0, earliestMs: at, latestMs: at },
      { redeliveryCount: 1, earliestMs: at + 30_000, latestMs: at + 30_000 },
    ];
    expect(await preview(unreached as string)).toMatchObject({
      redeliveryCount: 0,
      nack: steps(deliverAt + 1),
    });
    expect(await preview(reached as string)).toMatchObject({ redeliveryCount: 0, nack: steps(deliverAt) });
    const moved = Date.now() + 20 * MINUTE;
    await admin.expectStatus(200, 'POST', `${topic.adminPath}/subscription/sub/reschedule`, {
      body: { messageId: unreached, deliverAt: moved },
    });
    expect(await preview(unreached as string)).toMatchObject({ nack: steps(moved) });
  });
});
