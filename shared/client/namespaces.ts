import type { AdminHttp } from './admin-http.ts';
import { namespacePathSegments, pathSegment } from './admin-paths.ts';
import type { AuthAction, PermissionMap } from './admin-types.ts';
import { checkCount } from './entry-id.ts';
import type { JsonObject } from './lossless-json.ts';
import {
  checkedLimit,
  checkedTtlSeconds,
  limitAnswer,
  type RetentionPolicies,
  retentionAnswer,
  retentionBody,
  type SubscriptionLimit,
  ttlAnswer,
} from './policies.ts';
import { expectObject, expectPermissionMap, expectStringArray } from './response-shapes.ts';

export type { RetentionPolicies } from './policies.ts';

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

  /**
   * The namespaces of a tenant, `tenant/namespace` each.
   * @example const names = await admin.namespaces().getNamespaces('my-tenant');
   */
  async getNamespaces(tenant: string): Promise<readonly string[]> {
    const path = `/admin/v2/namespaces/${pathSegment(tenant, 'tenant')}`;
    return expectStringArray(await this.http.json({ method: 'GET', path }), 'namespaces');
  }

  /**
   * Creates a namespace in an existing tenant; fails with 409 when it exists, 404 without the tenant.
   * `replicationClusters` and `bundles` are sent in Pulsar's Policies body, as pulsar-admin sends
   * them (ackline runs one cluster and has no bundles: they are accepted and not kept).
   * @example
   * await admin.namespaces().createNamespace('my-tenant/my-ns');
   * await admin.namespaces().createNamespace('my-tenant/my-ns', { replicationClusters: ['standalone'], bundles: 4 });
   */
  async createNamespace(
    namespace: string,
    options: { readonly replicationClusters?: readonly string[]; readonly bundles?: number } = {},
  ): Promise<void> {
    const body = {
      ...(options.replicationClusters ? { replication_clusters: [...options.replicationClusters] } : {}),
      ...(options.bundles !== undefined
        ? { bundles: { numBundles: checkCount(options.bundles, 'bundles', 1) } }
        : {}),
    };
    await this.http.send({
      method: 'PUT',
      path: this.namespacePath(namespace),
      ...(Object.keys(body).length > 0 ? { body } : {}),
    });
  }

  /**
   * Deletes an empty namespace (409 while it holds topics).
   * @example await admin.namespaces().deleteNamespace('my-tenant/my-ns');
   */
  async deleteNamespace(namespace: string, force = false): Promise<void> {
    await this.http.send({
      method: 'DELETE',
      path: `${this.namespacePath(namespace)}${force ? '?force=true' : ''}`,
    });
  }

  /**
   * A namespace's policies (Pulsar's Policies, the fields the server keeps).
   * @example const policies = await admin.namespaces().getPolicies('my-tenant/my-ns');
   */
  async getPolicies(namespace: string): Promise<JsonObject> {
    return expectObject(
      await this.http.json({ method: 'GET', path: this.namespacePath(namespace) }),
      'policies',
    );
  }

  /**
   * Sets a namespace's retention (Pulsar's `POST /admin/v2/namespaces/{tenant}/{namespace}/retention`).
   * @example await admin.namespaces().setRetention('my-tenant/my-ns', { retentionTimeInMinutes: 60, retentionSizeInMB: -1 });
   */
  async setRetention(namespace: string, retention: RetentionPolicies): Promise<void> {
    await this.http.send({
      method: 'POST',
      path: `${this.namespacePath(namespace)}/retention`,
      body: { ...retentionBody(retention) },
    });
  }

  /**
   * Sets a namespace's message TTL in seconds (Pulsar's `POST .../messageTTL`, body the number).
   * @example await admin.namespaces().setNamespaceMessageTTL('my-tenant/my-ns', 3600);
   */
  async setNamespaceMessageTTL(namespace: string, ttlInSeconds: number): Promise<void> {
    await this.http.send({
      method: 'POST',
      path: `${this.namespacePath(namespace)}/messageTTL`,
      body: checkedTtlSeconds(ttlInSeconds),
    });
  }

  /**
   * A namespace's retention, or undefined when none is set (the server answers 204; the deployment
   * then keeps everything).
   * @example const retention = await admin.namespaces().getRetention('my-tenant/my-ns');
   */
  async getRetention(namespace: string): Promise<RetentionPolicies | undefined> {
    return retentionAnswer(
      await this.http.send({ method: 'GET', path: `${this.namespacePath(namespace)}/retention` }),
    );
  }

  /**
   * Removes a namespace's retention (its topics fall back to keeping everything, unless their own).
   * @example await admin.namespaces().removeRetention('my-tenant/my-ns');
   */
  async removeRetention(namespace: string): Promise<void> {
    await this.http.send({ method: 'DELETE', path: `${this.namespacePath(namespace)}/retention` });
  }

  /**
   * A namespace's message TTL in seconds, or undefined when none is set.
   * @example const ttlSeconds = await admin.namespaces().getNamespaceMessageTTL('my-tenant/my-ns');
   */
  async getNamespaceMessageTTL(namespace: string): Promise<number | undefined> {
    return ttlAnswer(
      await this.http.send({ method: 'GET', path: `${this.namespacePath(namespace)}/messageTTL` }),
    );
  }

  /**
   * Removes a namespace's message TTL.
   * @example await admin.namespaces().removeNamespaceMessageTTL('my-tenant/my-ns');
   */
  async removeNamespaceMessageTTL(namespace: string): Promise<void> {
    await this.http.send({ method: 'DELETE', path: `${this.namespacePath(namespace)}/messageTTL` });
  }

  /**
   * Sets how many subscriptions each topic of the namespace may have (Pulsar's `POST
   * .../maxSubscriptionsPerTopic`, body the number; 0: no limit). One more is refused (412).
   * @example await admin.namespaces().setMaxSubscriptionsPerTopic('my-tenant/my-ns', 50);
   */
  async setMaxSubscriptionsPerTopic(namespace: string, maxSubscriptionsPerTopic: number): Promise<void> {
    await this.setLimit(namespace, 'maxSubscriptionsPerTopic', maxSubscriptionsPerTopic);
  }

  /**
   * The namespace's maxSubscriptionsPerTopic, or undefined when none is set (ackline's default,
   * 1,000, applies).
   * @example const max = await admin.namespaces().getMaxSubscriptionsPerTopic('my-tenant/my-ns');
   */
  async getMaxSubscriptionsPerTopic(namespace: string): Promise<number | undefined> {
    return this.getLimit(namespace, 'maxSubscriptionsPerTopic');
  }

  /**
   * Removes the namespace's maxSubscriptionsPerTopic.
   * @example await admin.namespaces().removeMaxSubscriptionsPerTopic('my-tenant/my-ns');
   */
  async removeMaxSubscriptionsPerTopic(namespace: string): Promise<void> {
    await this.http.send({
      method: 'DELETE',
      path: `${this.namespacePath(namespace)}/maxSubscriptionsPerTopic`,
    });
  }

  /**
   * Sets how many consumers each subscription in the namespace may have connected (Pulsar's `POST
   * .../maxConsumersPerSubscription`, body the number; 0: no limit). One more is refused (409).
   * @example await admin.namespaces().setMaxConsumersPerSubscription('my-tenant/my-ns', 10);
   */
  async setMaxConsumersPerSubscription(
    namespace: string,
    maxConsumersPerSubscription: number,
  ): Promise<void> {
    await this.setLimit(namespace, 'maxConsumersPerSubscription', maxConsumersPerSubscription);
  }

  /**
   * The namespace's maxConsumersPerSubscription, or undefined when none is set (ackline's
   * default, 1,000, applies).
   * @example const max = await admin.namespaces().getMaxConsumersPerSubscription('my-tenant/my-ns');
   */
  async getMaxConsumersPerSubscription(namespace: string): Promise<number | undefined> {
    return this.getLimit(namespace, 'maxConsumersPerSubscription');
  }

  /**
   * Removes the namespace's maxConsumersPerSubscription.
   * @example await admin.namespaces().removeMaxConsumersPerSubscription('my-tenant/my-ns');
   */
  async removeMaxConsumersPerSubscription(namespace: string): Promise<void> {
    await this.http.send({
      method: 'DELETE',
      path: `${this.namespacePath(namespace)}/maxConsumersPerSubscription`,
    });
  }

  private async setLimit(namespace: string, name: SubscriptionLimit, value: number): Promise<void> {
    const path = `${this.namespacePath(namespace)}/${name}`;
    await this.http.send({ method: 'POST', path, body: checkedLimit(name, value) });
  }

  private async getLimit(namespace: string, name: SubscriptionLimit): Promise<number | undefined> {
    const path = `${this.namespacePath(namespace)}/${name}`;
    return limitAnswer(await this.http.send({ method: 'GET', path }), name);
  }

  private namespacePath(namespace: string): string {
    return `/admin/v2/namespaces/${namespacePathSegments(namespace)}`;
  }

  private permissionPath(namespace: string, role: string): string {
    return `/admin/v2/namespaces/${namespacePathSegments(namespace)}/permissions/${pathSegment(role, 'role')}`;
  }
}
