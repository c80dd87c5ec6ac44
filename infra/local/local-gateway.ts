import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { systemClock } from '../../shared/adapters/system-clock.ts';
import type { UsageMeter } from '../../shared/adapters/usage-meter.ts';
import { LAMBDA_PAYLOAD_LIMIT_BYTES, proxyResultBytes } from '../../shared/http/lambda-payload.ts';
import type { Clock } from '../../shared/ports/clock.ts';
import {
  API_INTEGRATION_TIMEOUT_MS,
  type ApiFunctionName,
  AUTHORIZER_RESULT_TTL_SECONDS,
  apiRoutes,
  gatewayResponses,
  invocationRefusals,
  MAX_REQUEST_BODY_BYTES,
  publicPaths,
} from '../api-routes.ts';
import { AuthorizerCache, authorizationIdentity, policyAllows } from './authorizer-cache.ts';
import { gatewayUrl } from './gateway-url.ts';
import { LOCAL_ACCOUNT, localLambdaContext } from './lambda-invocation.ts';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type AuthorizerHandler = (
  event: APIGatewayRequestAuthorizerEvent,
  context: Context,
) => Promise<APIGatewayAuthorizerResult>;

export interface LocalGatewayFunctions {
  readonly authorizer: AuthorizerHandler;
  readonly api: Readonly<Record<ApiFunctionName, ProxyHandler>>;
}

export interface LocalGateway {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const STAGE = 'local';
/**
 * With a usage meter (ACKLINE_METER=1, for `npm run bench`): GET answers what
 * the stack spent since the last DELETE. Not an API Gateway route: local only.
 */
export const USAGE_PATH = '/_local/usage';
/**
 * With a status source (the embedded stack gives one): GET answers the state of
 * its start-up work and local schedules. Not an API Gateway route: local only.
 */
export const STATUS_PATH = '/_local/status';
const API_ID = 'ackline-local';

/**
 * A local stand-in for API Gateway (REST API, Lambda proxy integration,
 * payload format 1.0) in front of the same handlers that deploy to AWS. Per
 * request, in API Gateway's order: match a route, authorize (unless the path
 * is public: from the authorizer results cache, else by running the REQUEST
 * authorizer), then build the proxy event and call the handler. Authorizer
 * refusals answer with the same bodies as the deployed gateway responses. Lambda's
 * 6 MB payload limit holds both ways, as on AWS: an event over it is refused
 * (413) without invoking the handler, an answer over it is dropped (502).
 */
export async function startLocalGateway(options: {
  readonly port: number;
  readonly host: string;
  readonly functions: LocalGatewayFunctions;
  readonly meter?: UsageMeter;
  /** The authorizer results cache's TTL (default: the deployed API's); 0 turns caching off. */
  readonly authorizerResultTtlMs?: number;
  /** What the cache's TTL is measured with (default: the system clock). */
  readonly clock?: Clock;
  /**
   * How long a handler may take before the client gets API Gateway's 504
   * (default: API Gateway's 29 s). The handler runs on; its answer is dropped.
   */
  readonly integrationTimeoutMs?: number;
  /** What STATUS_PATH answers (no such path without it). */
  readonly status?: () => unknown;
}): Promise<LocalGateway> {
  const context: GatewayContext = {
    functions: options.functions,
    meter: options.meter,
    integrationTimeoutMs: options.integrationTimeoutMs ?? API_INTEGRATION_TIMEOUT_MS,
    status: options.status,
    authorizerCache: new AuthorizerCache(
      options.authorizerResultTtlMs ?? AUTHORIZER_RESULT_TTL_SECONDS * 1000,
      options.clock ?? systemClock,
    ),
  };
  // The Host check is handle()'s, so that its refusal has a JSON reason like every other answer.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    handle(req, res, context).catch((error: unknown) => {
      // A handler that throws is a Lambda invocation error: API Gateway answers 502.
      console.error('local gateway: invocation failed', error);
      send(res, 502, { reason: 'Internal server error' });
    });
  });
  // Requests Node refuses before handle() sees them: answered in the same `{ "reason" }` shape
  // (Node's own answers have an empty body).
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (error.code === 'HPE_HEADER_OVERFLOW') socket.end(rawAnswer(431, 'Request headers are too large'));
    else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.end(rawAnswer(408, 'Request timed out'));
    else socket.end(rawAnswer(400, `Malformed HTTP request (${error.code ?? 'unparsable'})`));
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    send(res, 417, { reason: `Expectation '${req.headers.expect}' is not supported` });
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.end(rawAnswer(405, 'CONNECT is not supported'));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return { url: gatewayUrl(options.host, port), port, close: () => closeServer(server) };
}

interface GatewayContext {
  readonly functions: LocalGatewayFunctions;
  readonly meter: UsageMeter | undefined;
  readonly authorizerCache: AuthorizerCache;
  readonly integrationTimeoutMs: number;
  readonly status: (() => unknown) | undefined;
}

async function handle(req: IncomingMessage, res: ServerResponse, gateway: GatewayContext) {
  // API Gateway stamps a request's start (requestTimeEpoch) when it arrives.
  const receivedAtMs = Date.now();
  const { meter } = gateway;
  const url = requestUrl(req.url);
  const method = (req.method ?? 'GET').toUpperCase();
  const body = await readBody(req);
  if (!url || (req.httpVersion === '1.1' && req.headers.host === undefined)) {
    // API Gateway never forwards these: a target that is not a URL (`http://[`), or HTTP/1.1 without Host.
    send(res, 400, { reason: url ? 'The Host header is required' : 'The request target is not a valid URL' });
    return;
  }
  const rawPath = url.pathname;
  if (answeredLocally(res, gateway, method, rawPath)) return;
  const received = performance.now();
  if (meter) res.once('finish', () => meter.invoked('apiGateway', performance.now() - received));
  if (body === undefined) {
    sendGatewayResponse(res, gatewayResponses.payloadTooLarge);
    return;
  }
  const firstSegment = rawPath.split('/')[1] ?? '';
  const route = apiRoutes.find((candidate) => candidate.firstSegment === firstSegment);
  if (!route || rawPath.length <= firstSegment.length + 2) {
    sendGatewayResponse(res, gatewayResponses.missingRoute);
    return;
  }
  const isPublic = publicPaths.some((p) => p.method === method && p.path === rawPath.replace(/\/$/, ''));
  const resource = isPublic ? rawPath : `/${firstSegment}/{proxy+}`;
  const matched: MatchedRequest = {
    method,
    path: rawPath,
    resource,
    requestId: randomUUID(),
    receivedAtMs,
  };
  const query = queryParameters(url);

  // What API Gateway puts in both the authorizer's event and the integration's.
  const request: ProxyRequest = {
    resource,
    path: rawPath,
    httpMethod: method,
    headers: singleValueHeaders(req),
    multiValueHeaders: multiValue(req),
    queryStringParameters: query.single,
    multiValueQueryStringParameters: query.multi,
    pathParameters: isPublic ? null : { proxy: rawPath.slice(firstSegment.length + 2) },
    stageVariables: null,
  };
  let authorizerContext: AuthorizerContext | undefined;
  if (!isPublic) {
    const authorized = await authorizeRequest(gateway, req.rawHeaders, matched, request);
    if ('refused' in authorized) {
      sendGatewayResponse(res, authorized.refused);
      return;
    }
    authorizerContext = authorized.context;
  }
  const event: APIGatewayProxyEvent = {
    ...request,
    requestContext: requestContext(matched, authorizerContext),
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
  };
  await invokeIntegration(res, gateway, route.functionName, event);
}

/** What API Gateway knows of a request once it matched a resource. */
interface MatchedRequest {
  readonly method: string;
  readonly path: string;
  /** The matched resource: the public path itself, or `/{firstSegment}/{proxy+}`. */
  readonly resource: string;
  readonly requestId: string;
  /**
   * When the request came (epoch ms): its `requestTimeEpoch`, as API Gateway stamps a request on
   * arrival, before the authorizer runs. The handlers' answer deadline counts from it.
   */
  readonly receivedAtMs: number;
}

/** The fields the authorizer's event and the integration's share. */
type ProxyRequest = Omit<APIGatewayProxyEvent, 'requestContext' | 'body' | 'isBase64Encoded'>;

type AuthorizerContext = Record<string, string | number | boolean>;

/** The local-only paths (USAGE_PATH, STATUS_PATH), when configured: true when it answered. */
function answeredLocally(
  res: ServerResponse,
  gateway: GatewayContext,
  method: string,
  path: string,
): boolean {
  const { meter, status } = gateway;
  if (meter && path === USAGE_PATH) {
    const usage = meter.snapshot();
    if (method === 'DELETE') meter.reset();
    send(res, 200, usage);
    return true;
  }
  if (status && path === STATUS_PATH && method === 'GET') {
    send(res, 200, status());
    return true;
  }
  return false;
}

/**
 * The gateway response a request the authorizer does not let through gets, or the context the
 * authorizer's answer hands the integration (its `context` and `principalId`).
 */
async function authorizeRequest(
  gateway: GatewayContext,
  rawHeaders: readonly string[],
  matched: MatchedRequest,
  request: ProxyRequest,
): Promise<{ refused: GatewayResponse } | { context: AuthorizerContext }> {
  const methodArn = `arn:aws:execute-api:us-east-1:${LOCAL_ACCOUNT}:${API_ID}/${STAGE}/${matched.method}${matched.path}`;
  const authorizerEvent = () =>
    ({
      type: 'REQUEST',
      methodArn,
      ...request,
      requestContext: requestContext(matched, undefined),
    }) as unknown as APIGatewayRequestAuthorizerEvent;
  const result = await authorize(gateway, rawHeaders, authorizerEvent, matched.requestId);
  // No identity (ackline's authorizer answers a bad token with its reason, never with this).
  if (result === 'unauthorized') return { refused: gatewayResponses.unauthorized };
  if (result === 'failed') return { refused: gatewayResponses.authorizerFailure };
  if (!policyAllows(result.policyDocument, methodArn)) return { refused: gatewayResponses.accessDenied };
  return { context: { ...(result.context ?? {}), principalId: result.principalId } };
}

/**
 * Calls the function with the proxy event and answers what it answers, or API Gateway's 504 at the
 * timeout. Lambda's payload limit both ways: an event over it never reaches the function (413), an
 * answer over it is lost after the function ran (502), whatever the function did meanwhile.
 */
async function invokeIntegration(
  res: ServerResponse,
  gateway: GatewayContext,
  functionName: ApiFunctionName,
  event: APIGatewayProxyEvent,
): Promise<void> {
  const { requestId } = event.requestContext;
  res.setHeader('x-amzn-requestid', requestId);
  const eventBytes = Buffer.byteLength(JSON.stringify(event), 'utf8');
  if (eventBytes > LAMBDA_PAYLOAD_LIMIT_BYTES) {
    console.error(
      `local gateway: refused a ${eventBytes}-byte proxy event for ${functionName} (Lambda's limit)`,
    );
    sendGatewayResponse(res, invocationRefusals.requestTooLarge);
    return;
  }
  const invoking = performance.now();
  const result = await withinIntegrationTimeout(
    gateway.functions.api[functionName](event, lambdaContext(functionName, requestId)),
    gateway.integrationTimeoutMs,
  ).finally(() => gateway.meter?.invoked(functionName, performance.now() - invoking));
  if (result === undefined) {
    // As API Gateway: the client gets a 504 at the integration timeout; the function runs on, unheard.
    console.error(
      `local gateway: ${functionName} did not answer ${event.httpMethod} ${event.path} within ${gateway.integrationTimeoutMs} ms`,
    );
    sendGatewayResponse(res, gatewayResponses.integrationTimeout);
    return;
  }
  const resultBytes = proxyResultBytes(result);
  if (resultBytes > LAMBDA_PAYLOAD_LIMIT_BYTES) {
    console.error(
      `local gateway: ${functionName} answered ${event.httpMethod} ${event.path} with ${resultBytes} bytes, over Lambda's limit`,
    );
    sendGatewayResponse(res, invocationRefusals.responseTooLarge);
    return;
  }
  res.statusCode = result.statusCode;
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, String(value));
  res.setHeader('x-amzn-requestid', requestId);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/**
 * The handler's answer, or undefined when it has not answered within `timeoutMs`
 * (then whatever it answers or throws later is dropped, as API Gateway drops it).
 */
async function withinIntegrationTimeout<T>(
  invocation: Promise<T>,
  timeoutMs: number,
): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  invocation.catch(() => undefined); // a late failure is no unhandled rejection: nobody listens any more
  try {
    return await Promise.race([invocation, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The authorizer's answer for this request: from the results cache when it
 * holds one for the request's Authorization value, else from invoking the
 * authorizer (and then kept). `unauthorized` (401) when there is no identity
 * to key on (caching on) or the authorizer threw 'Unauthorized', as API
 * Gateway's contract says; `failed` (500) when it threw anything else.
 */
async function authorize(
  gateway: GatewayContext,
  rawHeaders: readonly string[],
  event: () => APIGatewayRequestAuthorizerEvent,
  requestId: string,
): Promise<APIGatewayAuthorizerResult | 'unauthorized' | 'failed'> {
  const { authorizerCache: cache, meter } = gateway;
  const identity = authorizationIdentity(rawHeaders);
  if (cache.enabled) {
    if (identity === undefined) return 'unauthorized';
    const cached = cache.get(identity);
    if (cached) return cached;
  }
  const authorizing = performance.now();
  try {
    const result = await gateway.functions.authorizer(event(), lambdaContext('authorizer', requestId));
    if (identity !== undefined) cache.set(identity, result);
    return result;
  } catch (error) {
    if (error instanceof Error && error.message === 'Unauthorized') return 'unauthorized';
    console.error('local gateway: the authorizer failed', error);
    return 'failed';
  } finally {
    meter?.invoked('authorizer', performance.now() - authorizing);
  }
}

function requestContext(
  matched: MatchedRequest,
  authorizer: AuthorizerContext | undefined,
): APIGatewayProxyEvent['requestContext'] {
  return {
    accountId: LOCAL_ACCOUNT,
    apiId: API_ID,
    authorizer: authorizer ?? null,
    httpMethod: matched.method,
    identity: { sourceIp: '127.0.0.1' } as APIGatewayProxyEvent['requestContext']['identity'],
    path: `/${STAGE}${matched.path}`,
    protocol: 'HTTP/1.1',
    requestId: matched.requestId,
    requestTimeEpoch: matched.receivedAtMs,
    resourceId: 'local',
    resourcePath: matched.resource,
    stage: STAGE,
  };
}

/** 29 s to run: the API functions' deployed timeout and API Gateway's; the authorizer gets the same here. */
function lambdaContext(functionName: string, requestId: string): Context {
  return localLambdaContext({ functionName, timeoutMs: 29_000, requestId });
}

function singleValueHeaders(req: IncomingMessage): Record<string, string> {
  const headers = record<string>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers[req.rawHeaders[i] as string] = req.rawHeaders[i + 1] as string;
  }
  return headers;
}

/** The request target as a URL, or undefined when it cannot be one (`http://[::1`, `http://x:99999/`). */
function requestUrl(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
}

/**
 * Maps keyed by what the client sent (header and parameter names) have no prototype: a name such as
 * `__proto__` or `constructor` is a key like any other, not an inherited member.
 */
function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function multiValue(req: IncomingMessage): Record<string, string[]> {
  const headers = record<string[]>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const values = headers[name] ?? [];
    values.push(req.rawHeaders[i + 1] as string);
    headers[name] = values;
  }
  return headers;
}

/** API Gateway passes null, not an empty object, when there is no query string. */
function queryParameters(url: URL): {
  single: Record<string, string> | null;
  multi: Record<string, string[]> | null;
} {
  const single = record<string>();
  const multi = record<string[]>();
  for (const [name, value] of url.searchParams) {
    single[name] = value; // the last value wins, as on API Gateway
    const values = multi[name] ?? [];
    values.push(value);
    multi[name] = values;
  }
  return Object.keys(single).length === 0 ? { single: null, multi: null } : { single, multi };
}

/** Resolves undefined when the body is over API Gateway's limit. */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A whole HTTP/1.1 answer with a JSON reason, for a socket Node's parser gave up on; closes it. */
function rawAnswer(statusCode: number, reason: string): string {
  const body = JSON.stringify({ reason });
  return [
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? ''}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/** A gateway response of infra/api-routes.ts (or an invocation refusal): a status and a reason. */
type GatewayResponse = { readonly statusCode: number; readonly reason: string };

function sendGatewayResponse(res: ServerResponse, response: GatewayResponse) {
  send(res, response.statusCode, { reason: response.reason });
}

function send(res: ServerResponse, statusCode: number, body: unknown) {
  res.statusCode = statusCode;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeIdleConnections();
    server.close(() => resolve());
    setTimeout(() => server.closeAllConnections(), 1_000).unref();
  });
}
