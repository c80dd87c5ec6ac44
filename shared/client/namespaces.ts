import type { AdminHttp } from './admin-http.ts';
import { namespacePathSegments, pathSegment } from './admin-paths.ts';
import type { AuthAction, PermissionMap } from './admin-types.ts';
import { expectPermissionMap } from './response-shapes.ts';

/**
 * Namespace administration, as Pulsar's Java `admin.namespaces()`. Every `namespace` argument is
 * `tenant/namespace`. Every method throws {@link AcklineAdminError} on failure.
 *
 * @example
 * await admin.namespaces().grantPermissionOnNamespace('my-tenant/my-ns', 'ops', ['consume']);
 */
export class Namespaces {
  constructor(private readonly http: AdminHttp) {}

  /**
   * Grants `role` the `actions` on every topic of a namespace.
   * @example await admin.namespaces().grantPermissionOnNamespace('my-tenant/my-ns', 'ops', ['produce', 'consume']);
   */
  async grantPermissionOnNamespace(
    namespace: string,
    role: string,
    actions: readonly (AuthAction | string)[],
  ): Promise<void> {
    await this.http.send({ method: 'POST', path: this.permissionPath(namespace, role), body: [...actions] });
  }

  /**
   * Revokes every action granted to `role` on a namespace.
   * @example await admin.namespaces().revokePermissionsOnNamespace('my-tenant/my-ns', 'ops');
   */
  async revokePermissionsOnNamespace(namespace: string, role: string): Promise<void> {
    await this.http.send({ method: 'DELETE', path: this.permissionPath(namespace, role) });
  }

  /**
   * The permissions on a namespace, role -> actions.
   * @example const permissions = await admin.namespaces().getPermissions('my-tenant/my-ns');
   */
  async getPermissions(namespace: string): Promise<PermissionMap> {
    const path = `/admin/v2/namespaces/${namespacePathSegments(namespace)}/permissions`;
    return expectPermissionMap(await this.http.json({ method: 'GET', path }));
  }

  private permissionPath(namespace: string, role: string): string {
    return `/admin/v2/namespaces/${namespacePathSegments(namespace)}/permissions/${pathSegment(role, 'role')}`;
  }
}
