import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AdminApi } from '../support/admin-fixtures.ts';

// Attack on the tenants and namespaces routes (issue 13) with names past what a DynamoDB key holds
// (partition key 2,048 bytes, sort key 1,024): topic names are limited (name-limits.ts), tenant
// and namespace names are not. Every answer must be a 4xx with a JSON reason, never a 5xx.

const api = AdminApi.shared();
const CLUSTER = 'standalone';
const long = (bytes: number) => `t${randomBytes(4).toString('hex')}${'a'.repeat(bytes)}`;

describe('tenant and namespace names past the key limits', () => {
  it.each([
    ['PUT', 'a tenant', (name: string) => `/admin/v2/tenants/${name}`],
    ['GET', 'a tenant', (name: string) => `/admin/v2/tenants/${name}`],
    ['DELETE', 'a tenant', (name: string) => `/admin/v2/tenants/${name}`],
    ['GET', "a tenant's namespaces", (name: string) => `/admin/v2/namespaces/${name}`],
    ['PUT', 'a namespace', (name: string) => `/admin/v2/namespaces/public/${name}`],
    ['GET', 'a namespace', (name: string) => `/admin/v2/namespaces/public/${name}`],
    ['DELETE', 'a namespace', (name: string) => `/admin/v2/namespaces/public/${name}`],
  ] as const)('%s %s with a 3,000-byte name answers 4xx with a reason', async (method, _label, path) => {
    const response = await api.send(method, path(long(3_000)), {
      ...(method === 'PUT' ? { body: { allowedClusters: [CLUSTER] } } : {}),
    });

    expect([response.status, response.body]).toEqual([
      expect.toSatisfy((status: number) => status >= 400 && status < 500),
      { reason: expect.any(String) },
    ]);
  });
});

describe('tenant info past what one stored item holds', () => {
  it('refuses 40,000 admin roles (about 560 KB) with a 400 and a reason, and creates nothing', async () => {
    const tenant = long(0);
    const adminRoles = Array.from({ length: 40_000 }, (_, i) => `role-${i}-xxxxxx`);

    const created = await api.send('PUT', `/admin/v2/tenants/${tenant}`, {
      body: { adminRoles, allowedClusters: [CLUSTER] },
    });
    const read = await api.send('GET', `/admin/v2/tenants/${tenant}`);

    expect([created.status, created.body]).toEqual([400, { reason: expect.stringContaining('adminRoles') }]);
    expect(read.status).toBe(404);
  });
});
