import type { Policies, RetentionPolicies } from '../domain/policies.ts';

/** Whose policies: a namespace (`tenant/namespace`) or a topic (its partitioned name, `persistent://...`). */
export type PolicyScope = { readonly namespace: string } | { readonly topic: string };

/** A change of policies: a value sets it, null removes it, absent leaves it. */
export interface PolicyChange {
  readonly retention?: RetentionPolicies | null;
  readonly messageTTLInSeconds?: number | null;
  readonly maxSubscriptionsPerTopic?: number | null;
  readonly maxConsumersPerSubscription?: number | null;
  readonly deduplicationEnabled?: boolean | null;
}

/** The change that removes every policy of a scope (its namespace or topic is deleted). */
export const REMOVE_ALL_POLICIES: PolicyChange = {
  retention: null,
  messageTTLInSeconds: null,
  maxSubscriptionsPerTopic: null,
  maxConsumersPerSubscription: null,
  deduplicationEnabled: null,
};

/**
 * Namespace and topic policies (Pulsar's retention, message TTL and subscription limits). One small item per scope.
 * Cost: get one read; update one write.
 */
export interface PolicyStore {
  /** Undefined when nothing is set for the scope. Strongly consistent. */
  get(scope: PolicyScope): Promise<Policies | undefined>;
  update(scope: PolicyScope, change: PolicyChange): Promise<void>;
  /**
   * Every scope that sets a policy (maintenance enforces those, and reads nothing of the topics
   * that have none). Cost: one Query per 1 MB of policy items (they are small and few).
   */
  list(): Promise<{ readonly scope: PolicyScope; readonly policies: Policies }[]>;
}

/** The scope a key of policyScopeKey names. */
export function policyScopeOf(key: string): PolicyScope {
  return key.startsWith('NS#') ? { namespace: key.slice(3) } : { topic: key.slice(2) };
}

export function policyScopeKey(scope: PolicyScope): string {
  return 'namespace' in scope ? `NS#${scope.namespace}` : `T#${scope.topic}`;
}
