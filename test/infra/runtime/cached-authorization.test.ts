// What makes the authorizer's answer safe to cache (API Gateway keeps it per Authorization value
// for AUTHORIZER_RESULT_TTL_SECONDS and applies it to every path): the answer depends on the token
// alone and allows the whole API, and the API handlers refuse what a kept answer cannot see.
// In process, with a hand-driven clock.
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { makeHandler as makeAuthorizer } from '../../../functions/authorizer/handler.ts';
import { policyAllows } from '../../../infra/local/authorizer-cache.ts';
import { signToken } from '../../../shared/adapters/hs256-tokens.ts';
import { METRICS_NAMESPACE, serviceNameOf } from '../../../shared/config/load-config.ts';
import { TOKEN_EXPIRES_AT_MS } from '../../../shared/http/credentials.ts';
import { httpApi } from '../../../shared/http/http-api.ts';
import { ok } from '../../../shared/http/http-types.ts';
import { ManualClock } from '../../support/manual-clock.ts';
import { lambdaContext, RecordingLogger, RecordingMetrics } from './recording-observability.ts';

const SECRET = 'cached-authorization-secret';
const NOW_MS = 1_700_000_000_000;
const API = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3/dev';

function authorizer(clock = new ManualClock(NOW_MS)) {
  return makeAuthorizer({
    tokenSecret: SECRET,
    superuserRoles: ['admin'],
    clock,
    logger: new RecordingLogger({ serviceName: serviceNameOf('authorizer') }),
    metrics: new RecordingMetrics({ namespace: METRICS_NAMESPACE, serviceName: serviceNameOf('authorizer') }),
  });
}

function authorizerEvent(token: string, methodArn: string): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn,
    headers: { Authorization: `Bearer ${token}` },
    multiValueHeaders: { Authorization: [`Bearer ${token}`] },
    requestContext: { requestId: 'api-1' },
  } as unknown as APIGatewayRequestAuthorizerEvent;
}

describe('the authorizer answer', () => {
  it('is the same for every path and method, and allows the whole stage of the API', async () => {
    const authorize = authorizer();
    const token = signToken({ sub: 'ops' }, SECRET);

    const first = await authorize(authorizerEvent(token, `${API}/GET/admin/v2/persistent/t/n`));
    const second = await authorize(authorizerEvent(token, `${API}/POST/topics/persistent/t/n/x`));

    expect(second).toEqual(first);
    for (const methodArn of [`${API}/DELETE/consumers/c1`, `${API}/PUT/admin/v2/persistent/t/n/x`]) {
      expect(policyAllows(first.policyDocument, methodArn)).toBe(true);
    }
    expect(policyAllows(first.policyDocument, `${API.replace('/dev', '/prod')}/GET/admin/v2/x`)).toBe(false);
  });

  it.each([
    [
      'carries the expiry of an expiring token in ms',
      { sub: 'ops', exp: NOW_MS / 1000 + 60 },
      NOW_MS + 60_000,
    ],
    ['carries no expiry for a token without one', { sub: 'ops' }, undefined],
  ])('%s', async (_label, claims, expiresAtMs) => {
    const result = await authorizer()(authorizerEvent(signToken(claims, SECRET), `${API}/GET/admin/v2/x`));

    expect(result.context).toEqual({
      role: 'ops',
      superuser: 'false',
      ...(expiresAtMs === undefined ? {} : { [TOKEN_EXPIRES_AT_MS]: expiresAtMs }),
    });
  });
});

describe('an API handler behind a kept answer', () => {
  const clock = new ManualClock(NOW_MS);
  const handler = httpApi(
    [{ method: 'GET', path: '/admin/v2/clusters', handler: async () => ok(['standalone']) }],
    new RecordingLogger({ serviceName: serviceNameOf('admin-api') }),
    undefined,
    clock,
  );
  const event = (authorizerContext: Record<string, unknown>, authorization = ['Bearer t']) =>
    ({
      resource: '/admin/{proxy+}',
      path: '/admin/v2/clusters',
      httpMethod: 'GET',
      headers: { Authorization: authorization.at(-1) },
      multiValueHeaders: { Authorization: authorization },
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: { proxy: 'v2/clusters' },
      body: null,
      isBase64Encoded: false,
      requestContext: { requestId: 'api-2', authorizer: authorizerContext },
    }) as unknown as APIGatewayProxyEvent;
  const role = { role: 'ops', superuser: 'false', principalId: 'ops' };

  it('serves a token until its expiry, then answers 401 with the gateway reason', async () => {
    const context = { ...role, [TOKEN_EXPIRES_AT_MS]: String(NOW_MS + 1_000) };

    const before = await handler(event(context), lambdaContext('admin-api', 'l-1'));
    clock.advance(1_000);
    const after = await handler(event(context), lambdaContext('admin-api', 'l-2'));

    expect(before.statusCode).toBe(200);
    expect(after).toMatchObject({
      statusCode: 401,
      body: JSON.stringify({ reason: 'Unauthorized: a valid bearer token is required' }),
    });
  });

  it('answers 401 to two Authorization headers', async () => {
    const response = await handler(event(role, ['Bearer t', 'Bearer t']), lambdaContext('admin-api', 'l-3'));

    expect(response.statusCode).toBe(401);
  });
});
