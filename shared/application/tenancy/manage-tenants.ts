import { TenantAlreadyExistsError, TenantNotFoundError } from '../../domain/catalog-errors.ts';
import {
  ConflictError,
  ForbiddenError,
  MethodNotAllowedError,
  PreconditionFailedError,
  ValidationError,
} from '../../domain/errors.ts';
import { utf8Bytes } from '../../domain/name-limits.ts';
import { validTenant } from '../../domain/namespace-name.ts';
import type { TenantInfo } from '../../ports/tenant-catalog.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { requirePrincipal, requireSuperuser } from './authorization.ts';
import type { Principal } from './principal.ts';

/**
 * The tenant that always exists, as on a Pulsar standalone: short topic names (`orders`) live in
 * its namespace `public/default`. It is not stored; it cannot be created (409) nor deleted (409:
 * it keeps `public/default`).
 */
export const PUBLIC_TENANT = 'public';
/** The namespace that always exists (`public/default`); see {@link PUBLIC_TENANT}. */
export const DEFAULT_NAMESPACE = 'default';

const ROLE = /^[^\p{Cc}]{1,256}$/u;
/**
 * The most bytes (UTF-8) a tenant's adminRoles may hold together: the tenant is one DynamoDB item,
 * at most 400 KB. Pulsar sets no limit; past this the answer is 400 with the reason.
 */
export const MAX_TENANT_ADMIN_ROLES_BYTES = 100_000;

/** Pulsar's TenantInfo from a request body: `{ "adminRoles": [...], "allowedClusters": [...] }`. */
export function tenantInfoOf(body: unknown): TenantInfo {
  if (body === undefined || body === null) {
    return { adminRoles: [], allowedClusters: [] };
  }
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError(
      'The body must be a TenantInfo object: {"adminRoles": [...], "allowedClusters": [...]}',
    );
  }
  const { adminRoles = [], allowedClusters = [] } = body as Record<string, unknown>;
  const strings = (value: unknown, field: string): string[] => {
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
      throw new ValidationError(`${field} must be an array of strings`);
    }
    return [...new Set(value as string[])].sort();
  };
  const roles = strings(adminRoles, 'adminRoles');
  const bad = roles.find((role) => !ROLE.test(role));
  if (bad !== undefined) throw new ValidationError(`Invalid role '${bad}' in adminRoles`);
  const bytes = roles.reduce((total, role) => total + utf8Bytes(role), 0);
  if (bytes > MAX_TENANT_ADMIN_ROLES_BYTES) {
    throw new ValidationError(
      `adminRoles hold ${bytes} bytes (${roles.length} roles); at most ${MAX_TENANT_ADMIN_ROLES_BYTES} are allowed (a tenant is one stored item)`,
    );
  }
  return { adminRoles: roles, allowedClusters: strings(allowedClusters, 'allowedClusters') };
}

/** The tenant's info, the built-in `public` included; undefined when it does not exist. */
export async function findTenant(ports: UseCasePorts, tenant: string): Promise<TenantInfo | undefined> {
  if (tenant === PUBLIC_TENANT) return { adminRoles: [], allowedClusters: [ports.settings.clusterName] };
  return (await ports.tenants.getTenant(tenant))?.info;
}

/**
 * Passes for a superuser, or a role among the tenant's admin roles (Pulsar's
 * validateAdminAccessForTenant). A role that is neither gets 403, whether or not the tenant exists.
 * @returns the tenant's info, undefined when it does not exist (only a superuser gets that far).
 */
export async function requireTenantAdmin(
  ports: UseCasePorts,
  principal: Principal | undefined,
  tenant: string,
): Promise<TenantInfo | undefined> {
  const caller = requirePrincipal(principal);
  const info = await findTenant(ports, tenant);
  if (caller.superuser || info?.adminRoles.includes(caller.role)) return info;
  throw new ForbiddenError(`Role ${caller.role} is not allowed to administer tenant ${tenant}`);
}

/** The deployment's clusters: its one (Pulsar's `GET /admin/v2/clusters`). Superusers only. */
export function listClusters(ports: UseCasePorts, principal: Principal | undefined): string[] {
  requireSuperuser(principal, 'listing clusters');
  return [ports.settings.clusterName];
}

/** The names of every tenant, `public` included, sorted. Superusers only (as Pulsar). */
export async function listTenants(ports: UseCasePorts, principal: Principal | undefined): Promise<string[]> {
  requireSuperuser(principal, 'listing tenants');
  const names = (await ports.tenants.listTenants()).map((record) => record.tenant);
  return [...new Set([PUBLIC_TENANT, ...names])].sort();
}

/** A tenant's TenantInfo; 404 when it does not exist. Superusers and the tenant's admins. */
export async function getTenant(
  ports: UseCasePorts,
  principal: Principal | undefined,
  tenant: string,
): Promise<TenantInfo> {
  const info = await requireTenantAdmin(ports, principal, validTenant(tenant));
  if (!info) throw new TenantNotFoundError(tenant);
  return info;
}

/**
 * Create a tenant (Pulsar's `PUT /admin/v2/tenants/{tenant}`).
 * 1. Superusers only. 2. The name follows Pulsar's rule (412). 3. allowedClusters must name this
 *    ackline's cluster and no other (412: "Clusters can not be empty", "Clusters do not exist").
 * 4. One conditional write: 409 when it exists.
 */
export async function createTenant(
  ports: UseCasePorts,
  principal: Principal | undefined,
  tenant: string,
  info: TenantInfo,
): Promise<void> {
  requireSuperuser(principal, 'creating a tenant');
  validTenant(tenant);
  const clusters = info.allowedClusters.filter((cluster) => cluster.trim() !== '');
  if (clusters.length === 0) {
    throw new PreconditionFailedError(
      `Clusters can not be empty: allowedClusters must name this cluster, ${ports.settings.clusterName}`,
    );
  }
  const unknown = clusters.filter((cluster) => cluster !== ports.settings.clusterName);
  if (unknown.length > 0) {
    throw new PreconditionFailedError(
      `Clusters do not exist: ${unknown.join(', ')} (this ackline is the one cluster ${ports.settings.clusterName})`,
    );
  }
  if (tenant === PUBLIC_TENANT) throw new TenantAlreadyExistsError(tenant);
  await ports.tenants.createTenant({
    tenant,
    info: { adminRoles: info.adminRoles, allowedClusters: clusters },
    createdAtMs: ports.clock.nowMs(),
  });
}

/**
 * Delete a tenant (Pulsar's `DELETE /admin/v2/tenants/{tenant}`).
 * 1. Superusers only. 2. `force` answers 405, as a Pulsar broker with its default
 *    `forceDeleteTenantAllowed=false`: ackline does not delete namespaces and topics wholesale.
 * 3. 404 when missing; 409 while it has namespaces (delete them first).
 */
export async function deleteTenant(
  ports: UseCasePorts,
  principal: Principal | undefined,
  tenant: string,
  force: boolean,
): Promise<void> {
  requireSuperuser(principal, 'deleting a tenant');
  validTenant(tenant);
  if (force) {
    throw new MethodNotAllowedError(
      "Broker doesn't allow forced deletion of tenants: delete its namespaces first, then the tenant",
    );
  }
  if (!(await findTenant(ports, tenant))) throw new TenantNotFoundError(tenant);
  const namespaces = await ports.tenants.listNamespaces(tenant);
  if (tenant === PUBLIC_TENANT || namespaces.length > 0) {
    throw new ConflictError(`The tenant ${tenant} still has active namespaces`);
  }
  await ports.tenants.deleteTenant(tenant);
}
