import {
  getPolicy,
  type PolicyTarget,
  setMessageTTL,
  setRetention,
} from '../../../shared/application/tenancy/manage-policies.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { messageTTLOf, retentionBodyOf } from '../../../shared/http/admin-requests.ts';
import type { HttpRequest, HttpResponse, Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { jsonBody, queryBoolean, queryValue } from '../../../shared/http/request-parsing.ts';
import { NAMESPACE, namespaceOf, TOPIC, topicOf } from './admin-paths.ts';

/** A namespace's retention and message TTL (before the generic {domain} routes, which would also match). */
export function namespacePolicyRoutes(ports: UseCasePorts): Route[] {
  return policyRoutes(ports, NAMESPACE, namespaceOf);
}

/** A topic's retention and message TTL. */
export function topicPolicyRoutes(ports: UseCasePorts): Route[] {
  return policyRoutes(ports, TOPIC, (request) => ({ topic: topicOf(request) }));
}

/** GET/POST/DELETE of retention and message TTL on a namespace or a topic (Pulsar's paths). */
function policyRoutes(
  ports: UseCasePorts,
  base: string,
  targetOf: (request: HttpRequest) => PolicyTarget,
): Route[] {
  const read =
    (name: 'retention' | 'messageTTLInSeconds') =>
    async (request: HttpRequest): Promise<HttpResponse> => {
      const value = await getPolicy(ports, request.principal, targetOf(request), {
        name,
        applied: queryBoolean(request, 'applied'),
      });
      // Pulsar answers a policy never set with no content.
      return value === undefined ? noContent() : ok(value);
    };
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
