import type { Policies } from '../../shared/domain/policies.ts';
import {
  type PolicyChange,
  type PolicyScope,
  type PolicyStore,
  policyScopeKey,
  policyScopeOf,
} from '../../shared/ports/policy-store.ts';

/** PolicyStore in memory, as DynamoDbPolicyStore: one record per scope, set and removed field by field. */
export class InMemoryPolicyStore implements PolicyStore {
  private readonly policies = new Map<string, Policies>();

  async get(scope: PolicyScope): Promise<Policies | undefined> {
    const found = this.policies.get(policyScopeKey(scope));
    return found && (found.retention || found.messageTTLInSeconds !== undefined) ? { ...found } : undefined;
  }

  async update(scope: PolicyScope, change: PolicyChange): Promise<void> {
    const key = policyScopeKey(scope);
    const { retention, messageTTLInSeconds } = this.policies.get(key) ?? {};
    const nextRetention = change.retention === null ? undefined : (change.retention ?? retention);
    const nextTtl =
      change.messageTTLInSeconds === null ? undefined : (change.messageTTLInSeconds ?? messageTTLInSeconds);
    this.policies.set(key, {
      ...(nextRetention ? { retention: { ...nextRetention } } : {}),
      ...(nextTtl !== undefined ? { messageTTLInSeconds: nextTtl } : {}),
    });
  }

  async list(): Promise<{ scope: PolicyScope; policies: Policies }[]> {
    const listed: { scope: PolicyScope; policies: Policies }[] = [];
    for (const key of [...this.policies.keys()].sort()) {
      const policies = await this.get(policyScopeOf(key));
      if (policies) listed.push({ scope: policyScopeOf(key), policies });
    }
    return listed;
  }
}
