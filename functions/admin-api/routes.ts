import type { Dependencies } from '../../shared/adapters/create-dependencies.ts';
import {
  acknowledgeMessage,
  readAcknowledgeAudit,
} from '../../shared/application/subscriptions/acknowledge-message.ts';
import { clearBacklog } from '../../shared/application/subscriptions/clear-backlog.ts';
import type { CursorOperationOutcome } from '../../shared/application/subscriptions/cursor-operation.ts';
import { expireMessages } from '../../shared/application/subscriptions/expire-messages.ts';
import {
  createSubscription,
  deleteSubscription,
  listSubscriptions,
} from '../../shared/application/subscriptions/manage-subscriptions.ts';
import {
  resetCursorToEdge,
  resetCursorToMessageId,
  resetCursorToTimestamp,
} from '../../shared/application/subscriptions/reset-subscription.ts';
import { skipByMessageIds, skipMessages } from '../../shared/application/subscriptions/skip-messages.ts';
import {
  createNamespace,
  deleteNamespace,
  getNamespacePolicies,
  listNamespaces,
} from '../../shared/application/tenancy/manage-namespaces.ts';
import {
  grantPermission,
  listPermissions,
  parseActions,
  revokePermission,
} from '../../shared/application/tenancy/manage-permissions.ts';
import {
  getPolicy,
  type PolicyTarget,
  setMessageTTL,
  setRetention,
} from '../../shared/application/tenancy/manage-policies.ts';
import {
  createTenant,
  deleteTenant,
  getTenant,
  listClusters,
  listTenants,
  tenantInfoOf,
} from '../../shared/application/tenancy/manage-tenants.ts';
import {
  createTopic,
  deleteTopic,
  getPartitionedMetadata,
  listPartitionedTopics,
  listTopics,
} from '../../shared/application/topics/manage-topics.ts';
import { getMessageById, peekMessage } from '../../shared/application/topics/read-messages.ts';
import { getInternalStats, getTopicStats } from '../../shared/application/topics/topic-stats.ts';
import { NotAcceptableError, NotFoundError, ValidationError } from '../../shared/domain/errors.ts';
import { NamespaceName } from '../../shared/domain/namespace-name.ts';
import { Position } from '../../shared/domain/position.ts';
import { parseSubscriptionType } from '../../shared/domain/subscription-type.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import {
  initialPositionOf,
  messageIdsOf,
  messageTTLOf,
  requireNamespaceCreateBody,
  resetCursorBodyOf,
  retentionBodyOf,
} from '../../shared/http/admin-requests.ts';
import type { HttpRequest, HttpResponse, Route } from '../../shared/http/http-types.ts';
import { noContent, ok } from '../../shared/http/http-types.ts';
import {
  boundedName,
  jsonBody,
  queryBoolean,
  queryList,
  queryValue,
  safeInteger,
} from '../../shared/http/request-parsing.ts';

const V2 = '/admin/v2/{domain}/{tenant}/{namespace}';
const TOPIC = `${V2}/{topic}`;
const V1_TOPIC = '/admin/v1/{domain}/{property}/{cluster}/{namespace}/{topic}';
const LEGACY_V1_TOPIC = '/admin/{domain}/{property}/{cluster}/{namespace}/{topic}';
const NAMESPACE_PERMISSIONS = '/admin/v2/namespaces/{tenant}/{namespace}/permissions';
const NAMESPACE = '/admin/v2/namespaces/{tenant}/{namespace}';
const AUDIT_LIMIT = 100;

/**
 * Pulsar admin REST paths served by this function. Each route parses the
 * request, calls one use case and shapes the answer.
 */
export function adminRoutes(deps: Dependencies): Route[] {
  const { ports } = deps;

  function topicOf(request: HttpRequest): TopicName {
    const { domain, tenant, namespace, topic } = request.rawParams as Record<string, string>;
    if (domain !== 'persistent' && domain !== 'non-persistent') {
      throw new NotFoundError(`No route for ${request.method} ${request.path}`);
    }
    return TopicName.fromRest(domain, decode(tenant), decode(namespace), topic as string);
  }

  /** v1 paths name the cluster; ackline is one cluster, so any other name is unknown (404). */
  function v1TopicOf(request: HttpRequest): TopicName {
    const { domain, property, cluster, namespace, topic } = request.rawParams as Record<string, string>;
    if (domain !== 'persistent' && domain !== 'non-persistent') {
      throw new NotFoundError(`No route for ${request.method} ${request.path}`);
    }
    const v1 = TopicName.fromRestV1({
      domain,
      property: decode(property),
      cluster: decode(cluster),
      namespace: decode(namespace),
      encodedTopic: topic as string,
    });
    if (v1.cluster !== ports.settings.clusterName) {
      throw new NotFoundError(
        `Cluster ${v1.cluster} does not exist: this ackline is the cluster ${ports.settings.clusterName}`,
      );
    }
    return v1.withoutCluster();
  }

  const acknowledge =
    (topicOfRequest: (request: HttpRequest) => TopicName) => async (request: HttpRequest) => {
      const outcome = await acknowledgeMessage(ports, {
        topic: topicOfRequest(request),
        ledgerId: queryValue(request, 'ledgerId'),
        entryId: queryValue(request, 'entryId'),
        subscriptionNames: subscriptionNamesOf(request),
        dryRun: queryBoolean(request, 'dryRun'),
        principal: request.principal,
        requestId: request.requestId,
      });
      return outcome ? ok(outcome) : noContent();
    };

  /** What every cursor operation reads of the request (Pulsar's `authoritative` is accepted and has no effect). */
  const cursorOperationOf = (request: HttpRequest) => {
    queryBoolean(request, 'authoritative');
    return {
      topic: topicOf(request),
      dryRun: queryBoolean(request, 'dryRun'),
      principal: request.principal,
      requestId: request.requestId,
    };
  };

  /** GET/POST/DELETE of retention and message TTL on a namespace or a topic (Pulsar's paths). */
  const policyRoutes = (base: string, targetOf: (request: HttpRequest) => PolicyTarget): Route[] => {
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
  };

  return [
    // Namespace policies (before the generic {domain} routes, which would also match).
    ...policyRoutes(NAMESPACE, namespaceOf),
    {
      method: 'GET',
      path: '/admin/v2/brokers/health',
      // Pulsar answers the plain text "ok"; a JSON string keeps every answer JSON.
      handler: async () => ok('ok'),
    },
    {
      method: 'GET',
      path: '/admin/v2/clusters',
      handler: async (request) => ok(listClusters(ports, request.principal)),
    },
    // Tenants and namespaces (issue 13), before the generic {domain} routes, which would also match.
    {
      method: 'GET',
      path: '/admin/v2/tenants',
      handler: async (request) => ok(await listTenants(ports, request.principal)),
    },
    {
      method: 'GET',
      path: '/admin/v2/tenants/{tenant}',
      handler: async (request) =>
        ok(await getTenant(ports, request.principal, request.params.tenant as string)),
    },
    {
      method: 'PUT',
      path: '/admin/v2/tenants/{tenant}',
      handler: async (request) => {
        const info = tenantInfoOf(jsonBody(request));
        await createTenant(ports, request.principal, request.params.tenant as string, info);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: '/admin/v2/tenants/{tenant}',
      handler: async (request) => {
        const force = queryBoolean(request, 'force');
        await deleteTenant(ports, request.principal, request.params.tenant as string, force);
        return noContent();
      },
    },
    {
      method: 'GET',
      path: '/admin/v2/namespaces/{tenant}',
      handler: async (request) =>
        ok(await listNamespaces(ports, request.principal, request.params.tenant as string)),
    },
    {
      method: 'GET',
      path: '/admin/v2/namespaces/{tenant}/{namespace}',
      handler: async (request) =>
        ok(await getNamespacePolicies(ports, request.principal, namespaceNameOf(request))),
    },
    {
      method: 'PUT',
      path: '/admin/v2/namespaces/{tenant}/{namespace}',
      handler: async (request) => {
        const name = namespaceNameOf(request);
        requireNamespaceCreateBody(jsonBody(request));
        await createNamespace(ports, request.principal, name);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: '/admin/v2/namespaces/{tenant}/{namespace}',
      handler: async (request) => {
        const name = namespaceNameOf(request);
        await deleteNamespace(ports, request.principal, name, queryBoolean(request, 'force'));
        return noContent();
      },
    },
    // Namespace permissions (before the generic {domain} routes, which would also match).
    {
      method: 'GET',
      path: NAMESPACE_PERMISSIONS,
      handler: async (request) => ok(await listPermissions(ports, request.principal, namespaceOf(request))),
    },
    {
      method: 'POST',
      path: `${NAMESPACE_PERMISSIONS}/{role}`,
      handler: async (request) => {
        const actions = parseActions(jsonBody(request));
        await grantPermission(ports, request.principal, namespaceOf(request), {
          role: request.params.role as string,
          actions,
        });
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${NAMESPACE_PERMISSIONS}/{role}`,
      handler: async (request) => {
        await revokePermission(ports, request.principal, namespaceOf(request), request.params.role as string);
        return noContent();
      },
    },
    {
      method: 'GET',
      path: V2,
      handler: async (request) => {
        const namespace = namespaceOfListing(request);
        return ok(await listTopics(ports, request.principal, namespace.domain, namespace.namespaceName));
      },
    },
    {
      method: 'GET',
      path: `${V2}/partitioned`,
      handler: async (request) => {
        const namespace = namespaceOfListing(request);
        return ok(
          await listPartitionedTopics(ports, request.principal, namespace.domain, namespace.namespaceName),
        );
      },
    },
    {
      method: 'PUT',
      path: TOPIC,
      handler: async (request) => {
        await createTopic(ports, request.principal, topicOf(request), 0);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: TOPIC,
      handler: async (request) => {
        await deleteTopic(ports, request.principal, topicOf(request), {
          force: queryBoolean(request, 'force'),
        });
        return noContent();
      },
    },
    {
      method: 'PUT',
      path: `${TOPIC}/partitions`,
      handler: async (request) => {
        const partitions = jsonBody(request);
        if (typeof partitions !== 'number' || !Number.isSafeInteger(partitions)) {
          throw new ValidationError(`The body must be the number of partitions, an integer >= 1`);
        }
        // Pulsar answers 406 for a count out of range (createTopic checks the upper bound).
        if (partitions < 1) throw new NotAcceptableError('Number of partitions should be more than 0');
        await createTopic(ports, request.principal, topicOf(request), partitions);
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${TOPIC}/partitions`,
      handler: async (request) => {
        await deleteTopic(ports, request.principal, topicOf(request), {
          partitionedOnly: true,
          force: queryBoolean(request, 'force'),
        });
        return noContent();
      },
    },
    {
      method: 'GET',
      path: `${TOPIC}/partitions`,
      handler: async (request) =>
        ok(await getPartitionedMetadata(ports, request.principal, topicOf(request))),
    },
    {
      method: 'PUT',
      path: `${TOPIC}/subscription/{subscription}`,
      handler: async (request) => {
        const type = parseSubscriptionType(queryValue(request, 'subscriptionType') ?? 'Exclusive');
        await createSubscription(ports, request.principal, topicOf(request), {
          name: request.params.subscription as string,
          type,
          initialPosition: initialPositionOf(jsonBody(request)),
        });
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${TOPIC}/subscription/{subscription}`,
      handler: async (request) => {
        await deleteSubscription(ports, request.principal, topicOf(request), {
          name: request.params.subscription as string,
          force: queryBoolean(request, 'force'),
        });
        return noContent();
      },
    },
    {
      method: 'GET',
      path: `${TOPIC}/subscriptions`,
      handler: async (request) => ok(await listSubscriptions(ports, request.principal, topicOf(request))),
    },
    {
      method: 'GET',
      path: `${TOPIC}/stats`,
      handler: async (request) => ok(await getTopicStats(ports, request.principal, topicOf(request))),
    },
    {
      method: 'GET',
      path: `${TOPIC}/partitioned-stats`,
      handler: async (request) => {
        const perPartition = queryValue(request, 'perPartition');
        return ok(
          await getTopicStats(ports, request.principal, topicOf(request), {
            partitionedOnly: true,
            // Pulsar's default: true.
            perPartition:
              perPartition === undefined || perPartition === '' || queryBoolean(request, 'perPartition'),
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${TOPIC}/internalStats`,
      handler: async (request) => ok(await getInternalStats(ports, request.principal, topicOf(request))),
    },
    {
      method: 'GET',
      path: `${TOPIC}/subscription/{subscription}/position/{position}`,
      handler: async (request) =>
        ok(
          await peekMessage(ports, request.principal, topicOf(request), {
            subscriptionName: request.params.subscription as string,
            messagePosition: safeInteger(request.params.position, 'Message position', 1),
          }),
        ),
    },
    {
      method: 'GET',
      path: `${TOPIC}/ledger/{ledgerId}/entry/{entryId}`,
      handler: async (request) =>
        ok(
          await getMessageById(
            ports,
            request.principal,
            topicOf(request),
            Position.of(request.params.ledgerId as string, request.params.entryId as string),
          ),
        ),
    },
    {
      method: 'POST',
      path: `${TOPIC}/subscription/{subscription}/skip/{count}`,
      handler: async (request) => {
        await skipMessages(ports, request.principal, topicOf(request), {
          subscriptionName: request.params.subscription as string,
          numMessages: safeInteger(request.params.count, 'Number of messages'),
        });
        return noContent();
      },
    },
    {
      method: 'POST',
      path: `${TOPIC}/subscription/{subscription}/skipByMessageIds`,
      handler: async (request) => {
        await skipByMessageIds(ports, request.principal, topicOf(request), {
          subscriptionName: request.params.subscription as string,
          positions: messageIdsOf(jsonBody(request)),
        });
        return noContent();
      },
    },
    {
      method: 'POST',
      path: `${TOPIC}/subscription/{subscription}/resetcursor/{timestamp}`,
      handler: async (request) =>
        answered(
          await resetCursorToTimestamp(ports, {
            ...cursorOperationOf(request),
            subscriptionName: request.params.subscription as string,
            timestampMs: safeInteger(request.params.timestamp, 'timestamp (epoch ms)'),
          }),
        ),
    },
    {
      method: 'POST',
      path: `${TOPIC}/subscription/{subscription}/resetcursor`,
      handler: async (request) => {
        const body = resetCursorBodyOf(jsonBody(request));
        if ('edge' in body) {
          return answered(
            await resetCursorToEdge(ports, {
              ...cursorOperationOf(request),
              subscriptionName: request.params.subscription as string,
              edge: body.edge,
              ...(body.partitionIndex !== undefined ? { partitionIndex: body.partitionIndex } : {}),
            }),
          );
        }
        return answered(
          await resetCursorToMessageId(ports, {
            ...cursorOperationOf(request),
            subscriptionName: request.params.subscription as string,
            position: body.position,
            ...(body.partitionIndex !== undefined ? { partitionIndex: body.partitionIndex } : {}),
            isExcluded: body.isExcluded || queryBoolean(request, 'isExcluded'),
          }),
        );
      },
    },
    {
      method: 'POST',
      path: `${TOPIC}/subscription/{subscription}/skip_all`,
      handler: async (request) =>
        answered(
          await clearBacklog(ports, {
            ...cursorOperationOf(request),
            subscriptionName: request.params.subscription as string,
          }),
        ),
    },
    {
      method: 'POST',
      path: `${TOPIC}/subscription/{subscription}/expireMessages/{expireTimeInSeconds}`,
      handler: async (request) =>
        answered(
          await expireMessages(ports, {
            ...cursorOperationOf(request),
            subscriptionName: request.params.subscription as string,
            expireTimeInSeconds: safeInteger(request.params.expireTimeInSeconds, 'expireTimeInSeconds'),
          }),
        ),
    },
    {
      method: 'POST',
      path: `${TOPIC}/all_subscription/expireMessages/{expireTimeInSeconds}`,
      handler: async (request) =>
        answered(
          await expireMessages(ports, {
            ...cursorOperationOf(request),
            expireTimeInSeconds: safeInteger(request.params.expireTimeInSeconds, 'expireTimeInSeconds'),
          }),
        ),
    },
    ...policyRoutes(TOPIC, (request) => ({ topic: topicOf(request) })),
    { method: 'POST', path: `${TOPIC}/acknowledgeMessage`, handler: acknowledge(topicOf) },
    { method: 'POST', path: `${V1_TOPIC}/acknowledgeMessage`, handler: acknowledge(v1TopicOf) },
    // Pulsar's own v1 base path has no version segment; registered after v2, which it would also match.
    { method: 'POST', path: `${LEGACY_V1_TOPIC}/acknowledgeMessage`, handler: acknowledge(v1TopicOf) },
    {
      method: 'GET',
      path: `${TOPIC}/acknowledgeMessage/audit`,
      handler: async (request) =>
        ok(await readAcknowledgeAudit(ports, request.principal, topicOf(request), AUDIT_LIMIT)),
    },
    {
      method: 'GET',
      path: `${TOPIC}/permissions`,
      handler: async (request) =>
        ok(await listPermissions(ports, request.principal, { topic: topicOf(request) })),
    },
    {
      method: 'POST',
      path: `${TOPIC}/permissions/{role}`,
      handler: async (request) => {
        const actions = parseActions(jsonBody(request));
        await grantPermission(
          ports,
          request.principal,
          { topic: topicOf(request) },
          { role: request.params.role as string, actions },
        );
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${TOPIC}/permissions/{role}`,
      handler: async (request) => {
        await revokePermission(
          ports,
          request.principal,
          { topic: topicOf(request) },
          request.params.role as string,
        );
        return noContent();
      },
    },
  ];
}

/** 204 when done (Pulsar's answer); a dry run answers 200 with where each cursor would go. */
function answered(outcome: CursorOperationOutcome): HttpResponse {
  return outcome.dryRun ? ok(outcome) : noContent();
}

function decode(value: string | undefined): string {
  try {
    return decodeURIComponent(value ?? '');
  } catch {
    throw new ValidationError(`Path segment '${value}' is not valid percent-encoding`);
  }
}

function namespaceNameOf(request: HttpRequest): NamespaceName {
  return NamespaceName.of(request.params.tenant as string, request.params.namespace as string);
}

/** The namespace of `GET /admin/v2/{domain}/{tenant}/{namespace}[/partitioned]`, as a probe topic name. */
function namespaceOfListing(request: HttpRequest): TopicName {
  const { domain } = request.params;
  if (domain !== 'persistent' && domain !== 'non-persistent') {
    throw new NotFoundError(`No route for ${request.method} ${request.path}`);
  }
  return TopicName.parse(`${domain}://${request.params.tenant}/${request.params.namespace}/x`);
}

function namespaceOf(request: HttpRequest): { namespace: string } {
  // Validates tenant and namespace with the topic-name rules.
  const probe = TopicName.parse(`persistent://${request.params.tenant}/${request.params.namespace}/x`);
  return { namespace: probe.namespaceName };
}

/** Absent means every subscription (PIP-423); present but empty is a mistake, not "all". */
function subscriptionNamesOf(request: HttpRequest): string[] {
  const names = queryList(request, 'subscriptionNames').map((name) =>
    boundedName(name, 'A subscriptionNames value'),
  );
  if (request.query.subscriptionNames !== undefined && names.length === 0) {
    throw new ValidationError(
      'subscriptionNames is empty; name at least one subscription, or omit the parameter to acknowledge on every subscription',
    );
  }
  return names;
}
