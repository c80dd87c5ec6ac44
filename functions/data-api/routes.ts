import type { Dependencies } from '../../shared/adapters/create-dependencies.ts';
import {
  acknowledgeCumulative,
  acknowledgeMessages,
  negativeAcknowledge,
  redeliverUnacknowledged,
} from '../../shared/application/consumers/consumer-acks.ts';
import { closeConsumer, keepAlive } from '../../shared/application/consumers/consumer-session.ts';
import {
  type DeliveredMessage,
  receiveMessages,
} from '../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../shared/application/consumers/subscribe-consumer.ts';
import { unsubscribeConsumer } from '../../shared/application/consumers/unsubscribe-consumer.ts';
import { lastSequenceId } from '../../shared/application/producers/last-sequence-id.ts';
import { publishMessages } from '../../shared/application/producers/publish-messages.ts';
import { topicsOfNamespace } from '../../shared/application/topics/topics-of-namespace.ts';
import { NotFoundError, ValidationError } from '../../shared/domain/errors.ts';
import { NamespaceName } from '../../shared/domain/namespace-name.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import {
  parseCumulativeBody,
  parseIdsBody,
  parseNackBody,
  parseOptionalHandles,
  parseSubscribeRequest,
} from '../../shared/http/consumer-requests.ts';
import {
  type HttpRequest,
  type HttpResponse,
  noContent,
  ok,
  type Route,
} from '../../shared/http/http-types.ts';
import { listAnswerBudget } from '../../shared/http/lambda-payload.ts';
import { parseProduceRequest, producerAccessOf } from '../../shared/http/produce-request.ts';
import { jsonBody, queryValue } from '../../shared/http/request-parsing.ts';
import { producerRoutes } from './producer-routes.ts';

/** Produce and consume paths served by this function. */
export function dataRoutes(deps: Dependencies): Route[] {
  const { ports } = deps;
  // A receive claims only what its answer can carry within Lambda's 6 MB (docs/design/aws-limits.md).
  const receiveAnswer = listAnswerBudget<DeliveredMessage>('messages');
  return [
    {
      method: 'POST',
      path: '/topics/{domain}/{tenant}/{namespace}/{topic}',
      handler: (request) => produce(deps, request),
    },
    {
      method: 'GET',
      path: '/topics/{domain}/{tenant}/{namespace}',
      handler: (request) => namespaceTopics(ports, request),
    },
    {
      method: 'GET',
      path: '/topics/{domain}/{tenant}/{namespace}/{topic}/producers/{producerName}/lastSequenceId',
      handler: async (request) => {
        const producerName = request.params.producerName as string;
        return ok(await lastSequenceId(ports, request.principal, topicOfRequest(request), producerName));
      },
    },
    ...producerRoutes(ports, topicOfRequest),
    {
      method: 'POST',
      path: '/consumers/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}',
      handler: async (request) => {
        const { domain, topic } = request.rawParams as Record<string, string>;
        const { tenant, namespace, subscription } = request.params as Record<string, string>;
        if (domain !== 'persistent' && domain !== 'non-persistent') {
          throw new NotFoundError(`No route for ${request.method} ${request.path}`);
        }
        const name = TopicName.fromRest(domain, tenant as string, namespace as string, topic as string);
        const subscribe = parseSubscribeRequest(name, subscription as string, jsonBody(request));
        return ok(await subscribeConsumer(ports, request.principal, subscribe));
      },
    },
    {
      method: 'POST',
      path: '/consumers/{consumerId}/receive',
      handler: async (request) => {
        const max = optionalInteger(request, 'maxMessages', { min: 1, max: 100, fallback: 1 });
        const waitMs = optionalInteger(request, 'waitMs', { min: 0, max: 20_000, fallback: 0 });
        // The long poll and the claim end in time for API Gateway, whatever a cold start took.
        const messages = await receiveMessages(ports, request.principal, consumerIdOf(request), {
          maxMessages: max,
          waitMs,
          answer: receiveAnswer,
          deadlineMs: request.answerByMs,
        });
        return ok({ messages });
      },
    },
    {
      method: 'POST',
      path: '/consumers/{consumerId}/ack',
      handler: async (request) => {
        const targets = parseIdsBody(jsonBody(request));
        await acknowledgeMessages(ports, request.principal, consumerIdOf(request), targets);
        return noContent();
      },
    },
    {
      method: 'POST',
      path: '/consumers/{consumerId}/ack-cumulative',
      handler: async (request) => {
        const messageId = parseCumulativeBody(jsonBody(request));
        await acknowledgeCumulative(ports, request.principal, consumerIdOf(request), messageId);
        return noContent();
      },
    },
    {
      method: 'POST',
      path: '/consumers/{consumerId}/nack',
      handler: async (request) => {
        const targets = parseNackBody(jsonBody(request));
        await negativeAcknowledge(ports, request.principal, consumerIdOf(request), targets);
        return noContent();
      },
    },
    {
      method: 'POST',
      path: '/consumers/{consumerId}/redeliver-unacknowledged',
      handler: async (request) => {
        const handles = parseOptionalHandles(jsonBody(request));
        await redeliverUnacknowledged(ports, request.principal, consumerIdOf(request), handles);
        return noContent();
      },
    },
    {
      method: 'POST',
      path: '/consumers/{consumerId}/heartbeat',
      handler: async (request) => {
        await keepAlive(ports, request.principal, consumerIdOf(request));
        return noContent();
      },
    },
    {
      method: 'POST',
      path: '/consumers/{consumerId}/unsubscribe',
      handler: async (request) => {
        await unsubscribeConsumer(ports, request.principal, consumerIdOf(request));
        return noContent();
      },
    },
    {
      method: 'DELETE',
      path: '/consumers/{consumerId}',
      handler: async (request) => {
        await closeConsumer(ports, request.principal, consumerIdOf(request));
        return noContent();
      },
    },
  ];
}

/** Pulsar's REST produce: `POST /topics/{domain}/{tenant}/{namespace}/{topic}`. */
async function produce(deps: Dependencies, request: HttpRequest): Promise<HttpResponse> {
  const { ports } = deps;
  const role = request.principal?.role;
  // A message without the request's producerName carries the publishing role's name.
  const body = jsonBody(request);
  const messages = parseProduceRequest(body, ports.clock.nowMs()).map((message) =>
    message.producerName === undefined && role !== undefined ? { ...message, producerName: role } : message,
  );
  const access = producerAccessOf(body);
  const results = await publishMessages(ports, request.principal, topicOfRequest(request), {
    messages,
    router: deps.router,
    deadlineMs: request.answerByMs,
    ...(access ? { access } : {}),
  });
  return ok({ messagePublishResults: results, schemaVersion: 0 });
}

/** `GET /topics/persistent/{tenant}/{namespace}`: the namespace's topics, for pattern consumers. */
async function namespaceTopics(ports: Dependencies['ports'], request: HttpRequest): Promise<HttpResponse> {
  const { domain } = request.rawParams as Record<string, string>;
  const { tenant, namespace } = request.params as Record<string, string>;
  if (domain !== 'persistent') throw new NotFoundError(`No route for ${request.method} ${request.path}`);
  const name = NamespaceName.of(tenant as string, namespace as string).toString();
  return ok({ topics: await topicsOfNamespace(ports, request.principal, { domain, name }) });
}

/** The topic of a `/topics/{domain}/{tenant}/{namespace}/{topic}...` path (404 for another domain). */
function topicOfRequest(request: HttpRequest): TopicName {
  const { domain, topic } = request.rawParams as Record<string, string>;
  const { tenant, namespace } = request.params as Record<string, string>;
  if (domain !== 'persistent' && domain !== 'non-persistent') {
    throw new NotFoundError(`No route for ${request.method} ${request.path}`);
  }
  return TopicName.fromRest(domain, tenant as string, namespace as string, topic as string);
}

function consumerIdOf(request: HttpRequest): string {
  const id = request.params.consumerId ?? '';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new NotFoundError(`Consumer ${id} not found`);
  return id;
}

/** The query parameter `name` as an integer from `min` to `max`; `fallback` when absent or empty. */
function optionalInteger(
  request: HttpRequest,
  name: string,
  { min, max, fallback }: { min: number; max: number; fallback: number },
): number {
  const value = queryValue(request, name);
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,6}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ValidationError(`${name} must be an integer from ${min} to ${max}, got '${value}'`);
  }
  return Number(value);
}
