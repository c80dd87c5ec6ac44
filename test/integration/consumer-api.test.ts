import { describe, expect, it } from 'vitest';
import { AdminApi, type SubscriptionType, TopicRef, uniqueRole } from '../support/admin-fixtures.ts';
import { ConsumerApi, type SubscribeBody, subscribePath } from '../support/consumer-fixtures.ts';

// Every status code of the consumer API of issue 4 (subscribe, receive, ack, cumulative ack, nack,
// redeliver-unacknowledged, close), over real HTTP against the shared embedded stack.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

function reasonOf(body: unknown): string {
  return (body as { reason?: unknown } | undefined)?.reason as string;
}

describe('subscribe', () => {
  it('answers 200 with a consumer id, creating the missing topic and subscription with its type', async () => {
    const topic = TopicRef.unique('sub200');

    const result = await consumers.sendSubscribe(topic, 'orders', {
      subscriptionType: 'Key_Shared',
      consumerName: 'c-1',
    });
    const stats = await admin.stats(topic);

    expect(result.status).toBe(200);
    expect(result.body).toEqual({ consumerId: expect.stringMatching(/^[A-Za-z0-9_-]{1,64}$/) });
    expect(stats.subscriptions.orders).toMatchObject({ type: 'Key_Shared', msgBacklog: 0 });
  });

  it('joins an existing subscription of the same type', async () => {
    const topic = TopicRef.unique('subjoin');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'shared', { type: 'Shared' });
    await admin.produceMany(topic, 2);

    const first = await consumers.sendSubscribe(topic, 'shared', { subscriptionType: 'Shared' });
    const second = await consumers.sendSubscribe(topic, 'shared', { subscriptionType: 'Shared' });

    expect([first.status, second.status]).toEqual([200, 200]);
    expect((first.body as { consumerId: string }).consumerId).not.toBe(
      (second.body as { consumerId: string }).consumerId,
    );
    expect(await admin.backlogs(topic)).toEqual({ shared: 2 });
  });

  const multiplier = (params: Record<string, number>) => ({ minDelayMs: 1000, maxDelayMs: 4000, ...params });
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['ackTimeoutMs 1', { ackTimeoutMs: 1 }, /ackTimeoutMs/],
    ['ackTimeoutMs 999', { ackTimeoutMs: 999 }, /ackTimeoutMs/],
    [
      'an ack-timeout backoff multiplier of 1',
      { ackTimeoutMs: 1000, ackTimeoutRedeliveryBackoff: multiplier({ multiplier: 1 }) },
      /multiplier/,
    ],
    [
      'a nack backoff multiplier of 0.5',
      { negativeAckRedeliveryBackoff: multiplier({ multiplier: 0.5 }) },
      /multiplier/,
    ],
    [
      'a nack backoff whose maxDelayMs is below its minDelayMs',
      { negativeAckRedeliveryBackoff: { minDelayMs: 2000, maxDelayMs: 1000, multiplier: 2 } },
      /maxDelayMs/,
    ],
    [
      'an ack-timeout backoff without an ack timeout',
      { ackTimeoutRedeliveryBackoff: multiplier({ multiplier: 2 }) },
      /ackTimeoutMs/,
    ],
    [
      'deadLetterPolicy.maxRedeliverCount 0',
      { deadLetterPolicy: { maxRedeliverCount: 0 } },
      /maxRedeliverCount/,
    ],
    [
      'deadLetterPolicy.maxRedeliverCount -1',
      { deadLetterPolicy: { maxRedeliverCount: -1 } },
      /maxRedeliverCount/,
    ],
    [
      'an unknown backoff className',
      { negativeAckRedeliveryBackoff: { className: 'com.example.NoSuchBackoff', params: {} } },
      /NoSuchBackoff/,
    ],
    [
      'a backoff class with an unknown parameter',
      { negativeAckRedeliveryBackoff: { className: 'FixedRedeliveryBackoff', params: { delay: 5 } } },
      /delay/,
    ],
    [
      'both a fixed nack delay and a nack backoff',
      { negativeAckRedeliveryDelayMs: 1000, negativeAckRedeliveryBackoff: multiplier({ multiplier: 2 }) },
      /negativeAckRedeliveryDelayMs.*negativeAckRedeliveryBackoff/,
    ],
    ['a negative nack delay', { negativeAckRedeliveryDelayMs: -1 }, /negativeAckRedeliveryDelayMs/],
    [
      'a dead-letter topic that is not persistent',
      { deadLetterPolicy: { maxRedeliverCount: 1, deadLetterTopic: 'non-persistent://a/b/c' } },
      /persistent/,
    ],
  ])('answers 400 with a reason for %s, creating nothing', async (_label, policy, reason) => {
    const topic = TopicRef.unique('sub400');

    const result = await consumers.sendSubscribe(topic, 'sub', { subscriptionType: 'Shared', ...policy });
    const stats = await admin.send('GET', `${topic.adminPath}/stats`);

    expect(result.status).toBe(400);
    expect(reasonOf(result.body)).toMatch(reason);
    expect(stats.status).toBe(404);
  });

  it.each<[string, unknown, RegExp]>([
    ['an unknown subscription type', { subscriptionType: 'shared' }, /subscription type/i],
    [
      'an unknown initial position',
      { subscriptionType: 'Shared', subscriptionInitialPosition: 'Middle' },
      /subscriptionInitialPosition/,
    ],
    ['an unknown field', { subscriptionType: 'Shared', priorityLevel: 1 }, /priorityLevel|unrecognized/i],
    ['a fractional ackTimeoutMs', { subscriptionType: 'Shared', ackTimeoutMs: 1000.5 }, /ackTimeoutMs/],
    ['a body that is not an object', [1, 2], /body|expected object/i],
  ])('answers 400 for %s', async (_label, body, reason) => {
    const topic = TopicRef.unique('sub400b');

    const result = await consumers.sendSubscribe(topic, 'sub', body);

    expect(result.status).toBe(400);
    expect(reasonOf(result.body)).toMatch(reason);
  });

  it.each<[SubscriptionType, SubscriptionType]>([
    ['Shared', 'Exclusive'],
    ['Exclusive', 'Failover'],
    ['Key_Shared', 'Shared'],
  ])('answers 409 when the subscription is %s and a %s consumer joins', async (existing, joining) => {
    const topic = TopicRef.unique('sub409');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'sub', { type: existing });

    const result = await consumers.sendSubscribe(topic, 'sub', { subscriptionType: joining });
    const stats = await admin.stats(topic);

    expect(result.status).toBe(409);
    expect(reasonOf(result.body)).toContain(existing);
    expect(stats.subscriptions.sub?.type).toBe(existing);
  });

  it('answers 409 to a second consumer on an Exclusive subscription, 200 once the first closed', async () => {
    const topic = TopicRef.unique('excl409');
    const first = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });

    const second = await consumers.sendSubscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    await first.close();
    const third = await consumers.sendSubscribe(topic, 'sub', { subscriptionType: 'Exclusive' });

    expect(second.status).toBe(409);
    expect(reasonOf(second.body)).toMatch(/Exclusive/);
    expect(third.status).toBe(200);
  });

  it('answers 401 without a token, creating nothing', async () => {
    const topic = TopicRef.unique('sub401');

    const result = await consumers
      .withToken(undefined)
      .sendSubscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const stats = await admin.send('GET', `${topic.adminPath}/stats`);

    expect(result.status).toBe(401);
    expect(stats.status).toBe(404);
  });

  it('answers 403 to a role without consume (even with produce), 200 once consume is granted', async () => {
    const topic = TopicRef.unique('sub403');
    await admin.createTopic(topic);
    const role = uniqueRole('producer');
    await admin.grant(topic, role, ['produce', 'acknowledge_message']);
    const asRole = consumers.as(role);

    const refused = await asRole.sendSubscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.grant(topic, role, ['produce', 'consume']);
    const allowed = await asRole.sendSubscribe(topic, 'sub', { subscriptionType: 'Shared' });

    expect(refused.status).toBe(403);
    expect(reasonOf(refused.body)).toMatch(/consume/);
    expect(allowed.status).toBe(200);
  });

  it('accepts consume granted on the namespace', async () => {
    const topic = TopicRef.unique('subns');
    const role = uniqueRole('nsconsumer');
    await admin.grantOnNamespace(topic.namespace, role, ['consume']);

    const result = await consumers.as(role).sendSubscribe(topic, 'sub', { subscriptionType: 'Failover' });

    expect(result.status).toBe(200);
  });

  it('answers 404 for a route under another domain', async () => {
    const topic = TopicRef.unique('subdomain');
    const path = subscribePath(topic, 'sub').replace('/persistent/', '/durable/');

    const result = await consumers.send('POST', path, { body: { subscriptionType: 'Shared' } });

    expect(result.status).toBe(404);
  });
});

describe('produce authorization', () => {
  it('answers 403 to a role holding consume only, and 200 with produce', async () => {
    const topic = TopicRef.unique('prod403');
    await admin.createTopic(topic);
    const role = uniqueRole('consumer');
    await admin.grant(topic, role, ['consume']);
    const asRole = admin.as(role);

    const refused = await asRole.send('POST', topic.producePath, { body: { messages: [{ payload: 'x' }] } });
    await admin.grant(topic, role, ['consume', 'produce']);
    const allowed = await asRole.send('POST', topic.producePath, { body: { messages: [{ payload: 'x' }] } });

    expect(refused.status).toBe(403);
    expect(allowed.status).toBe(200);
    expect((await admin.stats(topic)).msgInCounter).toBe(1);
  });
});

describe('receive', () => {
  it('answers 200 with the messages in the documented shape', async () => {
    const topic = TopicRef.unique('recv200');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    const [id] = await admin.produce(topic, [
      { payload: 'hello', key: 'k1', properties: { a: '1' }, eventTime: 1_700_000_000_000 },
    ]);

    const result = await consumer.sendReceive({ maxMessages: 5, waitMs: 2000 });

    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      messages: [
        {
          messageId: id,
          payload: 'hello',
          key: 'k1',
          properties: { a: '1' },
          redeliveryCount: 0,
          publishTime: expect.any(Number),
          eventTime: 1_700_000_000_000,
          // The publishing role's name: the request named no producer.
          producerName: 'admin',
          deliveryHandle: expect.any(String),
        },
      ],
    });
  });

  it('answers 200 with no messages when nothing is waiting, after waiting about waitMs', async () => {
    const topic = TopicRef.unique('recvempty');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const started = Date.now();

    const result = await consumer.sendReceive({ maxMessages: 1, waitMs: 1000 });
    const elapsedMs = Date.now() - started;

    expect(result.status).toBe(200);
    expect(result.body).toEqual({ messages: [] });
    expect(elapsedMs).toBeGreaterThanOrEqual(900);
    expect(elapsedMs).toBeLessThan(4000);
  });

  it('returns no more than maxMessages', async () => {
    const topic = TopicRef.unique('recvmax');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    await admin.produceMany(topic, 5);

    const messages = await consumer.receive(2, 1000);

    expect(messages.length).toBeGreaterThan(0);
    expect(messages.length).toBeLessThanOrEqual(2);
  });

  it.each([
    ['maxMessages=0', { maxMessages: 0 }, /maxMessages/],
    ['maxMessages=101', { maxMessages: 101 }, /maxMessages/],
    ['maxMessages=abc', { maxMessages: 'abc' }, /maxMessages/],
    ['waitMs=20001', { waitMs: 20001 }, /waitMs/],
    ['waitMs=-1', { waitMs: -1 }, /waitMs/],
  ])('answers 400 for %s', async (_label, query, reason) => {
    const topic = TopicRef.unique('recv400');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });

    const result = await consumer.sendReceive(query);

    expect(result.status).toBe(400);
    expect(reasonOf(result.body)).toMatch(reason);
  });
});

describe('acknowledgements and redelivery requests', () => {
  async function consumerWithMessages(type: SubscriptionType, body: Partial<SubscribeBody> = {}) {
    const topic = TopicRef.unique('ackcodes');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: type, ...body });
    await admin.produceMany(topic, 3);
    const messages = await consumer.receiveN(3, 5000);
    if (messages.length !== 3) throw new Error(`expected 3 messages, received ${messages.length}`);
    return { topic, consumer, messages };
  }

  it('ack answers 204 by delivery handle and by message id', async () => {
    const { topic, consumer, messages } = await consumerWithMessages('Shared');

    const byHandle = await consumer.sendAck({ deliveryHandles: [messages[0]?.deliveryHandle as string] });
    const byId = await consumer.sendAck({ messageIds: [messages[1]?.messageId as string] });

    expect([byHandle.status, byId.status]).toEqual([204, 204]);
    expect(byHandle.text).toBe('');
    expect(await admin.backlogs(topic)).toEqual({ sub: 1 });
  });

  it.each<[string, unknown]>([
    ['an empty body', undefined],
    ['empty lists', { messageIds: [], deliveryHandles: [] }],
    ['a message id that is not L:E:P', { messageIds: ['not-an-id'] }],
    ['a forged delivery handle', { deliveryHandles: ['Zm9yZ2Vk'] }],
    ['an unknown field', { messageId: '1:0:-1' }],
  ])('ack answers 400 for %s', async (_label, body) => {
    const { topic, consumer } = await consumerWithMessages('Shared');

    const result = await consumer.api.send(
      'POST',
      `${consumer.path}/ack`,
      body === undefined ? {} : { body },
    );

    expect(result.status).toBe(400);
    expect(reasonOf(result.body)).toEqual(expect.any(String));
    expect(await admin.backlogs(topic)).toEqual({ sub: 3 });
  });

  it('ack answers 400 for a delivery handle of another subscription', async () => {
    const { consumer: other, messages } = await consumerWithMessages('Shared');
    const { topic, consumer } = await consumerWithMessages('Shared');

    const result = await consumer.sendAck({ deliveryHandles: [messages[0]?.deliveryHandle as string] });

    expect(other.id).not.toBe(consumer.id);
    expect(result.status).toBe(400);
    expect(await admin.backlogs(topic)).toEqual({ sub: 3 });
  });

  it.each<SubscriptionType>(['Exclusive', 'Failover'])('ack-cumulative answers 204 on %s', async (type) => {
    const { topic, consumer, messages } = await consumerWithMessages(type);

    const result = await consumer.sendAckCumulative(messages[1]?.messageId as string);

    expect(result.status).toBe(204);
    expect(await admin.backlogs(topic)).toEqual({ sub: 1 });
  });

  it.each<SubscriptionType>([
    'Shared',
    'Key_Shared',
  ])('ack-cumulative answers 412 on %s, acknowledging nothing', async (type) => {
    const { topic, consumer, messages } = await consumerWithMessages(type);

    const result = await consumer.sendAckCumulative(messages[2]?.messageId as string);

    expect(result.status).toBe(412);
    expect(reasonOf(result.body)).toContain(type);
    expect(await admin.backlogs(topic)).toEqual({ sub: 3 });
  });

  it('ack-cumulative answers 400 without a message id', async () => {
    const { consumer } = await consumerWithMessages('Exclusive');

    const result = await consumer.api.send('POST', `${consumer.path}/ack-cumulative`, { body: {} });

    expect(result.status).toBe(400);
  });

  it('nack answers 204 by handle and by id, and 400 for an empty body', async () => {
    const { consumer, messages } = await consumerWithMessages('Shared', { negativeAckRedeliveryDelayMs: 0 });

    const byHandle = await consumer.sendNack({ deliveryHandles: [messages[0]?.deliveryHandle as string] });
    const byId = await consumer.sendNack({ messageIds: [messages[1]?.messageId as string] });
    const empty = await consumer.sendNack({});

    expect([byHandle.status, byId.status, empty.status]).toEqual([204, 204, 400]);
  });

  it('redeliver-unacknowledged answers 204 with and without handles, and 400 for an unknown field', async () => {
    const { consumer, messages } = await consumerWithMessages('Shared');

    const withHandles = await consumer.sendRedeliverUnacknowledged([messages[0]?.deliveryHandle as string]);
    const withoutBody = await consumer.sendRedeliverUnacknowledged();
    const bad = await consumer.api.send('POST', `${consumer.path}/redeliver-unacknowledged`, {
      body: { messageIds: ['1:0:-1'] },
    });

    expect([withHandles.status, withoutBody.status, bad.status]).toEqual([204, 204, 400]);
  });

  it('redeliver-unacknowledged with one bad handle among good ones answers 400 and redelivers nothing', async () => {
    const { consumer, messages } = await consumerWithMessages('Shared');

    const mixed = await consumer.sendRedeliverUnacknowledged([
      messages[0]?.deliveryHandle as string,
      'garbage',
    ]);
    const again = await consumer.receive(10, 1500);

    expect(mixed.status).toBe(400);
    expect(again).toEqual([]); // the good handle's message stayed with the consumer: not redelivered
  });
});

describe('consumer ids', () => {
  async function openConsumer(api: ConsumerApi, topic: TopicRef) {
    return api.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
  }

  it('DELETE answers 204, then the id is unknown (404) everywhere', async () => {
    const topic = TopicRef.unique('close');
    const consumer = await openConsumer(consumers, topic);

    const closed = await consumer.sendClose();
    const results = await Promise.all([
      consumer.sendReceive(),
      consumer.sendAck({ messageIds: ['1:0:-1'] }),
      consumer.sendAckCumulative('1:0:-1'),
      consumer.sendNack({ messageIds: ['1:0:-1'] }),
      consumer.sendRedeliverUnacknowledged(),
      consumer.sendClose(),
    ]);

    expect(closed.status).toBe(204);
    expect(results.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404]);
  });

  it.each([
    'AAAAAAAAAAAAAAAAAAAAAA',
    'not*an*id',
    'x'.repeat(65),
  ])('answers 404 for the unknown consumer id %s', async (id) => {
    const consumer = consumers.consumer(id);

    const results = await Promise.all([
      consumer.sendReceive(),
      consumer.sendAck({ messageIds: ['1:0:-1'] }),
      consumer.sendNack({ messageIds: ['1:0:-1'] }),
      consumer.sendClose(),
    ]);

    expect(results.map((r) => r.status)).toEqual([404, 404, 404, 404]);
  });

  it('answers 401 without a token on every consumer route', async () => {
    const topic = TopicRef.unique('c401');
    const consumer = (await openConsumer(consumers, topic)).as(consumers.withToken(undefined));

    const results = await Promise.all([
      consumer.sendReceive(),
      consumer.sendAck({ messageIds: ['1:0:-1'] }),
      consumer.sendAckCumulative('1:0:-1'),
      consumer.sendNack({ messageIds: ['1:0:-1'] }),
      consumer.sendRedeliverUnacknowledged(),
      consumer.sendClose(),
    ]);

    expect(results.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401]);
  });

  it("answers 403 when another role uses a role's consumer id, which keeps working for its owner", async () => {
    const topic = TopicRef.unique('c403');
    const owner = uniqueRole('owner');
    const intruder = uniqueRole('intruder');
    await admin.createTopic(topic);
    await admin.grant(topic, owner, ['consume']);
    await admin.grant(topic, intruder, ['consume', 'produce']);
    const consumer = await openConsumer(consumers.as(owner), topic);
    await admin.produceMany(topic, 1);
    const stolen = consumer.as(consumers.as(intruder));

    const results = await Promise.all([
      stolen.sendReceive({ waitMs: 500 }),
      stolen.sendAck({ messageIds: ['1:0:-1'] }),
      stolen.sendNack({ messageIds: ['1:0:-1'] }),
      stolen.sendRedeliverUnacknowledged(),
      stolen.sendClose(),
    ]);
    const ownerReceives = await consumer.receiveN(1, 5000);

    expect(results.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
    expect(ownerReceives.map((m) => m.payload)).toEqual(['m0']);
  });

  it('answers 403 once the owner lost consume on the topic', async () => {
    const topic = TopicRef.unique('c403revoke');
    await admin.createTopic(topic);
    const role = uniqueRole('revoked');
    await admin.grant(topic, role, ['consume']);
    const consumer = await openConsumer(consumers.as(role), topic);

    await admin.expectStatus(204, 'DELETE', `${topic.adminPath}/permissions/${role}`);
    const result = await consumer.sendReceive();

    expect(result.status).toBe(403);
  });

  it('answers 404 to a consumer whose subscription an operator deleted (force: Pulsar refuses 412 while it is connected)', async () => {
    const topic = TopicRef.unique('cdeleted');
    const consumer = await openConsumer(consumers, topic);
    const refused = await admin.send('DELETE', `${topic.adminPath}/subscription/sub`);
    expect(refused.status).toBe(412);
    expect(reasonOf(refused.body)).toMatch(/active connected consumers: 1 on subscription sub/);
    await admin.expectStatus(204, 'DELETE', `${topic.adminPath}/subscription/sub?force=true`);

    const result = await consumer.sendReceive({ waitMs: 100 });

    expect(result.status).toBe(404);
    expect(reasonOf(result.body)).toMatch(/sub/);
  });

  it('lets a superuser use any role’s consumer id', async () => {
    const topic = TopicRef.unique('csuper');
    await admin.createTopic(topic);
    const role = uniqueRole('plain');
    await admin.grant(topic, role, ['consume']);
    const consumer = await openConsumer(consumers.as(role), topic);

    const result = await consumer.as(consumers).sendReceive();

    expect(result.status).toBe(200);
  });
});
