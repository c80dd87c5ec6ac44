import type { Policies } from '../../shared/domain/policies.ts';
import {
  type PolicyChange,
  type PolicyScope,
  type PolicyStore,
  policyScopeKey,
  policyScopeOf,
} from '../../shared/ports/policy-store.ts';

type MutablePolicies = { -readonly [K in keyof Policies]: Policies[K] };

/** PolicyStore in memory, as DynamoDbPolicyStore: one record per scope, set and removed field by field. */
export class InMemoryPolicyStore implements PolicyStore {
  private readonly policies = new Map<string, Policies>();

  async get(scope: PolicyScope): Promise<Policies | undefined> {
    const found = this.policies.get(policyScopeKey(scope));
    return found && Object.keys(found).length > 0 ? structuredClone(found) : undefined;
  }

  async update(scope: PolicyScope, change: PolicyChange): Promise<void> {
    const key = policyScopeKey(scope);
    const next: MutablePolicies = structuredClone(this.policies.get(key) ?? {});
    for (const [field, value] of Object.entries(change) as [keyof Policies, unknown][]) {
      if (value === null) delete next[field];
      else if (value !== undefined) Object.assign(next, { [field]: structuredClone(value) });
    }
    this.policies.set(key, next);
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
