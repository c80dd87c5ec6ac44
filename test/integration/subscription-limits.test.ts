import { describe, expect, it } from 'vitest';
import { AdminApi, NamespaceRef, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi } from '../support/consumer-fixtures.ts';

// Issue 22, criterion 7: maxSubscriptionsPerTopic and maxConsumersPerSubscription on namespaces
// and topics, Pulsar's paths over real HTTP on the embedded stack, and the refusals they cause.

const api = AdminApi.shared();
const consumers = ConsumerApi.shared();

describe('maxSubscriptionsPerTopic', () => {
  it('namespace limit 2: the third subscription is 412 with the reason; the topic overrides; removing restores the default', async () => {
    const topic = TopicRef.unique('maxsubs');
    await api.createTopic(topic);
    const ns = `/admin/v2/namespaces/${topic.namespace.name}`;
    expect((await api.send('GET', `${ns}/maxSubscriptionsPerTopic`)).status).toBe(204);
    expect(
      (await api.expectStatus(200, 'GET', `${topic.adminPath}/maxSubscriptionsPerTopic?applied=true`)).body,
    ).toBe(1000);
    await api.expectStatus(204, 'POST', `${ns}/maxSubscriptionsPerTopic`, { body: 2 });
    expect((await api.expectStatus(200, 'GET', `${ns}/maxSubscriptionsPerTopic`)).body).toBe(2);
    expect((await api.send('POST', `${ns}/maxSubscriptionsPerTopic`, { body: -1 })).status).toBe(412);
    expect((await api.send('POST', `${ns}/maxSubscriptionsPerTopic`, { body: 'x' })).status).toBe(400);

    await api.createSubscription(topic, 'a');
    await consumers.subscribe(topic, 'b', { subscriptionType: 'Shared' });
    const third = await api.send('PUT', `${topic.adminPath}/subscription/c`, { body: {} });
    expect(third.status).toBe(412);
    expect(third.body).toEqual({
      reason: `Exceed the maximum number of subscriptions of the topic: ${topic.name} (maxSubscriptionsPerTopic 2)`,
    });
    const bySubscribe = await consumers.sendSubscribe(topic, 'c', { subscriptionType: 'Shared' });
    expect(bySubscribe.status).toBe(412);

    // The topic's own limit overrides its namespace's.
    await api.expectStatus(204, 'POST', `${topic.adminPath}/maxSubscriptionsPerTopic`, { body: 3 });
    expect((await api.expectStatus(200, 'GET', `${topic.adminPath}/maxSubscriptionsPerTopic`)).body).toBe(3);
    await api.createSubscription(topic, 'c');
    expect((await api.send('PUT', `${topic.adminPath}/subscription/d`, { body: {} })).status).toBe(412);

    // Removed at both levels: the default (1,000) applies again.
    await api.expectStatus(204, 'DELETE', `${topic.adminPath}/maxSubscriptionsPerTopic`);
    await api.expectStatus(204, 'DELETE', `${ns}/maxSubscriptionsPerTopic`);
    expect((await api.send('GET', `${topic.adminPath}/maxSubscriptionsPerTopic`)).status).toBe(204);
    expect(
      (await api.expectStatus(200, 'GET', `${topic.adminPath}/maxSubscriptionsPerTopic?applied=true`)).body,
    ).toBe(1000);
    await api.createSubscription(topic, 'd');
  });
});

describe('maxConsumersPerSubscription', () => {
  it('namespace limit 2: the third consumer is 409 with the reason; the topic overrides; removing restores the default', async () => {
    const topic = TopicRef.unique('maxcons');
    const ns = `/admin/v2/namespaces/${topic.namespace.name}`;
    await api.createTopic(topic);
    await api.expectStatus(204, 'POST', `${ns}/maxConsumersPerSubscription`, { body: 2 });
    expect((await api.expectStatus(200, 'GET', `${ns}/maxConsumersPerSubscription`)).body).toBe(2);

    await consumers.subscribe(topic, 's', { subscriptionType: 'Shared' });
    await consumers.subscribe(topic, 's', { subscriptionType: 'Shared' });
    const third = await consumers.sendSubscribe(topic, 's', { subscriptionType: 'Shared' });
    expect(third.status).toBe(409);
    expect(third.body).toEqual({
      reason: `Subscription reached max consumers limit: 2 consumers on s of ${topic.name} (maxConsumersPerSubscription 2)`,
    });

    await api.expectStatus(204, 'POST', `${topic.adminPath}/maxConsumersPerSubscription`, { body: 3 });
    expect(
      (await api.expectStatus(200, 'GET', `${topic.adminPath}/maxConsumersPerSubscription?applied=true`))
        .body,
    ).toBe(3);
    await consumers.subscribe(topic, 's', { subscriptionType: 'Shared' });
    expect((await consumers.sendSubscribe(topic, 's', { subscriptionType: 'Shared' })).status).toBe(409);

    await api.expectStatus(204, 'DELETE', `${topic.adminPath}/maxConsumersPerSubscription`);
    await api.expectStatus(204, 'DELETE', `${ns}/maxConsumersPerSubscription`);
    expect((await api.send('GET', `${ns}/maxConsumersPerSubscription`)).status).toBe(204);
    expect(
      (await api.expectStatus(200, 'GET', `${topic.adminPath}/maxConsumersPerSubscription?applied=true`))
        .body,
    ).toBe(1000);
    await consumers.subscribe(topic, 's', { subscriptionType: 'Shared' });
  });
});

describe("a namespace's limits", () => {
  it('show in its policies (GET namespace) and go with it when it is deleted', async () => {
    const path = `/admin/v2/namespaces/public/${NamespaceRef.unique('nslimits').namespace}`;
    await api.expectStatus(204, 'PUT', path);
    await api.expectStatus(204, 'POST', `${path}/maxSubscriptionsPerTopic`, { body: 5 });
    await api.expectStatus(204, 'POST', `${path}/maxConsumersPerSubscription`, { body: 0 });
    expect((await api.expectStatus(200, 'GET', path)).body).toMatchObject({
      max_subscriptions_per_topic: 5,
      max_consumers_per_subscription: 0,
    });
    await api.expectStatus(204, 'DELETE', path);
    await api.expectStatus(204, 'PUT', path);
    expect((await api.send('GET', `${path}/maxSubscriptionsPerTopic`)).status).toBe(204);
    expect((await api.send('GET', `${path}/maxConsumersPerSubscription`)).status).toBe(204);
    await api.expectStatus(204, 'DELETE', path);
  });
});
