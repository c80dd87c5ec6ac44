import { describe, expect, it } from 'vitest';
import { AdminApi, NamespaceRef, TopicRef, uniqueRole } from '../support/admin-fixtures.ts';

// Issue 13, criterion 3: retention and message TTL policies on namespaces and topics, Pulsar's
// paths over real HTTP (their enforcement is maintenance's: test/unit/application/maintenance/enforce-policies.test.ts).

const api = AdminApi.shared();

describe('retention and message TTL policies', () => {
  it('namespace: set, read, remove; 204 when not set; 412 for what Pulsar refuses', async () => {
    const namespace = NamespaceRef.unique('policies');
    const path = `/admin/v2/namespaces/${namespace.name}`;
    expect((await api.send('GET', `${path}/retention`)).status).toBe(204);
    await api.expectStatus(204, 'POST', `${path}/retention`, {
      body: { retentionTimeInMinutes: 60, retentionSizeInMB: 100 },
    });
    await api.expectStatus(204, 'POST', `${path}/messageTTL`, { body: 120 });
    expect((await api.expectStatus(200, 'GET', `${path}/retention`)).body).toEqual({
      retentionTimeInMinutes: 60,
      retentionSizeInMB: 100,
    });
    expect((await api.expectStatus(200, 'GET', `${path}/messageTTL`)).body).toBe(120);
    const invalid = await api.send('POST', `${path}/retention`, {
      body: { retentionTimeInMinutes: 0, retentionSizeInMB: 10 },
    });
    expect(invalid.status).toBe(412);
    expect((await api.send('POST', `${path}/messageTTL`, { body: -1 })).status).toBe(412);
    expect(
      (await api.send('POST', `${path}/retention`, { body: { retentionTimeInMinutes: 'x' } })).status,
    ).toBe(400);
    await api.expectStatus(204, 'DELETE', `${path}/messageTTL`);
    expect((await api.send('GET', `${path}/messageTTL`)).status).toBe(204);
    expect((await api.as(uniqueRole('nobody')).send('GET', `${path}/retention`)).status).toBe(403);
  });

  it('topic: its own policy, or with applied=true what is in force (topic, else namespace, else default)', async () => {
    const topic = TopicRef.unique('tpolicies');
    await api.createTopic(topic, 2);
    const ns = `/admin/v2/namespaces/${topic.namespace.name}`;
    await api.expectStatus(204, 'POST', `${ns}/retention`, {
      body: { retentionTimeInMinutes: 10, retentionSizeInMB: -1 },
    });
    expect((await api.send('GET', `${topic.adminPath}/retention`)).status).toBe(204);
    expect((await api.expectStatus(200, 'GET', `${topic.adminPath}/retention?applied=true`)).body).toEqual({
      retentionTimeInMinutes: 10,
      retentionSizeInMB: -1,
    });
    expect((await api.expectStatus(200, 'GET', `${topic.adminPath}/messageTTL?applied=true`)).body).toBe(0);
    await api.expectStatus(204, 'POST', `${topic.adminPath}/messageTTL?messageTTL=30`);
    await api.expectStatus(204, 'POST', `${topic.partition(1).adminPath}/retention`, {
      body: { retentionTimeInMinutes: -1, retentionSizeInMB: 5 },
    });
    // A partition's policy is its topic's.
    expect((await api.expectStatus(200, 'GET', `${topic.adminPath}/retention`)).body).toEqual({
      retentionTimeInMinutes: -1,
      retentionSizeInMB: 5,
    });
    expect((await api.expectStatus(200, 'GET', `${topic.adminPath}/messageTTL`)).body).toBe(30);
    expect((await api.send('POST', `${topic.adminPath}/messageTTL`)).status).toBe(400);
    expect((await api.send('GET', `${TopicRef.unique('nosuch').adminPath}/retention`)).status).toBe(404);
    expect((await api.send('GET', `${topic.nonPersistentAdminPath}/retention`)).status).toBe(405);
  });

  it("a created namespace's policies (pulsar-admin namespaces policies) show them; deleting the namespace removes them", async () => {
    const name = `public/${NamespaceRef.unique('nspol').namespace}`;
    const path = `/admin/v2/namespaces/${name}`;
    await api.expectStatus(204, 'PUT', path);
    const unset = (await api.expectStatus(200, 'GET', path)).body as Record<string, unknown>;
    expect(unset).not.toHaveProperty('retention_policies');
    expect(unset).not.toHaveProperty('message_ttl_in_seconds');

    await api.expectStatus(204, 'POST', `${path}/retention`, {
      body: { retentionTimeInMinutes: 60, retentionSizeInMB: -1 },
    });
    await api.expectStatus(204, 'POST', `${path}/messageTTL`, { body: 300 });
    expect((await api.expectStatus(200, 'GET', path)).body).toMatchObject({
      retention_policies: { retentionTimeInMinutes: 60, retentionSizeInMB: -1 },
      message_ttl_in_seconds: 300,
    });

    await api.expectStatus(204, 'DELETE', path);
    await api.expectStatus(204, 'PUT', path);
    expect((await api.send('GET', `${path}/retention`)).status).toBe(204);
    expect((await api.send('GET', `${path}/messageTTL`)).status).toBe(204);
    await api.expectStatus(204, 'DELETE', path);
  });

  it("deleting a topic removes its own policies: created again, it starts under its namespace's", async () => {
    const topic = TopicRef.unique('tdel');
    await api.createTopic(topic, 2);
    await api.expectStatus(204, 'POST', `${topic.adminPath}/messageTTL?messageTTL=30`);
    await api.expectStatus(204, 'POST', `${topic.adminPath}/retention`, {
      body: { retentionTimeInMinutes: 5, retentionSizeInMB: -1 },
    });
    await api.expectStatus(204, 'DELETE', topic.adminPath);
    await api.createTopic(topic, 2);
    expect((await api.send('GET', `${topic.adminPath}/retention`)).status).toBe(204);
    expect((await api.send('GET', `${topic.adminPath}/messageTTL`)).status).toBe(204);
  });
});
