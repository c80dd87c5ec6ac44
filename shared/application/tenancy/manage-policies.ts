import {
  type AppliedPolicies,
  appliedPolicies,
  type LimitPolicy,
  type Policies,
  type RetentionPolicies,
  validateLimit,
  validateMessageTTL,
  validateRetention,
} from '../../domain/policies.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { PolicyChange, PolicyScope } from '../../ports/policy-store.ts';
import { resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { requireSuperuser } from './authorization.ts';
import type { Principal } from './principal.ts';

/** A namespace (`tenant/namespace`), or a topic (a partition names its partitioned topic). */
export type PolicyTarget = { readonly namespace: string } | { readonly topic: TopicName };

/** Which policy getPolicy reads, and whether as set or as in force. */
export interface PolicyQuery<K extends keyof Policies> {
  readonly name: K;
  /**
   * Answer what is in force on the topic (its own, else its namespace's, else the defaults);
   * default false: what is set on that scope.
   */
  readonly applied?: boolean;
}

/**
 * Pulsar's namespace and topic policies ackline enforces: retention, message TTL and the
 * subscription limits (maxSubscriptionsPerTopic, maxConsumersPerSubscription). Reading and
 * changing them needs a superuser (Pulsar: the tenant's admin). A topic must exist (404) and be
 * persistent (405). Without `applied`, reading answers what is set on that scope (undefined: not
 * set, 204); with it, what is in force on the topic (its own, else its namespace's, else the
 * defaults: the deployment's default retention, Pulsar's 0/0 unless configured; no TTL; 1,000
 * subscriptions per topic and 1,000 consumers per subscription).
 */
export async function getPolicy<K extends keyof Policies>(
  ports: UseCasePorts,
  principal: Principal | undefined,
  target: PolicyTarget,
  query: PolicyQuery<K>,
): Promise<Policies[K] | undefined> {
  const { name, applied = false } = query;
  requireSuperuser(principal, `reading ${name}`);
  const scope = await scopeOf(ports, target);
  const own = await ports.policies.get(scope);
  if (!applied) return own?.[name];
  const namespace =
    'topic' in target ? await ports.policies.get({ namespace: target.topic.namespaceName }) : undefined;
  const inForce = appliedPolicies(own, 'topic' in target ? namespace : own, ports.settings.defaultRetention);
  return inForce[name] as Policies[K];
}

/** Sets (a value) or removes (null) retention on the scope. */
export async function setRetention(
  ports: UseCasePorts,
  principal: Principal | undefined,
  target: PolicyTarget,
  retention: RetentionPolicies | null,
): Promise<void> {
  requireSuperuser(principal, 'changing retention');
  if (retention) validateRetention(retention);
  await update(ports, target, { retention });
}

/** Sets (a value) or removes (null) the message TTL on the scope. */
export async function setMessageTTL(
  ports: UseCasePorts,
  principal: Principal | undefined,
  target: PolicyTarget,
  seconds: number | null,
): Promise<void> {
  requireSuperuser(principal, 'changing the message TTL');
  if (seconds !== null) validateMessageTTL(seconds);
  await update(ports, target, { messageTTLInSeconds: seconds });
}

/**
 * Sets (a value: an integer, 0 for no limit) or removes (null) maxSubscriptionsPerTopic or
 * maxConsumersPerSubscription on the scope; removed everywhere, ackline's default applies (1,000).
 */
export async function setLimit(
  ports: UseCasePorts,
  principal: Principal | undefined,
  target: PolicyTarget,
  limit: { readonly name: LimitPolicy; readonly value: number | null },
): Promise<void> {
  requireSuperuser(principal, `changing ${limit.name}`);
  if (limit.value !== null) validateLimit(limit.name, limit.value);
  await update(ports, target, { [limit.name]: limit.value });
}

/**
 * Sets (true/false) or removes (null) deduplication on the scope (Pulsar's namespace
 * `deduplication` and topic `deduplicationEnabled`); removed everywhere, it is off (Pulsar's
 * `brokerDeduplicationEnabled` default). Publishers of this container see it at once, others within
 * DEDUPLICATION_POLICY_TTL_MS.
 */
export async function setDeduplication(
  ports: UseCasePorts,
  principal: Principal | undefined,
  target: PolicyTarget,
  enabled: boolean | null,
): Promise<void> {
  requireSuperuser(principal, 'changing deduplication');
  await update(ports, target, { deduplicationEnabled: enabled });
  ports.hints.deduplication.clear();
}

async function update(ports: UseCasePorts, target: PolicyTarget, change: PolicyChange): Promise<void> {
  await ports.policies.update(await scopeOf(ports, target), change);
}

async function scopeOf(ports: UseCasePorts, target: PolicyTarget): Promise<PolicyScope> {
  if ('namespace' in target) return { namespace: target.namespace };
  const resolved = await resolveTopic(ports, target.topic);
  return { topic: resolved.record.topic.toString() };
}

/** The policies in force on a partition (its topic's, else its namespace's, else the defaults). Two reads. */
export async function policiesInForce(ports: UseCasePorts, partition: TopicName): Promise<AppliedPolicies> {
  const [topic, namespace] = await Promise.all([
    ports.policies.get({ topic: partition.partitionedTopicName.toString() }),
    ports.policies.get({ namespace: partition.namespaceName }),
  ]);
  return appliedPolicies(topic, namespace, ports.settings.defaultRetention);
}
