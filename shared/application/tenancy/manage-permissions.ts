import { ValidationError } from '../../domain/errors.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { type AuthAction, authActions } from '../../ports/permission-store.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { requireSuperuser } from './authorization.ts';
import type { Principal } from './principal.ts';

/** A resource a grant names: a whole namespace, or one topic (its base name: grants cover all partitions). */
export type PermissionResource = { readonly namespace: string } | { readonly topic: TopicName };

function resourceKey(resource: PermissionResource): string {
  return 'namespace' in resource ? resource.namespace : resource.topic.partitionedTopicName.toString();
}

const ROLE = /^[^\p{Cc}]{1,256}$/u;

export function parseActions(value: unknown): AuthAction[] {
  if (!Array.isArray(value) || value.some((action) => typeof action !== 'string')) {
    throw new ValidationError(`Actions must be a JSON array of strings, one of: ${authActions.join(', ')}`);
  }
  const unknown = value.filter((action) => !authActions.includes(action as AuthAction));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Unknown action(s) ${unknown.join(', ')}; known actions: ${authActions.join(', ')}`,
    );
  }
  return [...new Set(value as AuthAction[])].sort();
}

/** A grant: the actions a role may take on a resource. */
export interface PermissionGrant {
  /** The role (a token's subject): 1 to 256 characters, no control characters. */
  readonly role: string;
  /** What the role may do there; none revokes what it held. */
  readonly actions: readonly AuthAction[];
}

/** Grant `actions` to `role` on the resource, replacing what the role held there. Superusers only. */
export async function grantPermission(
  ports: UseCasePorts,
  principal: Principal | undefined,
  resource: PermissionResource,
  grant: PermissionGrant,
): Promise<void> {
  const { role, actions } = grant;
  requireSuperuser(principal, 'granting permissions');
  if (!ROLE.test(role)) throw new ValidationError(`Invalid role '${role}'`);
  await ports.permissions.grant(resourceKey(resource), role, actions);
}

export async function revokePermission(
  ports: UseCasePorts,
  principal: Principal | undefined,
  resource: PermissionResource,
  role: string,
): Promise<void> {
  requireSuperuser(principal, 'revoking permissions');
  await ports.permissions.revoke(resourceKey(resource), role);
}

export async function listPermissions(
  ports: UseCasePorts,
  principal: Principal | undefined,
  resource: PermissionResource,
): Promise<Record<string, AuthAction[]>> {
  requireSuperuser(principal, 'reading permissions');
  return ports.permissions.list(resourceKey(resource));
}
