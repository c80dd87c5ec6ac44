import type { APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { API_INTEGRATION_TIMEOUT_MS, gatewayResponses } from '../../infra/api-routes.ts';
import { type LocalGateway, startLocalGateway } from '../../infra/local/local-gateway.ts';
import { sendRaw } from '../support/raw-http.ts';

// API Gateway's integration timeout on the local gateway: a function that has not answered after
// the timeout (29 s on AWS; 300 ms here, injected) gets the client a 504 with a JSON reason, as
// API Gateway answers, while the function runs on and its late answer or failure is dropped.

const TIMEOUT_MS = 300;

const allow = (event: APIGatewayRequestAuthorizerEvent) => ({
  principalId: 'alice',
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow' as const, Resource: event.methodArn }],
  },
});

let gateway: LocalGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/** A gateway whose admin-api handler answers with `answer` once `finish` is called (never, unless told). */
async function start(answer: () => Promise<APIGatewayProxyResult>) {
  gateway = await startLocalGateway({
    port: 0,
    host: '127.0.0.1',
    integrationTimeoutMs: TIMEOUT_MS,
    functions: {
      authorizer: async (event) => allow(event),
      api: { 'admin-api': answer, 'data-api': answer },
    },
  });
  const url = gateway.url;
  return () => {
    const started = Date.now();
    return sendRaw(url, {
      method: 'GET',
      target: '/admin/v2/slow',
      headers: [['Authorization', 'Bearer alice']],
    }).then((response) => ({ ...response, elapsedMs: Date.now() - started }));
  };
}

/** A promise and its resolve/reject, for a handler that answers when the test says so. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("the local gateway enforces API Gateway's integration timeout", () => {
  it('defaults to API Gateway’s 29 s', () => {
    expect(API_INTEGRATION_TIMEOUT_MS).toBe(29_000);
  });

  it('answers 504 with a JSON reason once the function has not answered in time', async () => {
    const late = deferred<APIGatewayProxyResult>();
    const get = await start(() => late.promise);

    const response = await get();
    late.resolve({ statusCode: 200, body: '{"late":true}' });

    expect(response.status).toBe(gatewayResponses.integrationTimeout.statusCode);
    expect(response.status).toBe(504);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.text)).toEqual({ reason: gatewayResponses.integrationTimeout.reason });
    expect(response.elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(response.elapsedMs).toBeLessThan(TIMEOUT_MS + 2000);
  });

  it('drops a late failure (no 502, no crash) and keeps serving', async () => {
    const late = deferred<APIGatewayProxyResult>();
    let calls = 0;
    const get = await start(() =>
      ++calls === 1 ? late.promise : Promise.resolve({ statusCode: 200, body: '{}' }),
    );

    const first = await get();
    late.reject(new Error('failed after the client was answered'));
    const second = await get();

    expect([first.status, second.status]).toEqual([504, 200]);
  });

  it("stamps the request's start (requestTimeEpoch) on arrival, before the authorizer ran, as API Gateway does", async () => {
    const AUTHORIZER_MS = 200;
    let seen: { requestTimeEpoch: number; invokedAtMs: number } | undefined;
    gateway = await startLocalGateway({
      port: 0,
      host: '127.0.0.1',
      integrationTimeoutMs: TIMEOUT_MS,
      functions: {
        authorizer: async (event) => {
          await new Promise((resolve) => setTimeout(resolve, AUTHORIZER_MS));
          return allow(event);
        },
        api: {
          'admin-api': async (event) => {
            seen = { requestTimeEpoch: event.requestContext.requestTimeEpoch, invokedAtMs: Date.now() };
            return { statusCode: 204, body: '' };
          },
          'data-api': async () => ({ statusCode: 204, body: '' }),
        },
      },
    });
    const sentAtMs = Date.now();

    const response = await sendRaw(gateway.url, {
      method: 'GET',
      target: '/admin/v2/slow',
      headers: [['Authorization', 'Bearer alice']],
    });

    expect(response.status).toBe(204);
    expect(seen?.requestTimeEpoch).toBeGreaterThanOrEqual(sentAtMs);
    expect((seen?.invokedAtMs ?? 0) - (seen?.requestTimeEpoch ?? 0)).toBeGreaterThanOrEqual(
      AUTHORIZER_MS - 5,
    );
  });

  it('passes an answer given in time through unchanged', async () => {
    const get = await start(
      () =>
        new Promise((resolve) =>
          setTimeout(() => resolve({ statusCode: 201, body: '{"ok":1}' }), TIMEOUT_MS / 3),
        ),
    );

    const response = await get();

    expect(response.status).toBe(201);
    expect(response.text).toBe('{"ok":1}');
  });
});
