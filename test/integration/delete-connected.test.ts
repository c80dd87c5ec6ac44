import { describe, expect, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi } from '../support/consumer-fixtures.ts';

// Deleting a subscription or topic while a consumer is connected, over real HTTP: 412 with a
// reason and nothing deleted; force=true deletes and the consumer's next call answers 404 (it no
// longer receives the deleted subscription's backlog).

const api = AdminApi.shared();
const consumers = ConsumerApi.shared();

describe('delete with a connected consumer', () => {
  it.each([
    ['subscription', (topic: TopicRef) => `${topic.adminPath}/subscription/sub`],
    ['partitioned topic', (topic: TopicRef) => `${topic.adminPath}/partitions`],
  ])('%s: 412 (or 400 for a force that is no boolean), then force=true disconnects it', async (_what, pathOf) => {
    const topic = TopicRef.unique('del-connected');
    await api.createTopic(topic, 2);
    await api.createSubscription(topic, 'sub', { type: 'Shared' });
    await api.produceMany(topic, 5, 'a');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const path = pathOf(topic);

    const refused = await api.send('DELETE', path);
    const notBoolean = await api.send('DELETE', `${path}?force=yes`);
    expect(refused.status).toBe(412);
    expect(refused.body).toEqual({
      reason: expect.stringMatching(/active connected consumers: 1 on subscription sub/),
    });
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body).toEqual({ reason: expect.any(String) });
    expect((await api.stats(topic)).subscriptions.sub?.msgBacklog).toBe(5);

    await api.expectStatus(204, 'DELETE', `${path}?force=true`);

    const after = await consumer.sendReceive({ maxMessages: 10, waitMs: 0 });
    expect(after.status).toBe(404);
    expect(after.body).toEqual({ reason: expect.stringMatching(/not found/) });
  });
});
