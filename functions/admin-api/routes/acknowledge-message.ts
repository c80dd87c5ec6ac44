import {
  acknowledgeMany,
  MAX_ACKNOWLEDGE_IDS,
} from '../../../shared/application/subscriptions/acknowledge-many.ts';
import {
  acknowledgeMessage,
  readAcknowledgeAudit,
} from '../../../shared/application/subscriptions/acknowledge-message.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { NotFoundError, ValidationError } from '../../../shared/domain/errors.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { HttpRequest, Route, RouteHandler } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import {
  boundedName,
  jsonBody,
  queryBoolean,
  queryList,
  queryValue,
  refuseUnknownQuery,
} from '../../../shared/http/request-parsing.ts';
import { decode, LEGACY_V1_TOPIC, TOPIC, topicOf, V1_TOPIC } from './admin-paths.ts';

const AUDIT_LIMIT = 100;

/** PIP-423's acknowledgeMessage on the v2 and v1 paths, and its audit. */
export function acknowledgeMessageRoutes(ports: UseCasePorts): Route[] {
  const v1TopicOf = (request: HttpRequest) => clusterTopicOf(ports, request);
  return [
    { method: 'POST', path: `${TOPIC}/acknowledgeMessage`, handler: acknowledge(ports, topicOf) },
    { method: 'POST', path: `${V1_TOPIC}/acknowledgeMessage`, handler: acknowledge(ports, v1TopicOf) },
    // Pulsar's own v1 base path has no version segment; registered after v2, which it would also match.
    { method: 'POST', path: `${LEGACY_V1_TOPIC}/acknowledgeMessage`, handler: acknowledge(ports, v1TopicOf) },
    {
      method: 'GET',
      path: `${TOPIC}/acknowledgeMessage/audit`,
      handler: async (request) =>
        ok(await readAcknowledgeAudit(ports, request.principal, topicOf(request), AUDIT_LIMIT)),
    },
  ];
}

/**
 * The query parameters acknowledgeMessage takes (Pulsar's `authoritative` is accepted and has no
 * effect, as on the cursor operations). Any other is refused (400): a typo such as
 * `subscriptionName=` would otherwise acknowledge on every subscription.
 */
const ACKNOWLEDGE_QUERY = ['ledgerId', 'entryId', 'subscriptionNames', 'dryRun', 'authoritative'] as const;

function acknowledge(ports: UseCasePorts, topicOfRequest: (request: HttpRequest) => TopicName): RouteHandler {
  return async (request) => {
    refuseUnknownQuery(request, ACKNOWLEDGE_QUERY);
    queryBoolean(request, 'authoritative');
    const messageIds = messageIdsOf(request);
    if (messageIds) {
      const many = await acknowledgeMany(ports, {
        topic: topicOfRequest(request),
        messageIds,
        subscriptionNames: subscriptionNamesOf(request),
        dryRun: queryBoolean(request, 'dryRun'),
        principal: request.principal,
        requestId: request.requestId,
      });
      return many ? ok(many) : noContent();
    }
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
}

/** v1 paths name the cluster; ackline is one cluster, so any other name is unknown (404). */
function clusterTopicOf(ports: UseCasePorts, request: HttpRequest): TopicName {
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

/**
 * ackline's extension of PIP-423: a JSON body `{"messageIds": ["ledgerId:entryId", ...]}` names
 * many messages (1 to MAX_ACKNOWLEDGE_IDS), instead of the `ledgerId` and `entryId` parameters.
 * Undefined: no body (one message, PIP-423's form).
 */
function messageIdsOf(request: HttpRequest): string[] | undefined {
  const body = jsonBody(request);
  if (body === undefined) return undefined;
  const ids = (body as { messageIds?: unknown } | null)?.messageIds;
  const keys = body !== null && typeof body === 'object' ? Object.keys(body) : [];
  if (
    !Array.isArray(ids) ||
    keys.some((key) => key !== 'messageIds') ||
    ids.some((id) => typeof id !== 'string')
  ) {
    throw new ValidationError('The body must be {"messageIds": ["ledgerId:entryId", ...]} and nothing else');
  }
  if (ids.length === 0 || ids.length > MAX_ACKNOWLEDGE_IDS) {
    throw new ValidationError(`messageIds must hold 1 to ${MAX_ACKNOWLEDGE_IDS} ids, got ${ids.length}`);
  }
  if (queryValue(request, 'ledgerId') !== undefined || queryValue(request, 'entryId') !== undefined) {
    throw new ValidationError(
      'Name the messages either by ledgerId and entryId or by a messageIds body, not both',
    );
  }
  return ids as string[];
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
