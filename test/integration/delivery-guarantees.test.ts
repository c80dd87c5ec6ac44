import { describe, it } from 'vitest';
import { AdminApi, parseMessageId, type SubscriptionType, TopicRef } from '../support/admin-fixtures.ts';
import {
  ConsumerApi,
  numbered,
  payloads,
  type ReceivedMessage,
  type TestConsumer,
} from '../support/consumer-fixtures.ts';

// What a subscription delivers (issue 4): fan-out to every subscription, initial positions,
// acknowledgements (individual and cumulative) that stop delivery for good, redelivery requests,
// and PIP-423 end to end: an admin acknowledgement cancels a message wherever it waits (criterion
// 6). Real HTTP against the shared embedded stack.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

function sorted(values: readonly string[]): string[] {
  return [...values].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

function byPayload(messages: readonly ReceivedMessage[], payload: string): ReceivedMessage {
  const found = messages.find((m) => m.payload === payload);
  if (!found) throw new Error(`no message ${payload} among ${payloads(messages).join(',')}`);
  return found;
}

/** A topic with the given subscriptions, created by the admin API at `initialPosition`. */
async function topicWith(
  label: string,
  subscriptions: Record<string, SubscriptionType>,
  initialPosition: 'Earliest' | 'Latest' = 'Earliest',
): Promise<TopicRef> {
  const topic = TopicRef.unique(label);
  await admin.createTopic(topic);
  for (const [name, type] of Object.entries(subscriptions)) {
    await admin.createSubscription(topic, name, { type, initialPosition });
  }
  return topic;
}

describe.concurrent('fan-out and initial positions', () => {
  it('a published message reaches every subscription, whatever its type', async ({ expect }) => {
    const topic = TopicRef.unique('fanout');
    const types: SubscriptionType[] = ['Exclusive', 'Failover', 'Shared', 'Key_Shared'];
    const subscribed = await Promise.all(
      types.map((type) => consumers.subscribe(topic, `sub-${type}`, { subscriptionType: type })),
    );
    await admin.produce(
      topic,
      numbered(5).map((payload, i) => ({ payload, key: `k${i % 2}` })),
    );

    const received = await Promise.all(subscribed.map((consumer) => consumer.receiveN(5, 8000)));

    for (const messages of received) expect(sorted(payloads(messages))).toEqual(numbered(5));
    expect(await admin.backlogs(topic)).toEqual({
      'sub-Exclusive': 5,
      'sub-Failover': 5,
      'sub-Shared': 5,
      'sub-Key_Shared': 5,
    });
  });

  it('admin subscriptions: Latest gets only later messages, Earliest also the backlog', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('adminpos');
    await admin.createTopic(topic);
    await admin.produceMany(topic, 3, 'before');
    await admin.createSubscription(topic, 'latest', { type: 'Shared', initialPosition: 'Latest' });
    await admin.createSubscription(topic, 'earliest', { type: 'Shared', initialPosition: 'Earliest' });
    await admin.produceMany(topic, 2, 'after');
    const latest = await consumers.subscribe(topic, 'latest', { subscriptionType: 'Shared' });
    const earliest = await consumers.subscribe(topic, 'earliest', { subscriptionType: 'Shared' });

    const fromLatest = await latest.receiveN(3, 3000);
    const fromEarliest = await earliest.receiveN(5, 5000);

    expect(sorted(payloads(fromLatest))).toEqual(['after0', 'after1']);
    expect(sorted(payloads(fromEarliest))).toEqual(['after0', 'after1', 'before0', 'before1', 'before2']);
    expect(await admin.backlogs(topic)).toEqual({ latest: 2, earliest: 5 });
  });

  it('consumer subscriptions: Latest (the default) gets only later messages, Earliest also the backlog', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('conspos');
    await admin.produceMany(topic, 3, 'before');
    const latest = await consumers.subscribe(topic, 'latest', { subscriptionType: 'Exclusive' });
    const earliest = await consumers.subscribe(topic, 'earliest', {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    await admin.produceMany(topic, 2, 'after');

    const fromLatest = await latest.receiveN(3, 3000);
    const fromEarliest = await earliest.receiveN(5, 5000);

    expect(payloads(fromLatest)).toEqual(['after0', 'after1']);
    expect(payloads(fromEarliest)).toEqual(['before0', 'before1', 'before2', 'after0', 'after1']);
  });

  it('an existing subscription keeps its position when a consumer asks for another one', async ({
    expect,
  }) => {
    const topic = await topicWith('keeppos', { sub: 'Shared' }, 'Latest');
    await admin.produceMany(topic, 2);
    await admin.expectStatus(204, 'POST', `${topic.adminPath}/subscription/sub/skip/1`);

    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
    });
    const received = await consumer.receiveN(3, 3000);

    expect(payloads(received)).toEqual(['m1']);
  });
});

describe.concurrent('acknowledgements', () => {
  it('a message acknowledged by handle or by id is never received again, even after an ack timeout', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('acknever');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      ackTimeoutMs: 1000,
    });
    await admin.produceMany(topic, 4);
    const first = await consumer.receiveN(4, 5000);
    await consumer.ack([byPayload(first, 'm0')]);
    await consumer.ackIds([byPayload(first, 'm1').messageId]);

    const redelivered = await consumer.receiveForAcking(3000);

    expect(sorted(payloads(first))).toEqual(numbered(4));
    expect(sorted(payloads(redelivered))).toEqual(['m2', 'm3']);
    expect(redelivered.map((m) => m.redeliveryCount)).toEqual([1, 1]);
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it('stats msgBacklog follows the acknowledgements, not the deliveries', async ({ expect }) => {
    const topic = TopicRef.unique('backlog');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.produceMany(topic, 10);
    const received = await consumer.receiveN(10, 5000);
    const afterReceive = await admin.backlogs(topic);

    await consumer.ack(received.slice(0, 3));
    await consumer.ackIds(received.slice(3, 5).map((m) => m.messageId));
    const afterAcks = await admin.backlogs(topic);
    await consumer.ack(received.slice(5));
    const afterAll = await admin.backlogs(topic);

    expect(received).toHaveLength(10);
    expect(afterReceive).toEqual({ sub: 10 });
    expect(afterAcks).toEqual({ sub: 5 });
    expect(afterAll).toEqual({ sub: 0 });
  });

  it.for<SubscriptionType>([
    'Exclusive',
    'Failover',
  ])('a cumulative ack on %s acknowledges everything up to it (markDeletePosition)', async (type, {
    expect,
  }) => {
    const topic = TopicRef.unique('cumulative');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: type });
    const ids = await admin.produceMany(topic, 10);
    const { ledgerId } = parseMessageId(ids[0] as string);
    const received = await consumer.receiveN(10, 5000);

    await consumer.ackCumulative(byPayload(received, 'm6').messageId);
    const cursors = await admin.cursors(topic);
    await consumer.redeliverUnacknowledged();
    const redelivered = await consumer.receiveN(4, 3000);

    expect(payloads(received)).toEqual(numbered(10));
    expect(cursors.sub).toEqual({ markDelete: `${ledgerId}:6`, individual: '[]' });
    expect(await admin.backlogs(topic)).toEqual({ sub: 3 });
    expect(payloads(redelivered)).toEqual(['m7', 'm8', 'm9']);
    expect(redelivered.map((m) => m.redeliveryCount)).toEqual([1, 1, 1]);
  });

  it('a cumulative ack past individual acks folds them into the mark-delete position', async ({ expect }) => {
    const topic = TopicRef.unique('cumfold');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    const ids = await admin.produceMany(topic, 6);
    const { ledgerId } = parseMessageId(ids[0] as string);
    const received = await consumer.receiveN(6, 5000);
    await consumer.ack([byPayload(received, 'm4')]);

    await consumer.ackCumulative(byPayload(received, 'm2').messageId);
    const cursors = await admin.cursors(topic);

    expect(cursors.sub).toEqual({
      markDelete: `${ledgerId}:2`,
      individual: `[(${ledgerId}:3..${ledgerId}:4]]`,
    });
    expect(await admin.backlogs(topic)).toEqual({ sub: 2 });
  });

  it.for<['ack' | 'ack-cumulative' | 'nack', number]>([
    ['ack', 5],
    ['ack-cumulative', 5],
    ['nack', 5],
  ])('%s of a message id not written yet (entry %i) is refused and swallows no later message', async ([
    kind,
    entryId,
  ], { expect }) => {
    const topic = TopicRef.unique('ackfuture');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    const ids = await admin.produceMany(topic, 2);
    const { ledgerId } = parseMessageId(ids[0] as string);
    const early = await consumer.receiveN(2, 5000);
    await consumer.ack(early);

    const futureId = `${ledgerId}:${entryId}:-1`;
    const result =
      kind === 'ack'
        ? await consumer.sendAck({ messageIds: [futureId] })
        : kind === 'nack'
          ? await consumer.sendNack({ messageIds: [futureId] })
          : await consumer.sendAckCumulative(futureId);
    await admin.produceMany(topic, 6, 'late');
    const late = await consumer.receiveN(6, 5000);

    expect(early).toHaveLength(2);
    expect(payloads(late)).toEqual(numbered(6, 'late'));
    expect(result.status).toBe(404);
    expect(result.body).toMatchObject({ reason: expect.stringContaining(`${ledgerId}:${entryId}`) });
  });

  it('redeliver-unacknowledged with handles brings back only the unacknowledged ones, count + 1', async ({
    expect,
  }) => {
    const topic = TopicRef.unique('redeliver');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.produceMany(topic, 4);
    const first = await consumer.receiveN(4, 5000);
    await consumer.ack([byPayload(first, 'm0')]);
    await consumer.ackIds([byPayload(first, 'm1').messageId]);

    await consumer.redeliverUnacknowledged(first);
    const again = await consumer.receiveN(4, 2500);

    expect(sorted(payloads(again))).toEqual(['m2', 'm3']);
    expect(again.map((m) => m.redeliveryCount)).toEqual([1, 1]);
  });

  it("a Shared consumer's unacknowledged messages go to the other consumer when it closes", async ({
    expect,
  }) => {
    const topic = TopicRef.unique('closeshared');
    const leaving = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const staying = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.produceMany(topic, 4);
    const held = await leaving.receiveN(4, 5000);
    await leaving.ack([byPayload(held, 'm0')]);

    await leaving.close();
    const taken = await staying.receiveN(3, 5000);

    expect(held).toHaveLength(4);
    expect(sorted(payloads(taken))).toEqual(['m1', 'm2', 'm3']);
  });

  it("an Exclusive consumer's unacknowledged messages go to the next consumer once it closed", async ({
    expect,
  }) => {
    const topic = TopicRef.unique('closeexcl');
    const first = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    await admin.produceMany(topic, 5);
    const held = await first.receiveN(5, 5000);
    await first.ackCumulative(byPayload(held, 'm1').messageId);

    await first.close();
    const next = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    const taken = await next.receiveN(3, 5000);

    expect(payloads(held)).toEqual(numbered(5));
    expect(payloads(taken)).toEqual(['m2', 'm3', 'm4']);
  });
});

describe.concurrent('PIP-423: an admin acknowledgement cancels the message on that subscription', () => {
  /**
   * Topic with Shared subscriptions `a` (the one acknowledged) and `b` (the witness), each with
   * a consumer subscribed before the two messages `target` and `control` are published.
   */
  async function twoSubscriptions(label: string, policyOfA: Record<string, unknown> = {}) {
    const topic = await topicWith(label, { a: 'Shared', b: 'Shared' });
    const a = await consumers.subscribe(topic, 'a', { subscriptionType: 'Shared', ...policyOfA });
    const b = await consumers.subscribe(topic, 'b', { subscriptionType: 'Shared' });
    return { topic, a, b };
  }

  async function adminAck(topic: TopicRef, messageId: string, subscription: string): Promise<void> {
    const { ledgerId, entryId } = parseMessageId(messageId);
    const result = await admin.acknowledge(topic, { ledgerId, entryId, subscriptionNames: [subscription] });
    if (result.status !== 204)
      throw new Error(`acknowledgeMessage answered ${result.status}: ${result.text}`);
  }

  /** What the witness subscription `b` receives: both messages, sorted. */
  async function witnessed(b: TestConsumer): Promise<string[]> {
    return sorted(payloads(await b.receiveN(2, 6000)));
  }

  it('while it waits in the backlog', async ({ expect }) => {
    const { topic, a, b } = await twoSubscriptions('pipbacklog');
    const [targetId] = await admin.produce(topic, [{ payload: 'target' }, { payload: 'control' }]);
    await adminAck(topic, targetId as string, 'a');

    const received = await a.receiveN(2, 2500);

    expect(payloads(received)).toEqual(['control']);
    expect(await admin.backlogs(topic)).toEqual({ a: 1, b: 2 });
    expect(await witnessed(b)).toEqual(['control', 'target']);
  });

  it('while it is delayed and not yet due', async ({ expect }) => {
    const { topic, a, b } = await twoSubscriptions('pipdelayed');
    const publishedAt = Date.now();
    const [targetId] = await admin.produce(topic, [
      { payload: 'target', deliverAfterMs: 3000 },
      { payload: 'control', deliverAfterMs: 3000 },
    ]);
    await adminAck(topic, targetId as string, 'a');

    const received = await a.receiveN(2, publishedAt + 5000 - Date.now());

    expect(payloads(received)).toEqual(['control']);
    expect(received[0]?.receivedAtMs).toBeGreaterThanOrEqual(publishedAt + 3000);
    expect(await witnessed(b)).toEqual(['control', 'target']);
  });

  it('while it waits for a nack redelivery (2 s backoff)', async ({ expect }) => {
    const { topic, a, b } = await twoSubscriptions('pipnack', {
      negativeAckRedeliveryBackoff: { minDelayMs: 2000, maxDelayMs: 4000, multiplier: 2 },
    });
    const [targetId] = await admin.produce(topic, [{ payload: 'target' }, { payload: 'control' }]);
    const delivered = await a.receiveN(2, 5000);
    const nackedAt = Date.now();
    await a.nack(delivered);
    await adminAck(topic, targetId as string, 'a');

    const redelivered = await a.receiveN(2, 4500);

    expect(sorted(payloads(delivered))).toEqual(['control', 'target']);
    expect(payloads(redelivered)).toEqual(['control']);
    expect(redelivered[0]?.redeliveryCount).toBe(1);
    expect(redelivered[0]?.receivedAtMs).toBeGreaterThanOrEqual(nackedAt + 2000);
    expect(await witnessed(b)).toEqual(['control', 'target']);
  });

  it('while it waits for an ack-timeout redelivery (ackTimeoutMs 1000)', async ({ expect }) => {
    const { topic, a, b } = await twoSubscriptions('pipacktimeout', { ackTimeoutMs: 1000 });
    const [targetId] = await admin.produce(topic, [{ payload: 'target' }, { payload: 'control' }]);
    const delivered = await a.receiveN(2, 5000);
    await adminAck(topic, targetId as string, 'a');

    const redelivered = await a.receiveForAcking(3500);

    expect(sorted(payloads(delivered))).toEqual(['control', 'target']);
    expect(payloads(redelivered)).toEqual(['control']);
    expect(redelivered[0]?.redeliveryCount).toBe(1);
    expect(await witnessed(b)).toEqual(['control', 'target']);
  });
});
