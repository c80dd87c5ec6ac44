import { ForbiddenError } from '../../domain/errors.ts';
import { TokenRefusedError } from '../../domain/token-refusal.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { AuthAction, PermissionStore } from '../../ports/permission-store.ts';
import type { Principal } from './principal.ts';

/**
 * Pulsar-style authorization: superusers may do everything; other roles need
 * an action granted on the topic or on its namespace.
 */
export function requirePrincipal(principal: Principal | undefined): Principal {
  if (!principal) throw new TokenRefusedError('missing');
  return principal;
}

export function requireSuperuser(principal: Principal | undefined, what: string): void {
  const caller = requirePrincipal(principal);
  if (!caller.superuser) {
    throw new ForbiddenError(`Role ${caller.role} is not a superuser: ${what} needs superuser rights`);
  }
}

/** The resources a grant can name for `topic`: the topic itself (never a partition) and its namespace. */
export function permissionResources(topic: TopicName): string[] {
  return [topic.partitionedTopicName.toString(), topic.namespaceName];
}

/** Passes when the role holds at least one of `actions` on the topic or its namespace. */
export async function requireAction(
  permissions: PermissionStore,
  principal: Principal | undefined,
  topic: TopicName,
  actions: readonly AuthAction[],
): Promise<void> {
  const caller = requirePrincipal(principal);
  if (caller.superuser) return;
  const held = await permissions.actionsOf(caller.role, permissionResources(topic));
  if (actions.some((action) => held.has(action))) return;
  throw new ForbiddenError(
    `Role ${caller.role} is not allowed to ${actions.join(' or ')} on ${topic.partitionedTopicName.toString()}`,
  );
}
