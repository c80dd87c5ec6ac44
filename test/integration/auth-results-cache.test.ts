import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { gatewayResponses } from '../../infra/api-routes.ts';
import { type LocalGateway, startLocalGateway } from '../../infra/local/local-gateway.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { sendRaw } from '../support/raw-http.ts';

// The local gateway's authorizer results cache, as API Gateway keeps a REQUEST authorizer's answers
// with identity source `method.request.header.Authorization`: one answer per header value, policy
// and context, evaluated against each request's own method ARN, for the TTL. Fake functions
// behind a real gateway on loopback; the clock moves by hand.

const TTL_MS = 300_000;
const API = 'arn:aws:execute-api:us-east-1:123456789012:ackline-local/local';

type Answer = (event: APIGatewayRequestAuthorizerEvent) => APIGatewayAuthorizerResult;

const allowWholeApi: Answer = (event) => policy('Allow', `${API}/*`, event);

function policy(effect: 'Allow' | 'Deny', resource: string, event: APIGatewayRequestAuthorizerEvent) {
  const authorization = event.headers?.Authorization ?? '';
  return {
    principalId: authorization.replace('Bearer ', ''),
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }],
    },
    context: { role: authorization.replace('Bearer ', '') },
  };
}

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/** A gateway whose authorizer answers with `answer` (or throws), counting invocations and what reached the handler. */
async function start(answer: Answer | 'throw' | 'fail', ttlMs = TTL_MS) {
  const clock = new ManualClock(1_700_000_000_000);
  const invocations: string[] = [];
  const reached: unknown[] = [];
  gateway = await startLocalGateway({
    port: 0,
    host: '127.0.0.1',
    authorizerResultTtlMs: ttlMs,
    clock,
    functions: {
      authorizer: async (event) => {
        invocations.push(event.methodArn);
        if (answer === 'throw') throw new Error('Unauthorized');
        if (answer === 'fail') throw new Error('token secret ackline/dev/token-secret does not exist');
        return answer(event);
      },
      api: {
        'admin-api': async (event: APIGatewayProxyEvent) => {
          reached.push(event.requestContext.authorizer);
          return { statusCode: 200, body: '{}' };
        },
        'data-api': async () => ({ statusCode: 200, body: '{}' }),
      },
    },
  });
  const url = gateway.url;
  const get = (path: string, authorization: readonly string[] = ['Bearer alice']) =>
    sendRaw(url, { method: 'GET', target: path, headers: authorization.map((v) => ['Authorization', v]) });
  return { clock, invocations, reached, get };
}

describe('the local gateway keeps authorizer answers', () => {
  it('invokes the authorizer once per header value within the TTL, and hands every request the kept context', async () => {
    const { invocations, reached, get } = await start(allowWholeApi);

    const statuses = [
      (await get('/admin/v2/a')).status,
      (await get('/admin/v2/b')).status,
      (await get('/admin/v2/a', ['Bearer bob'])).status,
    ];

    expect(statuses).toEqual([200, 200, 200]);
    expect(invocations).toEqual([`${API}/GET/admin/v2/a`, `${API}/GET/admin/v2/a`]);
    expect(reached).toEqual([
      { role: 'alice', principalId: 'alice' },
      { role: 'alice', principalId: 'alice' },
      { role: 'bob', principalId: 'bob' },
    ]);
  });

  it('invokes it again once the TTL has passed', async () => {
    const { clock, invocations, get } = await start(allowWholeApi);

    await get('/admin/v2/a');
    clock.advance(TTL_MS - 1);
    await get('/admin/v2/a');
    clock.advance(1);
    await get('/admin/v2/a');

    expect(invocations).toHaveLength(2);
  });

  it('keys on the last Authorization line, as API Gateway maps a repeated header', async () => {
    const { invocations, reached, get } = await start(allowWholeApi);

    await get('/admin/v2/a', ['Bearer alice']);
    await get('/admin/v2/a', ['Bearer mallory', 'Bearer alice']);

    expect(invocations).toHaveLength(1);
    expect(reached).toHaveLength(2);
  });

  it.each([
    ['no Authorization header', []],
    ['an empty Authorization header', ['']],
  ])('answers %s with 401 without invoking the authorizer', async (_label, authorization) => {
    const { invocations, reached, get } = await start(allowWholeApi);

    const response = await get('/admin/v2/a', authorization);

    expect(response.status).toBe(401);
    expect(JSON.parse(response.text)).toEqual({ reason: gatewayResponses.unauthorized.reason });
    expect(invocations).toEqual([]);
    expect(reached).toEqual([]);
  });

  it('evaluates a kept policy against each method ARN: one naming a single method denies the next path', async () => {
    const { invocations, get } = await start((event) => policy('Allow', event.methodArn, event));

    const first = await get('/admin/v2/a');
    const other = await get('/admin/v2/b');

    expect([first.status, other.status]).toEqual([200, 403]);
    expect(JSON.parse(other.text)).toEqual({ reason: gatewayResponses.accessDenied.reason });
    expect(invocations).toHaveLength(1);
  });

  it('keeps a Deny as it keeps an Allow', async () => {
    const { invocations, reached, get } = await start((event) => policy('Deny', `${API}/*`, event));

    const statuses = [(await get('/admin/v2/a')).status, (await get('/admin/v2/b')).status];

    expect(statuses).toEqual([403, 403]);
    expect(invocations).toHaveLength(1);
    expect(reached).toEqual([]);
  });

  it('lets a Deny statement win over an Allow that also matches', async () => {
    const { get } = await start((event) => ({
      ...allowWholeApi(event),
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          { Action: 'execute-api:*', Effect: 'Allow', Resource: `${API}/*` },
          { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: `${API}/DELETE/*` },
        ],
      },
    }));

    const statuses = [
      (await get('/admin/v2/a')).status,
      (
        await sendRaw(gateway?.url ?? '', {
          method: 'DELETE',
          target: '/admin/v2/a',
          headers: [['Authorization', 'Bearer alice']],
        })
      ).status,
    ];

    expect(statuses).toEqual([200, 403]);
  });

  it('does not keep a thrown refusal: the authorizer is asked again', async () => {
    const { invocations, get } = await start('throw');

    const statuses = [(await get('/admin/v2/a')).status, (await get('/admin/v2/a')).status];

    expect(statuses).toEqual([401, 401]);
    expect(invocations).toHaveLength(2);
  });

  it('answers 500 in the gateway response shape when the authorizer fails otherwise, and keeps nothing', async () => {
    const { invocations, reached, get } = await start('fail');

    const responses = [await get('/admin/v2/a'), await get('/admin/v2/a')];

    for (const response of responses) {
      expect(response.status).toBe(gatewayResponses.authorizerFailure.statusCode);
      expect(JSON.parse(response.text)).toEqual({ reason: gatewayResponses.authorizerFailure.reason });
    }
    expect(invocations).toHaveLength(2);
    expect(reached).toEqual([]);
  });

  it('keeps nothing with a TTL of 0, and then invokes the authorizer even without a header', async () => {
    const { invocations, get } = await start(allowWholeApi, 0);

    await get('/admin/v2/a');
    await get('/admin/v2/a');
    const withoutHeader = await get('/admin/v2/a', []);

    expect(invocations).toHaveLength(3);
    expect(withoutHeader.status).toBe(200); // the fake allows anyone; ackline's authorizer refuses
  });
});
