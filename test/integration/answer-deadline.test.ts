import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeHandler } from '../../functions/data-api/handler.ts';
import { createDependencies } from '../../shared/adapters/create-dependencies.ts';
import { ROUND_RESERVE_MS } from '../../shared/application/consumers/receive-messages.ts';
import { loadConfig } from '../../shared/config/load-config.ts';
import { ANSWER_WITHIN_MS } from '../../shared/http/answer-deadline.ts';
import type { ApiHandler } from '../../shared/http/http-api.ts';
import { AdminApi, SUPERUSER_ROLE, TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import { ConsumerApi } from '../support/consumer-fixtures.ts';
import {
  type EmbeddedProcess,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';

// Issue 22, criterion 4: the data API answers by 25 s after the request's start
// (requestContext.requestTimeEpoch), whatever a cold start took of it, so API Gateway never
// answers 504 for a receive that claimed messages. The data-api handler runs in this process on
// the embedded stack's storage, handed proxy events whose request started some time ago, as a
// cold start would hand them.

let stack: EmbeddedProcess;
let admin: AdminApi;
let consumers: ConsumerApi;
let handler: ApiHandler;
let requests = 0;

beforeAll(async () => {
  stack = await startEmbeddedProcess();
  const endpoints = JSON.parse(await readFile(join(stack.dataDir, 'endpoints.json'), 'utf8')) as {
    gateway: string;
    env: Record<string, string>;
  };
  for (const [name, value] of Object.entries(endpoints.env)) vi.stubEnv(name, value);
  vi.stubEnv('POWERTOOLS_DEV', 'true');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'CRITICAL');
  const token = tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET });
  admin = new AdminApi(endpoints.gateway, token);
  consumers = new ConsumerApi(endpoints.gateway, token);
  handler = makeHandler(createDependencies(loadConfig(), 'data-api', { answersApiGateway: true }));
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await stack?.stop('SIGTERM');
  if (stack) await rm(stack.dataDir, { recursive: true, force: true });
});

/** The proxy event API Gateway hands the function for a receive whose request started at `startedAtMs`. */
function receiveEvent(consumerId: string, waitMs: number, startedAtMs: number): APIGatewayProxyEvent {
  requests++;
  const query = { maxMessages: '10', waitMs: String(waitMs) };
  return {
    resource: '/consumers/{proxy+}',
    path: `/consumers/${consumerId}/receive`,
    httpMethod: 'POST',
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: query,
    multiValueQueryStringParameters: { maxMessages: [query.maxMessages], waitMs: [query.waitMs] },
    pathParameters: { proxy: `${consumerId}/receive` },
    stageVariables: null,
    requestContext: {
      requestId: `deadline-${requests}`,
      requestTimeEpoch: startedAtMs,
      authorizer: { role: SUPERUSER_ROLE, superuser: 'true', principalId: SUPERUSER_ROLE },
    },
    body: null,
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEvent;
}

const context = { awsRequestId: 'deadline', getRemainingTimeInMillis: () => 29_000 } as never;

function payloadsOf(result: APIGatewayProxyResult): string[] {
  return (JSON.parse(result.body) as { messages: { payload: string }[] }).messages.map((m) => m.payload);
}

describe('the data API answers by its deadline, counted from the request start', () => {
  it('a 20 s long poll whose request started 15 s ago answers 21 s after that start, not 35 s', async () => {
    const topic = TopicRef.unique('late-poll');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const startedAtMs = Date.now() - 15_000;

    const result = await handler(receiveEvent(consumer.id, 20_000, startedAtMs), context);
    const answeredAfterMs = Date.now() - startedAtMs;

    expect(result.statusCode).toBe(200);
    expect(payloadsOf(result)).toEqual([]);
    // The wait ends ROUND_RESERVE_MS before the answer's deadline, within a second (SQS polls).
    expect(answeredAfterMs).toBeGreaterThanOrEqual(ANSWER_WITHIN_MS - ROUND_RESERVE_MS - 1_000);
    expect(answeredAfterMs).toBeLessThan(ANSWER_WITHIN_MS);
  });

  it('a receive past its last round claims nothing: the message stays for the next receive, first-hand', async () => {
    const topic = TopicRef.unique('late-claim');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.produce(topic, [{ payload: 'kept' }]);

    const late = await handler(
      receiveEvent(consumer.id, 0, Date.now() - (ANSWER_WITHIN_MS - ROUND_RESERVE_MS + 500)),
      context,
    );
    const inTime = await handler(receiveEvent(consumer.id, 0, Date.now()), context);

    expect([late.statusCode, payloadsOf(late)]).toEqual([200, []]);
    expect([inTime.statusCode, payloadsOf(inTime)]).toEqual([200, ['kept']]);
    expect(
      (JSON.parse(inTime.body) as { messages: { redeliveryCount: number }[] }).messages[0],
    ).toMatchObject({
      redeliveryCount: 0,
    });
  });
});
