import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import httpRouterHandler from '@middy/http-router';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { NotFoundError, ValidationError } from '../domain/errors.ts';
import { errorResponse } from './http-error-status.ts';
import type { HttpRequest, HttpResponse, Principal, Route } from './http-types.ts';

export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/**
 * Builds a Lambda proxy handler (API Gateway REST, payload 1.0) from routes:
 * middy's http router picks the route, the route sees a plain HttpRequest, and
 * one error handler turns any throw into `{ "reason": ... }` with the status
 * from the error table.
 *
 * adapter (this) -> route -> use case -> secondary adapters
 */
export function httpApi(routes: readonly Route[], logger: Logger): ApiHandler {
  const router = httpRouterHandler({
    routes: routes.map((route) => ({
      method: route.method,
      path: route.path,
      handler: async (event: APIGatewayProxyEvent, context: Context) =>
        toResult(await route.handler(toRequest(event, context))),
    })),
    notFoundResponse: ({ method, path }: { method: string; path: string }) => {
      throw new NotFoundError(`No route for ${method} ${path}`);
    },
  });
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
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

function toResult(response: HttpResponse): APIGatewayProxyResult {
  if (response.body === undefined) {
    return { statusCode: response.statusCode, headers: { ...response.headers }, body: '' };
  }
  return {
    statusCode: response.statusCode,
    headers: { ...JSON_HEADERS, ...response.headers },
    body: JSON.stringify(response.body),
  };
}

function decodeParam(name: string, value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new ValidationError(`Path parameter ${name} is not valid percent-encoding: '${value}'`);
  }
}

export function toRequest(event: APIGatewayProxyEvent, context: Pick<Context, 'awsRequestId'>): HttpRequest {
  const params: Record<string, string> = {};
  const rawParams: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value === undefined || name === 'proxy') continue;
    rawParams[name] = value;
    params[name] = decodeParam(name, value);
  }
  const query: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (values) query[name] = values;
  }
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined && !query[name]) query[name] = [value];
  }
  const headers: Record<string, string> = {};
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
  };
}

function principalOf(event: APIGatewayProxyEvent): Principal | undefined {
  const authorizer = event.requestContext?.authorizer;
  const role = authorizer?.role;
  if (typeof role !== 'string' || role === '') return undefined;
  return { role, superuser: authorizer?.superuser === 'true' || authorizer?.superuser === true };
}
