// Logging and metrics wiring of the API handlers and the authorizer, in
// process: what CloudWatch would receive (EMF documents and structured log
// lines), without AWS. The use cases are not run here (the integration suites
// do that against the embedded stack): routes are either stubs or fail on
// their first storage call, so these tests hold whatever ports the use cases
// grow.
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import {
  isAcknowledgeMessageRoute,
  makeHandler as makeAdminHandler,
} from '../../../functions/admin-api/handler.ts';
import { adminRoutes } from '../../../functions/admin-api/routes.ts';
import { makeHandler as makeAuthorizer } from '../../../functions/authorizer/handler.ts';
import {
  isProduceRoute,
  makeHandler as makeDataHandler,
  publishedCount,
} from '../../../functions/data-api/handler.ts';
import { dataRoutes } from '../../../functions/data-api/routes.ts';
import type { Dependencies } from '../../../shared/adapters/create-dependencies.ts';
import { TokenVerifier } from '../../../shared/adapters/jose-tokens.ts';
import { secretKeyFrom } from '../../../shared/adapters/token-keys.ts';
import { METRICS_NAMESPACE, serviceNameOf } from '../../../shared/config/load-config.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import { httpApi, observeRoutes } from '../../../shared/http/http-api.ts';
import { noContent, ok, type Route } from '../../../shared/http/http-types.ts';
import { hs256Token } from '../../support/hs256-token.ts';
import { ManualClock } from '../../support/manual-clock.ts';
import { lambdaContext, RecordingLogger, RecordingMetrics } from './recording-observability.ts';

const STAGE = 'test';

function observability(functionName: string) {
  return {
    logger: new RecordingLogger({ serviceName: serviceNameOf(functionName) }),
    metrics: new RecordingMetrics({
      namespace: METRICS_NAMESPACE,
      serviceName: serviceNameOf(functionName),
      defaultDimensions: { stage: STAGE },
    }),
  };
}

/** Ports whose every use fails, as storage that is down: a route that reaches storage answers 500. */
const unavailablePorts = new Proxy(
  {},
  {
    get: () => {
      throw new Error('storage unavailable');
    },
  },
);

function dependencies(functionName: string) {
  const { logger, metrics } = observability(functionName);
  const deps = {
    config: { stage: STAGE, clusterName: 'standalone' },
    logger,
    metrics,
    ports: unavailablePorts,
    router: new RoundRobinRouter(0),
  } as unknown as Dependencies;
  return { deps, logger, metrics };
}

let requests = 0;
function proxyEvent(method: string, path: string, body?: unknown): APIGatewayProxyEvent {
  requests++;
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: method,
    headers: { 'content-type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { proxy: path.slice(1) },
    stageVariables: null,
    requestContext: {
      requestId: `api-${requests}`,
      authorizer: { role: 'admin', superuser: 'true', principalId: 'admin' },
    },
    body: body === undefined ? null : JSON.stringify(body),
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEvent;
}

describe('the routes the metrics observe', () => {
  const routesOf = (build: (deps: Dependencies) => Route[]) => build(dependencies('any').deps);
  const described = (routes: Route[]) => routes.map((route) => `${route.method} ${route.path}`);

  it('finds exactly the produce route in the data API', () => {
    expect(described(routesOf(dataRoutes).filter(isProduceRoute))).toEqual([
      'POST /topics/{domain}/{tenant}/{namespace}/{topic}',
    ]);
  });

  it('finds the acknowledgeMessage routes in the admin API, v2 and v1, and nothing else', () => {
    const matched = described(routesOf(adminRoutes).filter(isAcknowledgeMessageRoute));
    expect(matched).toContain('POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/acknowledgeMessage');
    expect(matched.length).toBeGreaterThanOrEqual(2);
    for (const route of matched) expect(route).toMatch(/^POST \/admin\/.*\/acknowledgeMessage$/);
  });

  it.each([
    [
      {
        messagePublishResults: [
          { messageId: '1:0:-1', errorCode: 0 },
          { messageId: '1:1:-1', errorCode: 0 },
        ],
      },
      2,
    ],
    [{ messagePublishResults: [{ messageId: '1:0:-1', errorCode: 0 }, { errorCode: 2 }] }, 1],
    [{ messagePublishResults: [] }, 0],
    [undefined, 0],
  ])('counts the stored messages of a produce answer %j as %i', (body, count) => {
    expect(publishedCount({ statusCode: 200, body })).toBe(count);
  });
});

describe('httpApi with observed routes', () => {
  const api = () => {
    const { logger, metrics } = observability('data-api');
    const routes: Route[] = [
      { method: 'POST', path: '/topics/{topic}', handler: async () => ok({ stored: 3 }) },
      { method: 'GET', path: '/topics/{topic}', handler: async () => ok('read') },
      { method: 'DELETE', path: '/topics/{topic}', handler: async () => noContent() },
    ];
    const observed = observeRoutes(
      routes,
      (route) => route.method !== 'GET',
      (response) => {
        if (response.statusCode === 200) metrics.addMetric('stored', MetricUnit.Count, 3);
        else metrics.addMetric('deleted', MetricUnit.Count, 1);
      },
    );
    return { logger, metrics, handler: httpApi(observed, logger, metrics) };
  };

  it('flushes one EMF document per invocation that added metrics, with namespace, service and stage', async () => {
    const { metrics, handler } = api();

    await handler(proxyEvent('POST', '/topics/a'), lambdaContext('fn', 'lambda-a'));
    await handler(proxyEvent('DELETE', '/topics/a'), lambdaContext('fn', 'lambda-b'));

    expect(metrics.values()).toEqual([{ stored: 3 }, { deleted: 1 }]);
    expect(metrics.flushed[0]?._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'Ackline',
        Dimensions: [expect.arrayContaining(['service', 'stage'])],
        Metrics: [{ Name: 'stored', Unit: 'Count' }],
      },
    ]);
    expect(metrics.flushed[0]).toMatchObject({ service: 'ackline-data-api', stage: STAGE });
  });

  it('flushes nothing, and warns nothing, for an invocation that added none', async () => {
    const { logger, metrics, handler } = api();

    const response = await handler(proxyEvent('GET', '/topics/a'), lambdaContext('fn', 'lambda-c'));

    expect(response.statusCode).toBe(200);
    expect(metrics.flushed).toEqual([]);
    expect(logger.lines).toEqual([]);
  });
});

describe('data-api and admin-api handlers', () => {
  it.each([
    {
      name: 'data-api',
      make: makeDataHandler,
      method: 'POST',
      path: '/topics/persistent/t/ns/orders',
      body: { messages: [{ payload: 'a' }] },
    },
    {
      name: 'admin-api',
      make: makeAdminHandler,
      method: 'PUT',
      path: '/admin/v2/persistent/t/ns/orders',
      body: undefined,
    },
  ])('$name logs an unexpected error as JSON with the Lambda and API request ids, and adds no metric', async ({
    name,
    make,
    method,
    path,
    body,
  }) => {
    const { deps, logger, metrics } = dependencies(name);
    const event = proxyEvent(method, path, body);

    const response = await make(deps)(event, lambdaContext(`ackline-${name}`, `lambda-${requests}`));

    expect(response.statusCode).toBe(500);
    expect(logger.lines).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        message: 'request failed',
        service: `ackline-${name}`,
        function_request_id: `lambda-${requests}`,
        cold_start: expect.any(Boolean),
        correlation_id: `api-${requests}`,
        error: expect.objectContaining({ message: 'storage unavailable' }),
      }),
    ]);
    expect(metrics.flushed).toEqual([]);
  });
});

describe('authorizer metrics and logs', () => {
  const secret = 'observability-test-secret';
  const authorizer = () => {
    const logger = new RecordingLogger({ serviceName: serviceNameOf('authorizer') });
    const metrics = new RecordingMetrics({
      namespace: METRICS_NAMESPACE,
      serviceName: serviceNameOf('authorizer'),
      defaultDimensions: { stage: STAGE },
    });
    const clock = new ManualClock(1_700_000_000_000);
    const handler = makeAuthorizer({
      verifier: new TokenVerifier({
        key: secretKeyFrom(secret),
        roleClaim: 'sub',
        clockToleranceSeconds: 0,
        clock,
      }),
      superuserRoles: ['admin'],
      logger,
      metrics,
    });
    return { logger, metrics, handler };
  };
  const event = (authorization?: string) =>
    ({
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:us-east-1:123456789012:api/dev/GET/admin/v2/x',
      headers: authorization === undefined ? {} : { Authorization: authorization },
      requestContext: { requestId: 'api-7' },
    }) as unknown as APIGatewayRequestAuthorizerEvent;

  it('counts a refused token and logs why, without the token', async () => {
    const { logger, metrics, handler } = authorizer();
    const forged = hs256Token({ sub: 'admin' }, 'another-secret');

    const result = await handler(event(`Bearer ${forged}`), lambdaContext('authorizer', 'lambda-7'));

    expect(result.context).toEqual({ tokenRefusal: 'signature' });
    expect(metrics.values()).toEqual([{ tokenRefused: 1 }]);
    expect(logger.lines).toEqual([
      expect.objectContaining({
        message: 'bearer token refused',
        reason: 'signature',
        service: 'ackline-authorizer',
        correlation_id: 'api-7',
        function_request_id: 'lambda-7',
      }),
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain(forged.split('.')[2]);
  });

  it('flushes nothing for a valid token', async () => {
    const { logger, metrics, handler } = authorizer();

    const result = await handler(event(`Bearer ${hs256Token({ sub: 'ops' }, secret)}`));

    expect(result.principalId).toBe('ops');
    expect(metrics.flushed).toEqual([]);
    expect(logger.lines).toEqual([]);
  });
});
