import { ForbiddenError } from '../../domain/errors.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { requirePrincipal } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/**
 * The topics of a namespace as a pattern consumer sees them (Pulsar's binary GetTopicsOfNamespace,
 * which a `topicsPattern` consumer calls): a partitioned topic by its own name, a non-partitioned
 * one by its name. Unlike the admin list (a superuser's), the `consume` permission on the namespace
 * suffices, as in Pulsar. Cost: one Query of the namespace's topic records.
 */
export async function topicsOfNamespace(
  ports: UseCasePorts,
  principal: Principal | undefined,
  namespace: { readonly domain: TopicName['domain']; readonly name: string },
): Promise<string[]> {
  const caller = requirePrincipal(principal);
  if (!caller.superuser) {
    const held = await ports.permissions.actionsOf(caller.role, [namespace.name]);
    if (!held.has('consume')) {
      throw new ForbiddenError(
        `Role ${caller.role} is not allowed to consume on namespace ${namespace.name}`,
      );
    }
  }
  const records = await ports.catalog.listTopics(namespace.domain, namespace.name);
  return records.map((record) => record.topic.toString()).sort();
}
