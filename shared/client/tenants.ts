import type { AdminHttp } from './admin-http.ts';
import { pathSegment } from './admin-paths.ts';
import { AcklineAdminError } from './errors.ts';
import { expectObject, expectStringArray } from './response-shapes.ts';

/** Pulsar's TenantInfo. */
export interface TenantInfo {
  readonly adminRoles: readonly string[];
  readonly allowedClusters: readonly string[];
}

/**
 * Tenant administration, as Pulsar's Java `admin.tenants()` (and `admin.clusters().getClusters()`).
 * Every method throws {@link AcklineAdminError} on failure.
 *
 * @example
 * await admin.tenants().createTenant('my-tenant', { adminRoles: ['ops'], allowedClusters: ['standalone'] });
 */
export class Tenants {
  constructor(private readonly http: AdminHttp) {}

  /**
   * Every tenant's name, `public` included.
   * @example const names = await admin.tenants().getTenants();
   */
  async getTenants(): Promise<readonly string[]> {
    return expectStringArray(await this.http.json({ method: 'GET', path: '/admin/v2/tenants' }), 'tenants');
  }

  /**
   * A tenant's admin roles and allowed clusters (404 when it does not exist).
   * @example const info = await admin.tenants().getTenantInfo('my-tenant');
   */
  async getTenantInfo(tenant: string): Promise<TenantInfo> {
    const body = expectObject(
      await this.http.json({ method: 'GET', path: this.path(tenant) }),
      'tenant info',
    );
    const adminRoles = expectStringArray(body.adminRoles ?? [], 'adminRoles');
    const allowedClusters = expectStringArray(body.allowedClusters ?? [], 'allowedClusters');
    return { adminRoles, allowedClusters };
  }

  /**
   * Creates a tenant (409 when it exists).
   * @example await admin.tenants().createTenant('my-tenant', { adminRoles: [], allowedClusters: ['standalone'] });
   */
  async createTenant(tenant: string, info: TenantInfo): Promise<void> {
    await this.http.send({
      method: 'PUT',
      path: this.path(tenant),
      body: { adminRoles: [...info.adminRoles], allowedClusters: [...info.allowedClusters] },
    });
  }

  /**
   * Deletes a tenant that has no namespaces (409 otherwise).
   * @example await admin.tenants().deleteTenant('my-tenant');
   */
  async deleteTenant(tenant: string, force = false): Promise<void> {
    await this.http.send({ method: 'DELETE', path: `${this.path(tenant)}${force ? '?force=true' : ''}` });
  }

  /**
   * The clusters of the deployment (Pulsar's `GET /admin/v2/clusters`): ackline has one.
   * @example const [cluster] = await admin.tenants().getClusters();
   */
  async getClusters(): Promise<readonly string[]> {
    return expectStringArray(await this.http.json({ method: 'GET', path: '/admin/v2/clusters' }), 'clusters');
  }

  private path(tenant: string): string {
    return `/admin/v2/tenants/${pathSegment(tenant, 'tenant')}`;
  }
}
