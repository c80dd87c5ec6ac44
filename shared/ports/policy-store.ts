import type { Policies, RetentionPolicies } from '../domain/policies.ts';

/** Whose policies: a namespace (`tenant/namespace`) or a topic (its partitioned name, `persistent://...`). */
export type PolicyScope = { readonly namespace: string } | { readonly topic: string };

/** A change of policies: a value sets it, null removes it, absent leaves it. */
export interface PolicyChange {
  readonly retention?: RetentionPolicies | null;
  readonly messageTTLInSeconds?: number | null;
}

/**
 * Namespace and topic policies (Pulsar's retention and message TTL). One small item per scope.
 * Cost: get one read; update one write.
 */
export interface PolicyStore {
  /** Undefined when nothing is set for the scope. Strongly consistent. */
  get(scope: PolicyScope): Promise<Policies | undefined>;
  update(scope: PolicyScope, change: PolicyChange): Promise<void>;
}

export function policyScopeKey(scope: PolicyScope): string {
  return 'namespace' in scope ? `NS#${scope.namespace}` : `T#${scope.topic}`;
}
