import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import httpRouterHandler from '@middy/http-router';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { systemClock } from '../adapters/system-clock.ts';
import { MethodNotAllowedError, NotFoundError, ValidationError } from '../domain/errors.ts';
import { observedHandler } from '../lambda/observed-handler.ts';
import type { Clock } from '../ports/clock.ts';
import { answerDeadlineMs } from './answer-deadline.ts';
import { requireCurrentCredentials } from './credentials.ts';
import { errorResponse } from './http-error-status.ts';
import type { HttpRequest, HttpResponse, Principal, Route } from './http-types.ts';
import { boundedName } from './request-parsing.ts';

export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/**
 * Builds a Lambda proxy handler (API Gateway REST, payload 1.0) from routes:
 * middy's http router picks the route, the route sees a plain HttpRequest, and
 * one error handler turns any throw into `{ "reason": ... }` with the status
 * from the error table. Every log line of the invocation carries the Lambda
 * context (request id, cold start) and the API Gateway request id as
 * `correlation_id`; metrics the routes added are flushed when it ends. Before
 * any route, the credentials API Gateway may have judged from its authorizer
 * cache are checked against this request and the `clock` (expiry, a second
 * Authorization header: see requireCurrentCredentials).
 *
 * adapter (this) -> route -> use case -> secondary adapters
 */
export function httpApi(
  routes: readonly Route[],
  logger: Logger,
  metrics?: Metrics,
  clock: Clock = systemClock,
): ApiHandler {
  const templates = routes.map((route) => ({ method: route.method, pattern: pathPattern(route.path) }));
  const router = httpRouterHandler({
    routes: routes.map((route) => ({
      method: route.method,
      path: route.path,
      handler: async (event: APIGatewayProxyEvent, context: Context) =>
        proxyResultOf(await route.handler(toRequest(event, context, clock.nowMs()))),
    })),
    notFoundResponse: ({ method, path }: { method: string; path: string }) => {
      // A path some route serves, asked with another method: 405, as Pulsar's JAX-RS answers.
      const allowed = [...new Set(templates.filter((t) => t.pattern.test(path)).map((t) => t.method))];
      if (allowed.length > 0) {
        throw new MethodNotAllowedError(
          `Method ${method} is not allowed on ${path}: use ${allowed.join(', ')}`,
        );
      }
      throw new NotFoundError(`No route for ${method} ${path}`);
    },
  });
  const handler = observedHandler<APIGatewayProxyEvent, APIGatewayProxyResult>(logger, metrics)
    .use({
      before: async (request) => {
        logger.setCorrelationId(request.event.requestContext?.requestId);
        requireCurrentCredentials(request.event, clock.nowMs());
      },
    })
    .handler(
      router as unknown as (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>,
    )
    .onError(async (request) => {
      const { statusCode, reason, unexpected } = errorResponse(request.error);
      if (unexpected) {
        logger.error('request failed', { error: request.error as Error, path: request.event?.path });
      }
      request.response = { statusCode, headers: { ...JSON_HEADERS }, body: JSON.stringify({ reason }) };
    });
  return (event, context) => handler(event, context);
}

/** A route's path template as a regular expression: `{name}` is one segment, `{name+}` the rest. */
function pathPattern(template: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) =>
      part.startsWith('{')
        ? part.endsWith('+}')
          ? '.+'
          : '[^/]+'
        : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}/?$`);
}

/**
 * Lets a handler observe the successful answers of chosen routes (to add a
 * metric, say) without touching them: the matching routes are wrapped, the
 * others are returned as they are. A route that throws is not observed.
 *
 * @example
 * const routes = observeRoutes(dataRoutes(deps), (r) => r.method === 'POST', (response) => count(response));
 */
export function observeRoutes(
  routes: readonly Route[],
  selects: (route: Route) => boolean,
  observe: (response: HttpResponse, request: HttpRequest) => void,
): Route[] {
  return routes.map((route) => {
    if (!selects(route)) return route;
    return {
      ...route,
      handler: async (request: HttpRequest) => {
        const response = await route.handler(request);
        observe(response, request);
        return response;
      },
    };
  });
}

/** A route's answer as the proxy result the function returns (JSON body, JSON content type). */
export function proxyResultOf(response: HttpResponse): APIGatewayProxyResult {
  if (response.body === undefined) {
    return { statusCode: response.statusCode, headers: { ...response.headers }, body: '' };
  }
  return {
    statusCode: response.statusCode,
    headers: { ...JSON_HEADERS, ...response.headers },
    body: JSON.stringify(response.body),
  };
}

/** Every path parameter names something (or counts): decoded, and bounded like every name. */
function decodeParam(name: string, value: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    throw new ValidationError(`Path parameter ${name} is not valid percent-encoding: '${value}'`);
  }
  return boundedName(decoded, `Path parameter ${name}`);
}

/** The route's view of a proxy event that reached the function at `nowMs` (epoch ms). */
export function toRequest(
  event: APIGatewayProxyEvent,
  context: Pick<Context, 'awsRequestId'>,
  nowMs: number,
): HttpRequest {
  // Keyed by what the client sent: no prototype, so `__proto__` or `constructor` is just a name.
  const params = record<string>();
  const rawParams = record<string>();
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value === undefined || name === 'proxy') continue;
    rawParams[name] = value;
    params[name] = decodeParam(name, value);
  }
  const query = record<string[]>();
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (values) query[name] = values;
  }
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined && !query[name]) query[name] = [value];
  }
  const headers = record<string>();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  let body: string | undefined;
  if (event.body !== null && event.body !== undefined && event.body !== '') {
    body = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  }
  return {
    method: event.httpMethod,
    path: event.path,
    params,
    rawParams,
    query,
    headers,
    body,
    principal: principalOf(event),
    requestId: context.awsRequestId,
    answerByMs: answerDeadlineMs(event.requestContext?.requestTimeEpoch, nowMs),
  };
}

function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function principalOf(event: APIGatewayProxyEvent): Principal | undefined {
  const authorizer = event.requestContext?.authorizer;
  const role = authorizer?.role;
  if (typeof role !== 'string' || role === '') return undefined;
  return { role, superuser: authorizer?.superuser === 'true' || authorizer?.superuser === true };
}
