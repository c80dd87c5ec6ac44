import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AdminApi, NamespaceRef, uniqueRole } from '../support/admin-fixtures.ts';

// Issue 13, criterion 4: tenants and namespaces as resources, with Pulsar's answers
// (TenantsBase, NamespacesBase), over real HTTP against the shared embedded stack.

const api = AdminApi.shared();
const CLUSTER = 'standalone';

function uniqueTenant(): string {
  return `tenant-${process.pid}-${randomBytes(4).toString('hex')}`;
}

describe('tenants', () => {
  it('creates a tenant (204), reads it back, lists it, refuses it twice (409), deletes it (204), then 404', async () => {
    const tenant = uniqueTenant();
    const info = { adminRoles: ['ops', 'alice'], allowedClusters: [CLUSTER] };

    const created = await api.send('PUT', `/admin/v2/tenants/${tenant}`, { body: info });
    const again = await api.send('PUT', `/admin/v2/tenants/${tenant}`, { body: info });
    const read = await api.send('GET', `/admin/v2/tenants/${tenant}`);
    const listed = await api.send('GET', '/admin/v2/tenants');
    const deleted = await api.send('DELETE', `/admin/v2/tenants/${tenant}`);
    const gone = await api.send('GET', `/admin/v2/tenants/${tenant}`);
    const deletedAgain = await api.send('DELETE', `/admin/v2/tenants/${tenant}`);

    expect(created.status).toBe(204);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ reason: `Tenant ${tenant} already exists` });
    expect(read.body).toEqual({ adminRoles: ['alice', 'ops'], allowedClusters: [CLUSTER] });
    expect(listed.body).toEqual(expect.arrayContaining(['public', tenant]));
    expect(deleted.status).toBe(204);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ reason: `Tenant ${tenant} does not exist` });
    expect(deletedAgain.status).toBe(404);
  });

  it.each([
    ['no body', undefined, 412, 'Clusters can not be empty'],
    ['no clusters', { adminRoles: [], allowedClusters: [] }, 412, 'Clusters can not be empty'],
    ['an unknown cluster', { allowedClusters: ['us-west'] }, 412, 'Clusters do not exist: us-west'],
    ['adminRoles not an array', { adminRoles: 'ops', allowedClusters: [CLUSTER] }, 400, 'adminRoles'],
    ['a body that is not an object', [CLUSTER], 400, 'TenantInfo'],
  ])('refuses a tenant with %s (%i) and creates nothing', async (_label, body, status, reason) => {
    const tenant = uniqueTenant();

    const created = await api.send('PUT', `/admin/v2/tenants/${tenant}`, body === undefined ? {} : { body });
    const read = await api.send('GET', `/admin/v2/tenants/${tenant}`);

    expect(created.status).toBe(status);
    expect(created.body).toEqual({ reason: expect.stringContaining(reason) });
    expect(read.status).toBe(404);
  });

  it('refuses an invalid tenant name (412) and public, which always exists (409)', async () => {
    const invalid = await api.send('PUT', '/admin/v2/tenants/bad%20name', {
      body: { allowedClusters: [CLUSTER] },
    });
    const publicAgain = await api.send('PUT', '/admin/v2/tenants/public', {
      body: { allowedClusters: [CLUSTER] },
    });
    const publicInfo = await api.send('GET', '/admin/v2/tenants/public');

    expect(invalid.status).toBe(412);
    expect(publicAgain.status).toBe(409);
    expect(publicInfo.body).toEqual({ adminRoles: [], allowedClusters: [CLUSTER] });
  });

  it('refuses to delete a tenant with namespaces (409), and a forced delete (405) as a default Pulsar broker', async () => {
    const tenant = uniqueTenant();
    await api.expectStatus(204, 'PUT', `/admin/v2/tenants/${tenant}`, {
      body: { allowedClusters: [CLUSTER] },
    });
    await api.expectStatus(204, 'PUT', `/admin/v2/namespaces/${tenant}/ns`);

    const withNamespace = await api.send('DELETE', `/admin/v2/tenants/${tenant}`);
    const forced = await api.send('DELETE', `/admin/v2/tenants/${tenant}?force=true`);
    const stillThere = await api.send('GET', `/admin/v2/namespaces/${tenant}`);

    expect(withNamespace.status).toBe(409);
    expect(withNamespace.body).toEqual({ reason: `The tenant ${tenant} still has active namespaces` });
    expect(forced.status).toBe(405);
    expect(stillThere.body).toEqual([`${tenant}/ns`]);
  });
});

describe('namespaces', () => {
  it('creates, lists, reads and deletes namespaces of a tenant with Pulsar answers', async () => {
    const tenant = uniqueTenant();
    await api.expectStatus(204, 'PUT', `/admin/v2/tenants/${tenant}`, {
      body: { allowedClusters: [CLUSTER] },
    });

    const created = await api.send('PUT', `/admin/v2/namespaces/${tenant}/b`);
    // pulsar-admin sends a default Policies body: it is taken (its fields are not kept).
    const withPolicies = await api.send('PUT', `/admin/v2/namespaces/${tenant}/a`, {
      body: { bundles: { numBundles: 4 }, replication_clusters: [] },
    });
    const again = await api.send('PUT', `/admin/v2/namespaces/${tenant}/b`);
    const listed = await api.send('GET', `/admin/v2/namespaces/${tenant}`);
    const policies = await api.send('GET', `/admin/v2/namespaces/${tenant}/a`);
    const deleted = await api.send('DELETE', `/admin/v2/namespaces/${tenant}/a`);
    const gone = await api.send('GET', `/admin/v2/namespaces/${tenant}/a`);
    const deletedAgain = await api.send('DELETE', `/admin/v2/namespaces/${tenant}/a`);
    const after = await api.send('GET', `/admin/v2/namespaces/${tenant}`);

    expect([created.status, withPolicies.status]).toEqual([204, 204]);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ reason: `Namespace ${tenant}/b already exists` });
    expect(listed.body).toEqual([`${tenant}/a`, `${tenant}/b`]);
    expect(policies.body).toMatchObject({
      replication_clusters: [CLUSTER],
      auth_policies: { namespace_auth: {} },
    });
    expect(deleted.status).toBe(204);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ reason: `Namespace ${tenant}/a does not exist` });
    expect(deletedAgain.status).toBe(404);
    expect(after.body).toEqual([`${tenant}/b`]);
  });

  it('answers 404 for a namespace of a tenant that does not exist, and creates nothing', async () => {
    const tenant = uniqueTenant();

    const created = await api.send('PUT', `/admin/v2/namespaces/${tenant}/ns`);
    const listed = await api.send('GET', `/admin/v2/namespaces/${tenant}`);

    expect(created.status).toBe(404);
    expect(created.body).toEqual({ reason: `Tenant ${tenant} does not exist` });
    expect(listed.status).toBe(404);
  });

  it('refuses to delete a namespace that holds a topic (409) or forced (405), and revokes its grants when deleted', async () => {
    const tenant = uniqueTenant();
    await api.expectStatus(204, 'PUT', `/admin/v2/tenants/${tenant}`, {
      body: { allowedClusters: [CLUSTER] },
    });
    await api.expectStatus(204, 'PUT', `/admin/v2/namespaces/${tenant}/ns`);
    const namespace = new NamespaceRef(tenant, 'ns');
    const topic = namespace.topic('t');
    await api.createTopic(topic);
    const role = uniqueRole('ns-reader');
    await api.grantOnNamespace(namespace, role, ['consume']);

    const withTopic = await api.send('DELETE', `/admin/v2/namespaces/${tenant}/ns`);
    const forced = await api.send('DELETE', `/admin/v2/namespaces/${tenant}/ns?force=true`);
    await api.expectStatus(204, 'DELETE', topic.adminPath);
    const deleted = await api.send('DELETE', `/admin/v2/namespaces/${tenant}/ns`);
    await api.expectStatus(204, 'PUT', `/admin/v2/namespaces/${tenant}/ns`);
    const grants = await api.send('GET', namespace.permissionsPath);

    expect(withTopic.status).toBe(409);
    expect(withTopic.body).toEqual({ reason: expect.stringContaining('Cannot delete non empty namespace') });
    expect(forced.status).toBe(405);
    expect(deleted.status).toBe(204);
    expect(grants.body).toEqual({});
  });

  it('has public/default from the start; it cannot be deleted (409)', async () => {
    const listed = await api.send('GET', '/admin/v2/namespaces/public');
    const read = await api.send('GET', '/admin/v2/namespaces/public/default');
    const deleted = await api.send('DELETE', '/admin/v2/namespaces/public/default');
    const tenantDeleted = await api.send('DELETE', '/admin/v2/tenants/public');

    expect(listed.body).toEqual(expect.arrayContaining(['public/default']));
    expect(read.status).toBe(200);
    expect(deleted.status).toBe(409);
    expect(tenantDeleted.status).toBe(409);
  });

  it("lets the tenant's admin roles manage its namespaces, and no one else (403)", async () => {
    const tenant = uniqueTenant();
    const tenantAdmin = uniqueRole('tenant-admin');
    await api.expectStatus(204, 'PUT', `/admin/v2/tenants/${tenant}`, {
      body: { adminRoles: [tenantAdmin], allowedClusters: [CLUSTER] },
    });
    const asAdmin = api.as(tenantAdmin);
    const asStranger = api.as(uniqueRole('stranger'));

    const created = await asAdmin.send('PUT', `/admin/v2/namespaces/${tenant}/ns`);
    const listed = await asAdmin.send('GET', `/admin/v2/namespaces/${tenant}`);
    const tenantRead = await asAdmin.send('GET', `/admin/v2/tenants/${tenant}`);
    const tenantsListed = await asAdmin.send('GET', '/admin/v2/tenants');
    const tenantDeleted = await asAdmin.send('DELETE', `/admin/v2/tenants/${tenant}`);
    const strangerCreates = await asStranger.send('PUT', `/admin/v2/namespaces/${tenant}/other`);
    const strangerLists = await asStranger.send('GET', `/admin/v2/namespaces/${tenant}`);
    const deleted = await asAdmin.send('DELETE', `/admin/v2/namespaces/${tenant}/ns`);

    expect([created.status, listed.status, tenantRead.status, deleted.status]).toEqual([204, 200, 200, 204]);
    expect(listed.body).toEqual([`${tenant}/ns`]);
    // Tenants themselves are the superuser's, as in Pulsar.
    expect([tenantsListed.status, tenantDeleted.status]).toEqual([403, 403]);
    expect([strangerCreates.status, strangerLists.status]).toEqual([403, 403]);
    expect(strangerCreates.body).toEqual({
      reason: expect.stringContaining('not allowed to administer tenant'),
    });
  });

  it('still takes topics in a namespace nobody created (auto-created namespaces, see docs/admin-api.md#tenants-and-namespaces)', async () => {
    const namespace = NamespaceRef.unique('implicit');

    const created = await api.send('PUT', namespace.topic('t').adminPath);
    const produced = await api.send('POST', namespace.topic('u').producePath, {
      body: { messages: [{ payload: 'x' }] },
    });
    const read = await api.send('GET', `/admin/v2/namespaces/${namespace.name}`);

    expect([created.status, produced.status]).toEqual([204, 200]);
    expect(read.status).toBe(404);
  });
});
