// What makes the authorizer's answer safe to cache (API Gateway keeps it per Authorization value
// for AUTHORIZER_RESULT_TTL_SECONDS and applies it to every path): the answer depends on the token
// alone and allows the whole API, and the API handlers refuse what a kept answer cannot see.
// In process, with a hand-driven clock.
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { makeHandler as makeAuthorizer, REFUSED_PRINCIPAL } from '../../../functions/authorizer/handler.ts';
import { policyAllows } from '../../../infra/local/authorizer-cache.ts';
import { TokenVerifier } from '../../../shared/adapters/jose-tokens.ts';
import { secretKeyFrom } from '../../../shared/adapters/token-keys.ts';
import { METRICS_NAMESPACE, serviceNameOf } from '../../../shared/config/load-config.ts';
import { TOKEN_EXPIRES_AT_MS, TOKEN_REFUSAL, TOKEN_VALID_FROM_MS } from '../../../shared/http/credentials.ts';
import { httpApi } from '../../../shared/http/http-api.ts';
import { ok } from '../../../shared/http/http-types.ts';
import { hs256Token } from '../../support/hs256-token.ts';
import { ManualClock } from '../../support/manual-clock.ts';
import { lambdaContext, RecordingLogger, RecordingMetrics } from './recording-observability.ts';

const SECRET = 'cached-authorization-secret';
const NOW_MS = 1_700_000_000_000;
const API = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3/dev';

function authorizer(clock = new ManualClock(NOW_MS)) {
  return makeAuthorizer({
    verifier: new TokenVerifier({
      key: secretKeyFrom(SECRET),
      roleClaim: 'sub',
      clockToleranceSeconds: 0,
      clock,
    }),
    superuserRoles: ['admin'],
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
    const token = hs256Token({ sub: 'ops' }, SECRET);

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
    const result = await authorizer()(authorizerEvent(hs256Token(claims, SECRET), `${API}/GET/admin/v2/x`));

    expect(result.context).toEqual({
      role: 'ops',
      superuser: 'false',
      ...(expiresAtMs === undefined ? {} : { [TOKEN_EXPIRES_AT_MS]: expiresAtMs }),
    });
  });
});

describe('the authorizer answer to a refused token', () => {
  it.each([
    ['an expired token', () => hs256Token({ sub: 'ops', exp: NOW_MS / 1000 - 1 }, SECRET), 'expired'],
    ['a forged token', () => hs256Token({ sub: 'admin' }, 'not-the-secret'), 'signature'],
    ['a token in another scheme', () => 'Basic b3BzOg==', 'missing'],
  ])('allows %s with the failed check and no role, for the handlers to refuse', async (_label, token, refusal) => {
    const value = token();
    const event = value.startsWith('Basic ')
      ? ({
          type: 'REQUEST',
          methodArn: `${API}/GET/admin/v2/x`,
          headers: { Authorization: value },
          requestContext: { requestId: 'api-1' },
        } as unknown as APIGatewayRequestAuthorizerEvent)
      : authorizerEvent(value, `${API}/GET/admin/v2/x`);

    const result = await authorizer()(event);

    expect(result.principalId).toBe(REFUSED_PRINCIPAL);
    expect(result.context).toEqual({ [TOKEN_REFUSAL]: refusal });
    expect(policyAllows(result.policyDocument, `${API}/POST/topics/persistent/t/n/x`)).toBe(true);
  });

  it('carries the start of a token not valid yet, which it verified as at that instant', async () => {
    const token = hs256Token({ sub: 'ops', nbf: NOW_MS / 1000 + 30 }, SECRET);

    const result = await authorizer()(authorizerEvent(token, `${API}/GET/admin/v2/x`));

    expect(result.context).toEqual({
      role: 'ops',
      superuser: 'false',
      [TOKEN_VALID_FROM_MS]: NOW_MS + 30_000,
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

  it('serves a token until its expiry, then answers 401 saying it expired', async () => {
    const context = { ...role, [TOKEN_EXPIRES_AT_MS]: String(NOW_MS + 1_000) };

    const before = await handler(event(context), lambdaContext('admin-api', 'l-1'));
    clock.advance(1_000);
    const after = await handler(event(context), lambdaContext('admin-api', 'l-2'));

    expect(before.statusCode).toBe(200);
    expect(after).toMatchObject({
      statusCode: 401,
      body: JSON.stringify({ reason: 'Unauthorized: the token expired' }),
    });
  });

  it('serves a token from its nbf on, answering 401 saying it is not valid yet before', async () => {
    const start = new ManualClock(NOW_MS);
    const api = httpApi(
      [{ method: 'GET', path: '/admin/v2/clusters', handler: async () => ok(['standalone']) }],
      new RecordingLogger({ serviceName: serviceNameOf('admin-api') }),
      undefined,
      start,
    );
    const context = { ...role, [TOKEN_VALID_FROM_MS]: String(NOW_MS + 1_000) };

    const before = await api(event(context), lambdaContext('admin-api', 'l-4'));
    start.advance(1_000);
    const after = await api(event(context), lambdaContext('admin-api', 'l-5'));

    expect(before).toMatchObject({
      statusCode: 401,
      body: JSON.stringify({ reason: 'Unauthorized: the token is not valid yet' }),
    });
    expect(after.statusCode).toBe(200);
  });

  it('answers 401 with the reason the authorizer refused the token for', async () => {
    const response = await handler(
      event({ [TOKEN_REFUSAL]: 'audience', principalId: REFUSED_PRINCIPAL }),
      lambdaContext('admin-api', 'l-6'),
    );

    expect(response).toMatchObject({
      statusCode: 401,
      body: JSON.stringify({ reason: 'Unauthorized: the token is not for this audience' }),
    });
  });

  it('answers 401 to two Authorization headers', async () => {
    const response = await handler(event(role, ['Bearer t', 'Bearer t']), lambdaContext('admin-api', 'l-3'));

    expect(response.statusCode).toBe(401);
  });
});
