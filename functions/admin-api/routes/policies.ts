import {
  getPolicy,
  type PolicyTarget,
  setDeduplication,
  setLimit,
  setMessageTTL,
  setRetention,
} from '../../../shared/application/tenancy/manage-policies.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { ValidationError } from '../../../shared/domain/errors.ts';
import type { LimitPolicy, Policies } from '../../../shared/domain/policies.ts';
import { limitOf, messageTTLOf, retentionBodyOf } from '../../../shared/http/admin-requests.ts';
import type { HttpRequest, HttpResponse, Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { describeValue, jsonBody, queryBoolean, queryValue } from '../../../shared/http/request-parsing.ts';
import { NAMESPACE, namespaceOf, TOPIC, topicOf } from './admin-paths.ts';

type TargetOf = (request: HttpRequest) => PolicyTarget;

/** A namespace's retention, message TTL and subscription limits (before the generic {domain} routes, which would also match). */
export function namespacePolicyRoutes(ports: UseCasePorts): Route[] {
  return [
    ...policyRoutes(ports, NAMESPACE, namespaceOf),
    ...limitRoutes(ports, NAMESPACE, namespaceOf),
    ...deduplicationRoutes(ports, `${NAMESPACE}/deduplication`, namespaceOf),
  ];
}

/** A topic's retention, message TTL and subscription limits. */
export function topicPolicyRoutes(ports: UseCasePorts): Route[] {
  const targetOf: TargetOf = (request) => ({ topic: topicOf(request) });
  return [
    ...policyRoutes(ports, TOPIC, targetOf),
    ...limitRoutes(ports, TOPIC, targetOf),
    ...deduplicationRoutes(ports, `${TOPIC}/deduplicationEnabled`, targetOf),
  ];
}

/**
 * GET/POST/DELETE of deduplication (Pulsar's paths: a namespace's `deduplication`, a topic's
 * `deduplicationEnabled`; POST takes `true` or `false` as the body).
 */
function deduplicationRoutes(ports: UseCasePorts, path: string, targetOf: TargetOf): Route[] {
  return [
    { method: 'GET', path, handler: readPolicy(ports, targetOf, 'deduplicationEnabled') },
    {
      method: 'POST',
      path,
      handler: async (request) => {
        const body = jsonBody(request);
        if (typeof body !== 'boolean') {
          throw new ValidationError(`The body must be true or false, got ${describeValue(body)}`);
        }
        await setDeduplication(ports, request.principal, targetOf(request), body);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path,
      handler: async (request) => {
        await setDeduplication(ports, request.principal, targetOf(request), null);
        return noContent();
      },
    },
  ];
}

/** A GET of one policy: what is set (204 when nothing), or with `applied=true` what is in force. */
function readPolicy(ports: UseCasePorts, targetOf: TargetOf, name: keyof Policies) {
  return async (request: HttpRequest): Promise<HttpResponse> => {
    const value = await getPolicy(ports, request.principal, targetOf(request), {
      name,
      applied: queryBoolean(request, 'applied'),
    });
    // Pulsar answers a policy never set with no content.
    return value === undefined ? noContent() : ok(value);
  };
}

/**
 * GET/POST/DELETE of maxSubscriptionsPerTopic and maxConsumersPerSubscription on a namespace or a
 * topic (Pulsar's paths; POST takes the integer as the body).
 */
function limitRoutes(ports: UseCasePorts, base: string, targetOf: TargetOf): Route[] {
  const names: LimitPolicy[] = ['maxSubscriptionsPerTopic', 'maxConsumersPerSubscription'];
  return names.flatMap((name): Route[] => [
    { method: 'GET', path: `${base}/${name}`, handler: readPolicy(ports, targetOf, name) },
    {
      method: 'POST',
      path: `${base}/${name}`,
      handler: async (request) => {
        const value = limitOf(jsonBody(request), name);
        await setLimit(ports, request.principal, targetOf(request), { name, value });
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${base}/${name}`,
      handler: async (request) => {
        await setLimit(ports, request.principal, targetOf(request), { name, value: null });
        return noContent();
      },
    },
  ]);
}

/** GET/POST/DELETE of retention and message TTL on a namespace or a topic (Pulsar's paths). */
function policyRoutes(ports: UseCasePorts, base: string, targetOf: TargetOf): Route[] {
  const read = (name: 'retention' | 'messageTTLInSeconds') => readPolicy(ports, targetOf, name);
  return [
    { method: 'GET', path: `${base}/retention`, handler: read('retention') },
    {
      method: 'POST',
      path: `${base}/retention`,
      handler: async (request) => {
        const retention = retentionBodyOf(jsonBody(request));
        await setRetention(ports, request.principal, targetOf(request), retention);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${base}/retention`,
      handler: async (request) => {
        await setRetention(ports, request.principal, targetOf(request), null);
        return noContent();
      },
    },
    { method: 'GET', path: `${base}/messageTTL`, handler: read('messageTTLInSeconds') },
    {
      method: 'POST',
      path: `${base}/messageTTL`,
      handler: async (request) => {
        // Namespaces take the TTL as the body, topics as the `messageTTL` query parameter (Pulsar's).
        const seconds =
          base === NAMESPACE
            ? messageTTLOf(jsonBody(request), 'The body')
            : messageTTLOf(queryValue(request, 'messageTTL'), 'The messageTTL query parameter');
        await setMessageTTL(ports, request.principal, targetOf(request), seconds);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${base}/messageTTL`,
      handler: async (request) => {
        await setMessageTTL(ports, request.principal, targetOf(request), null);
        return noContent();
      },
    },
  ];
}
