import { describe, expect, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi, type TimedMessage } from '../support/consumer-fixtures.ts';

// Issue 24, criterion 3, over HTTP: an operator moves one waiting message's due time.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

const reschedule = (topic: TopicRef, body: unknown, query = '') =>
  admin.send('POST', `${topic.adminPath}/subscription/sub/reschedule${query}`, { body });

async function scheduledOf(topic: TopicRef) {
  return (
    (await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/scheduled`)).body as {
      messages: { messageId: string; dueAt: number; reason: string }[];
    }
  ).messages;
}

/** A Shared consumer with a 120 s nack backoff that received and nacked `count` messages. */
async function nacked(count: number, partitions = 0) {
  const topic = TopicRef.unique('resched');
  if (partitions > 0) await admin.createTopic(topic, partitions);
  const consumer = await consumers.subscribe(topic, 'sub', {
    subscriptionType: 'Shared',
    negativeAckRedeliveryDelayMs: 120_000,
  });
  await admin.produce(
    topic,
    Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, key: `k${i}` })),
  );
  const got: TimedMessage[] = [];
  for (let poll = 0; poll < 20 && got.length < count; poll++) got.push(...(await consumer.receive(count)));
  await consumer.nack(got);
  return { topic, consumer, got };
}

describe('POST .../subscription/{sub}/reschedule', () => {
  it('earlier than the policy only when asked; dry run changes nothing; then it is delivered at the new time', async () => {
    const { topic, consumer, got } = await nacked(1);
    const id = got[0]?.messageId as string;
    const [before] = await scheduledOf(topic);
    expect(before).toMatchObject({ messageId: id, reason: 'nack' });

    const soon = Date.now() + 1_500;
    const refused = await reschedule(topic, { messageId: id, deliverAt: soon });
    expect(refused.status).toBe(412);
    expect((refused.body as { reason: string }).reason).toMatch(/earlier=true/);
    const dry = await reschedule(topic, { messageId: id, deliverAt: soon, earlier: true }, '?dryRun=true');
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      messageId: id,
      subscription: 'sub',
      from: before?.dueAt,
      deliverAt: soon,
      redeliveryCount: 1,
      dryRun: true,
    });
    expect(await scheduledOf(topic)).toEqual([before]);

    const done = await reschedule(topic, { messageId: id, deliverAt: soon, earlier: true });
    expect(done.status).toBe(200);
    expect(await scheduledOf(topic)).toEqual([{ ...before, dueAt: soon, reason: 'rescheduled' }]);
    const again = await consumer.receiveN(1, 8_000, 250);
    expect(again.map((m) => [m.messageId, m.redeliveryCount])).toEqual([[id, 1]]);
    // Never early: SQS rounds the ring up to whole seconds, the engine judges the due time.
    expect(again[0]?.receivedAtMs).toBeGreaterThanOrEqual(soon);

    const audit = (await admin.expectStatus(200, 'GET', `${topic.adminPath}/acknowledgeMessage/audit`))
      .body as { operation?: string; outcome: string; dryRun: boolean }[];
    expect(
      audit.filter((r) => r.operation === 'reschedule').map((r) => [r.dryRun, r.outcome.split(' ')[0]]),
    ).toEqual([
      [false, 'rescheduled'],
      [true, 'dry'],
      [false, 'refused:'],
    ]);
  });

  it('later than the policy needs no flag; on a partitioned topic the id names its partition', async () => {
    const { topic, got } = await nacked(3, 3);
    const target = got.find((m) => !m.messageId.endsWith(':0')) as TimedMessage;
    const later = Date.now() + 3_600_000;
    expect((await reschedule(topic, { messageId: target.messageId, deliverAt: later })).status).toBe(200);
    const listed = await scheduledOf(topic);
    expect(listed.at(-1)).toMatchObject({ messageId: target.messageId, dueAt: later, reason: 'rescheduled' });
    expect(listed).toHaveLength(3);
  });

  it('400 in the past or a bad body; 409 when held; 404 for an unknown message', async () => {
    const topic = TopicRef.unique('reschedbad');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const [heldId] = await admin.produce(topic, [{ payload: 'a' }, { payload: 'b' }]);
    await consumer.receive(1);
    const future = Date.now() + 60_000;
    const cases: [unknown, number, RegExp][] = [
      [{ messageId: heldId, deliverAt: Date.now() - 1_000 }, 400, /in the past/],
      [{ messageId: heldId }, 400, /deliverAt must be epoch milliseconds/],
      [{ messageId: heldId, deliverAt: future, later: true }, 400, /unknown field later/],
      [{ messageId: heldId, deliverAt: future }, 409, /held by consumer/],
      [{ messageId: 'x:y', deliverAt: future }, 412, /ledgerId/],
      [
        { messageId: `${(heldId as string).split(':').slice(0, 2).join(':')}:3`, deliverAt: future },
        412,
        /names partition 3/,
      ],
      [{ messageId: `${(heldId as string).split(':')[0]}:999`, deliverAt: future }, 404, /not found/],
    ];
    for (const [body, status, reason] of cases) {
      const result = await reschedule(topic, body);
      expect([status, result.status, (result.body as { reason: string }).reason]).toEqual([
        status,
        status,
        expect.stringMatching(reason),
      ]);
    }
  });
});
