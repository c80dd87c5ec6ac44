import {
  NamespaceAlreadyExistsError,
  NamespaceNotFoundError,
  TenantNotFoundError,
} from '../../domain/catalog-errors.ts';
import { ConflictError, MethodNotAllowedError } from '../../domain/errors.ts';
import { NamespaceName } from '../../domain/namespace-name.ts';
import type { AuthAction } from '../../ports/permission-store.ts';
import { REMOVE_ALL_POLICIES } from '../../ports/policy-store.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { DEFAULT_NAMESPACE, PUBLIC_TENANT, requireTenantAdmin } from './manage-tenants.ts';
import type { Principal } from './principal.ts';

/**
 * Namespaces as resources (Pulsar's `/admin/v2/namespaces/{tenant}[/{namespace}]`): created in an
 * existing tenant by a superuser or one of the tenant's admin roles, listed, read, deleted when
 * empty. `public/default` always exists. A topic may still be created in a namespace nobody
 * created (docs/admin-api.md#tenants-and-namespaces says why); such a namespace is not listed, and
 * creating it later adopts its topics.
 */

/** The part of Pulsar's Policies that ackline keeps for a namespace. */
export interface NamespacePolicies {
  readonly auth_policies: {
    readonly namespace_auth: Record<string, AuthAction[]>;
    readonly destination_auth: Record<string, never>;
    readonly subscription_auth_roles: Record<string, never>;
  };
  readonly replication_clusters: readonly string[];
  readonly deleted: boolean;
  /** The namespace's retention, when set (`.../retention`). */
  readonly retention_policies?: {
    readonly retentionTimeInMinutes: number;
    readonly retentionSizeInMB: number;
  };
  /** The namespace's message TTL in seconds, when set (`.../messageTTL`). */
  readonly message_ttl_in_seconds?: number;
  /** The namespace's maxSubscriptionsPerTopic, when set (`.../maxSubscriptionsPerTopic`). */
  readonly max_subscriptions_per_topic?: number;
  /** The namespace's maxConsumersPerSubscription, when set (`.../maxConsumersPerSubscription`). */
  readonly max_consumers_per_subscription?: number;
}

function isDefaultNamespace(name: NamespaceName): boolean {
  return name.tenant === PUBLIC_TENANT && name.namespace === DEFAULT_NAMESPACE;
}

async function namespaceExists(ports: UseCasePorts, name: NamespaceName): Promise<boolean> {
  return (
    isDefaultNamespace(name) || (await ports.tenants.getNamespace(name.tenant, name.namespace)) !== undefined
  );
}

/** `tenant/namespace` of every namespace of the tenant, sorted; 404 when the tenant does not exist. */
export async function listNamespaces(
  ports: UseCasePorts,
  principal: Principal | undefined,
  tenant: string,
): Promise<string[]> {
  const info = await requireTenantAdmin(ports, principal, NamespaceName.of(tenant, 'x').tenant);
  if (!info) throw new TenantNotFoundError(tenant);
  const names = (await ports.tenants.listNamespaces(tenant)).map((record) => `${tenant}/${record.namespace}`);
  if (tenant === PUBLIC_TENANT) names.push(`${PUBLIC_TENANT}/${DEFAULT_NAMESPACE}`);
  return [...new Set(names)].sort();
}

/** The namespace's policies (Pulsar's Policies, the fields ackline keeps); 404 when it does not exist. */
export async function getNamespacePolicies(
  ports: UseCasePorts,
  principal: Principal | undefined,
  name: NamespaceName,
): Promise<NamespacePolicies> {
  await requireTenantAdmin(ports, principal, name.tenant);
  if (!(await namespaceExists(ports, name))) throw new NamespaceNotFoundError(name.toString());
  const policies = await ports.policies.get({ namespace: name.toString() });
  return {
    auth_policies: {
      namespace_auth: await ports.permissions.list(name.toString()),
      destination_auth: {},
      subscription_auth_roles: {},
    },
    replication_clusters: [ports.settings.clusterName],
    deleted: false,
    ...(policies?.retention ? { retention_policies: { ...policies.retention } } : {}),
    ...(policies?.messageTTLInSeconds !== undefined
      ? { message_ttl_in_seconds: policies.messageTTLInSeconds }
      : {}),
    ...(policies?.maxSubscriptionsPerTopic !== undefined
      ? { max_subscriptions_per_topic: policies.maxSubscriptionsPerTopic }
      : {}),
    ...(policies?.maxConsumersPerSubscription !== undefined
      ? { max_consumers_per_subscription: policies.maxConsumersPerSubscription }
      : {}),
  };
}

/**
 * Create a namespace (Pulsar's `PUT /admin/v2/namespaces/{tenant}/{namespace}`).
 * 1. A superuser or an admin of the tenant. 2. 404 when the tenant does not exist.
 * 3. One conditional write: 409 when it exists.
 */
export async function createNamespace(
  ports: UseCasePorts,
  principal: Principal | undefined,
  name: NamespaceName,
): Promise<void> {
  const info = await requireTenantAdmin(ports, principal, name.tenant);
  if (!info) throw new TenantNotFoundError(name.tenant);
  if (isDefaultNamespace(name)) throw new NamespaceAlreadyExistsError(name.toString());
  await ports.tenants.createNamespace({
    tenant: name.tenant,
    namespace: name.namespace,
    createdAtMs: ports.clock.nowMs(),
  });
}

/**
 * Delete a namespace (Pulsar's `DELETE /admin/v2/namespaces/{tenant}/{namespace}`).
 * 1. A superuser or an admin of the tenant. 2. `force` answers 405, as a Pulsar broker with its
 *    default `forceDeleteNamespaceAllowed=false`. 3. 404 when missing; 409 while it holds topics
 *    (persistent or not) and for `public/default`, which always exists.
 * 4. Revoke the namespace's grants and remove its policies (retention, message TTL), then delete
 *    it: a namespace created again starts with none, as in Pulsar. A failure in between leaves the
 *    namespace without some of them; deleting again finishes.
 */
export async function deleteNamespace(
  ports: UseCasePorts,
  principal: Principal | undefined,
  name: NamespaceName,
  force: boolean,
): Promise<void> {
  await requireTenantAdmin(ports, principal, name.tenant);
  if (force) {
    throw new MethodNotAllowedError(
      "Broker doesn't allow forced deletion of namespaces: delete its topics first, then the namespace",
    );
  }
  if (!(await namespaceExists(ports, name))) throw new NamespaceNotFoundError(name.toString());
  if (isDefaultNamespace(name)) {
    throw new ConflictError(
      `Cannot delete ${name.toString()}: it is the namespace of short topic names (orders is persistent://public/default/orders) and always exists`,
    );
  }
  const [persistent, nonPersistent] = await Promise.all([
    ports.catalog.listTopics('persistent', name.toString()),
    ports.catalog.listTopics('non-persistent', name.toString()),
  ]);
  if (persistent.length + nonPersistent.length > 0) {
    throw new ConflictError(`Cannot delete non empty namespace ${name.toString()}: it has topics`);
  }
  const grants = await ports.permissions.list(name.toString());
  for (const role of Object.keys(grants)) await ports.permissions.revoke(name.toString(), role);
  if (await ports.policies.get({ namespace: name.toString() })) {
    await ports.policies.update({ namespace: name.toString() }, REMOVE_ALL_POLICIES);
  }
  await ports.tenants.deleteNamespace(name.tenant, name.namespace);
}
