import { readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeHandler } from '../../functions/consumer-runner/handler.ts';
import { RUNNER_TIMEOUT_SECONDS } from '../../infra/constructs/subscription-consumer.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../infra/local/embedded-stack.ts';
import { type SqsPoller, startSqsPoller } from '../../infra/local/sqs-poller.ts';
import { createDependencies } from '../../shared/adapters/create-dependencies.ts';
import { InProcessFunctionInvoker } from '../../shared/adapters/lambda/in-process-function-invoker.ts';
import type { ConsumerMessage } from '../../shared/application/consumers/consumer-message.ts';
import { loadConfig } from '../../shared/config/load-config.ts';
import type { AcklineBatchEvent } from '../../shared/lambda/consumer-batch.ts';
import { acklineConsumer } from '../../shared/lambda/index.ts';
import {
  AdminApi,
  parseMessageId,
  SUPERUSER_ROLE,
  type SubscriptionType,
  TopicRef,
  tokenFor,
} from '../support/admin-fixtures.ts';
import {
  type EmbeddedProcess,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';

// Issue 4, criterion 9: an event-driven consumer (the user's handler, acklineConsumer()) behind
// its subscription runner, which the embedded stack's local event-source poller feeds as Lambda's
// SQS event-source mapping with reportBatchItemFailures would feed it; the runner invokes the
// handler in this process, as it invokes the user's function on AWS (issue 12, criterion 5: only
// the runner touches ackline's tables and queues). The stack runs in a child process (`npm
// start`); the runner runs here, configured from the environment the stack writes to
// endpoints.json, as the deployed runner is configured from its own.

interface Endpoints {
  readonly gateway: string;
  readonly dynamodb: string;
  readonly sqs: string;
  readonly env: Record<string, string>;
}

/** One call of the user's process(message): what it got, and when. */
interface Call {
  readonly message: ConsumerMessage;
  readonly atMs: number;
  readonly threw: boolean;
}

/** The nack backoff of every consumer here: 1 s, then 2 s (B(1000, 2000, 2)). */
const NACK_BACKOFF = { minDelayMs: 1000, maxDelayMs: 2000, multiplier: 2 };
/** Each poll's invocation of the runner, as the construct deploys it: its Lambda context's timeout. */
const RUNNER_INVOCATION = { functionName: 'consumer-runner', timeoutMs: RUNNER_TIMEOUT_SECONDS * 1000 };

let stack: EmbeddedProcess;
let endpoints: Endpoints;
let api: AdminApi;
let dynamodb: DynamoDBClient;
let sqs: SQSClient;
const pollers: SqsPoller[] = [];
const pollerErrors: unknown[] = [];

beforeAll(async () => {
  stack = await startEmbeddedProcess();
  endpoints = JSON.parse(await readFile(join(stack.dataDir, 'endpoints.json'), 'utf8')) as Endpoints;
  // The function's environment, as the CDK construct sets it on Lambda (credentials included: local ones).
  for (const [name, value] of Object.entries(endpoints.env)) vi.stubEnv(name, value);
  vi.stubEnv('POWERTOOLS_DEV', 'true');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'CRITICAL');
  api = new AdminApi(endpoints.gateway, tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET }));
  dynamodb = new DynamoDBClient({
    endpoint: endpoints.dynamodb,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  sqs = new SQSClient({ endpoint: endpoints.sqs, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
});

afterEach(async () => {
  await Promise.all(pollers.splice(0).map((poller) => poller.stop()));
  expect(pollerErrors.splice(0)).toEqual([]);
});

afterAll(async () => {
  vi.unstubAllEnvs();
  dynamodb?.destroy();
  sqs?.destroy();
  await stack?.stop('SIGTERM');
  if (stack) await rm(stack.dataDir, { recursive: true, force: true });
});

/** Subscribes an HTTP consumer (the registered consumer the function acts as) and returns its id. */
async function subscribe(
  topic: TopicRef,
  subscription: string,
  body: { subscriptionType: SubscriptionType } & Record<string, unknown>,
): Promise<string> {
  // functionTimeoutMs: 20 s unless the body says otherwise.
  const path = `/consumers/persistent/${topic.namespace.name}/${encodeURIComponent(topic.localName)}/subscription/${subscription}`;
  const result = await api.expectStatus(200, 'POST', path, {
    // An event-driven consumer: durable (not leased), its function's timeout as its ack timeout.
    body: {
      subscriptionInitialPosition: 'Earliest',
      consumerKind: 'lambda',
      functionTimeoutMs: 20_000,
      ...body,
    },
  });
  return (result.body as { consumerId: string }).consumerId;
}

/** The subscription's queue: `<prefix>s-<cursorId>` (`.fifo` when ordered), the cursor id read from the catalog. */
async function subscriptionQueue(
  topic: TopicRef,
  subscription: string,
  ordered: boolean,
): Promise<{ url: string; arn: string }> {
  const item = await dynamodb.send(
    new GetItemCommand({
      TableName: endpoints.env.ACKLINE_CATALOG_TABLE,
      Key: { pk: { S: `ML#${topic.name}` }, sk: { S: `S#${subscription}` } },
      ConsistentRead: true,
    }),
  );
  const cursorId = item.Item?.ci?.S;
  if (!cursorId) throw new Error(`no catalog item for ${subscription} on ${topic.name}`);
  const name = `${endpoints.env.ACKLINE_QUEUE_PREFIX}s-${cursorId}`; // doorbells: standard queues for every type
  void ordered;
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return { url: QueueUrl as string, arn: Attributes?.QueueArn as string };
}

/**
 * Runs the user's handler (acklineConsumer) for `consumerId` behind its subscription runner (its
 * Lambda entry point's shape, functions/consumer-runner) and the local event-source poller on the
 * subscription's queue. `fails(message)` says whether this
 * call of process() throws; `crashes(event)` whether the whole invocation fails (a timeout or a
 * crash, as Lambda reports one).
 */
async function runConsumer(
  topic: TopicRef,
  subscription: string,
  consumerId: string,
  options: {
    ordered?: boolean;
    fails?: (message: ConsumerMessage) => boolean;
    crashes?: (event: AcklineBatchEvent) => boolean;
    byName?: boolean;
  } = {},
): Promise<Call[]> {
  const calls: Call[] = [];
  const handler = acklineConsumer({
    process: async (message) => {
      const threw = options.fails?.(message) ?? false;
      calls.push({ message, atMs: Date.now(), threw });
      if (threw) throw new Error(`process refused ${message.payload}`);
    },
  });
  const runner = makeHandler(createDependencies(loadConfig(), 'consumer-runner'), {
    // By name, as the construct configures the runner (ACKLINE_TOPIC, ACKLINE_SUBSCRIPTION), or by id.
    consumer: options.byName ? { topic: topic.name, subscription } : { consumerId },
    target: new InProcessFunctionInvoker((event: AcklineBatchEvent) => {
      if (options.crashes?.(event)) throw new Error('Task timed out after 20.00 seconds');
      return handler(event);
    }),
    targetTimeoutMs: 20_000,
  });
  const queue = await subscriptionQueue(topic, subscription, options.ordered ?? false);
  pollers.push(
    startSqsPoller({
      client: sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      handler: runner,
      ...RUNNER_INVOCATION,
      idleMs: 50,
      onError: (error) => pollerErrors.push(error),
    }),
  );
  return calls;
}

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const succeeded = (calls: readonly Call[]) => calls.filter((call) => !call.threw);

describe('event-driven consumer on the local event-source poller', () => {
  it('acknowledges what process() returns from and nacks what it throws, with the backoff and count + 1', async () => {
    const topic = TopicRef.unique('lambda-shared');
    const consumerId = await subscribe(topic, 'fn', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryBackoff: NACK_BACKOFF,
    });
    const failOnce = new Set(['m1', 'm4', 'm7']);
    const calls = await runConsumer(topic, 'fn', consumerId, {
      fails: (message) => failOnce.has(message.payload) && message.redeliveryCount === 0,
    });

    const ids = await api.produce(topic, [
      { payload: 'm0', key: 'k0', properties: { origin: 'test' }, eventTime: 1_700_000_000_000 },
      ...Array.from({ length: 9 }, (_, i) => ({ payload: `m${i + 1}` })),
    ]);
    await eventually('every message succeeded', () => succeeded(calls).length >= ids.length);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // nothing more comes

    const successes = succeeded(calls);
    expect(successes.map((call) => call.message.payload).sort()).toEqual(ids.map((_, i) => `m${i}`).sort());
    expect(new Set(successes.map((call) => call.message.messageId))).toEqual(new Set(ids));
    const first = successes.find((call) => call.message.payload === 'm0')?.message;
    expect(first).toMatchObject({
      messageId: ids[0],
      key: 'k0',
      properties: { origin: 'test' },
      redeliveryCount: 0,
      eventTime: 1_700_000_000_000,
    });
    expect(first?.publishTime).toBeGreaterThan(0);
    for (const payload of failOnce) {
      const [refused, retried, ...more] = calls.filter((call) => call.message.payload === payload);
      expect(refused).toMatchObject({ threw: true, message: { redeliveryCount: 0 } });
      expect(retried).toMatchObject({ threw: false, message: { redeliveryCount: 1 } });
      expect(more).toEqual([]);
      // The backoff for count 0 is 1 s, counted from the nack, which follows the call.
      expect((retried as Call).atMs - (refused as Call).atMs).toBeGreaterThanOrEqual(1_000);
    }
    for (const call of successes.filter((call) => !failOnce.has(call.message.payload))) {
      expect(call.message.redeliveryCount).toBe(0);
    }
    await eventually('the backlog is empty', async () => (await api.backlogs(topic)).fn === 0);
  });

  it('finds its consumer by topic and subscription name, as the construct configures it', async () => {
    const topic = TopicRef.unique('lambda-by-name');
    const consumerId = await subscribe(topic, 'fn', { subscriptionType: 'Shared' });
    const calls = await runConsumer(topic, 'fn', consumerId, { byName: true });

    const ids = await api.produce(topic, [{ payload: 'a' }, { payload: 'b' }]);
    await eventually('both messages were processed', () => calls.length >= ids.length);

    expect(calls.map((call) => call.message.messageId).sort()).toEqual([...ids].sort());
  });

  it('runs the delivery check: an admin-acknowledged message never reaches process(), a delayed one waits', async () => {
    const topic = TopicRef.unique('lambda-check');
    const consumerId = await subscribe(topic, 'fn', { subscriptionType: 'Shared' });
    const [cancelled, kept] = await api.produceMany(topic, 2, 'now');
    const [delayed] = await api.produce(topic, [{ payload: 'later', deliverAfterMs: 2_000 }]);
    const publishedAtMs = Date.now();
    const { ledgerId, entryId } = parseMessageId(cancelled as string);
    const acknowledged = await api.acknowledge(topic, { ledgerId, entryId, subscriptionNames: ['fn'] });
    expect(acknowledged.status, acknowledged.text).toBe(204);

    const calls = await runConsumer(topic, 'fn', consumerId);
    await eventually('the delayed message arrived', () => calls.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(calls.map((call) => call.message.messageId)).toEqual([kept, delayed]);
    expect((calls[1] as Call).atMs - publishedAtMs).toBeGreaterThanOrEqual(1_500);
    await eventually('the backlog is empty', async () => (await api.backlogs(topic)).fn === 0);
  });

  it('dead-letters a message that always fails, past maxRedeliverCount, and acknowledges it', async () => {
    const topic = TopicRef.unique('lambda-dlq');
    const consumerId = await subscribe(topic, 'fn', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryBackoff: NACK_BACKOFF,
      deadLetterPolicy: { maxRedeliverCount: 2, initialSubscriptionName: 'dead' },
    });
    const calls = await runConsumer(topic, 'fn', consumerId, {
      fails: (message) => message.payload === 'poison',
    });
    const [poison] = await api.produce(topic, [{ payload: 'poison' }, { payload: 'fine' }]);

    const deadLetters = topic.namespace.topic(`${topic.localName}-fn-DLQ`);
    await eventually(
      'the dead-letter topic holds the message',
      async () => (await api.backlogs(deadLetters)).dead === 1,
    );
    const poisonCalls = calls.filter((call) => call.message.payload === 'poison');
    expect(poisonCalls.map((call) => [call.threw, call.message.redeliveryCount])).toEqual([
      [true, 0],
      [true, 1],
      [true, 2],
    ]);
    // B(1000, 2000, 2): 1 s after the first nack, 2 s after the second.
    const [c0, c1, c2] = poisonCalls as [Call, Call, Call];
    expect(c1.atMs - c0.atMs).toBeGreaterThanOrEqual(1_000);
    expect(c2.atMs - c1.atMs).toBeGreaterThanOrEqual(2_000);
    expect(succeeded(calls).map((call) => call.message.payload)).toEqual(['fine']);

    const peeked = await api.expectStatus(
      200,
      'GET',
      `${deadLetters.adminPath}/subscription/dead/position/1`,
    );
    expect(peeked.body).toMatchObject({
      payload: 'poison',
      properties: { REAL_TOPIC: topic.name, ORIGIN_MESSAGE_ID: poison, REAL_SUBSCRIPTION: 'fn' },
    });
    await eventually('the original backlog is empty', async () => (await api.backlogs(topic)).fn === 0);
  });

  it('counts an invocation that crashes as a delivery: held until the function timeout (+5 s), then back with the count + 1', async () => {
    const topic = TopicRef.unique('lambda-crash');
    const consumerId = await subscribe(topic, 'fn', { subscriptionType: 'Shared', functionTimeoutMs: 1_000 });
    let crashed = 0;
    const calls = await runConsumer(topic, 'fn', consumerId, {
      crashes: () => crashed++ === 0, // the first invocation fails, as a timeout or crash would
    });
    const producedAtMs = Date.now();
    const [id] = await api.produce(topic, [{ payload: 'once' }]);

    await eventually('the message came back', () => calls.length >= 1, 20_000);

    expect(crashed).toBeGreaterThanOrEqual(2);
    expect(calls.map((call) => [call.message.messageId, call.message.redeliveryCount])).toEqual([[id, 1]]);
    expect((calls[0] as Call).atMs - producedAtMs).toBeGreaterThanOrEqual(6_000);
    await eventually('the backlog is empty', async () => (await api.backlogs(topic)).fn === 0);
  });

  it('keeps the order of an Exclusive subscription (FIFO queue) and brings a nacked message back', async () => {
    const topic = TopicRef.unique('lambda-exclusive');
    const consumerId = await subscribe(topic, 'fn', {
      subscriptionType: 'Exclusive',
      negativeAckRedeliveryBackoff: NACK_BACKOFF,
    });
    const calls = await runConsumer(topic, 'fn', consumerId, {
      ordered: true,
      fails: (message) => message.payload === 'm2' && message.redeliveryCount === 0,
    });
    const ids = await api.produceMany(topic, 5);
    await eventually('every message succeeded', () => succeeded(calls).length >= ids.length);

    expect(calls.slice(0, 5).map((call) => call.message.payload)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(calls[5]).toMatchObject({ threw: false, message: { payload: 'm2', redeliveryCount: 1 } });
    expect((calls[5] as Call).atMs - (calls[2] as Call).atMs).toBeGreaterThanOrEqual(1_000);
    await eventually('the backlog is empty', async () => (await api.backlogs(topic)).fn === 0);
  });
});

describe('the runner bundle @ackline/cdk ships (packages/cdk/dist/consumer-runner, built by npm run build)', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /**
   * A local stand-in for Lambda's Invoke API (RequestResponse): runs the user's handler for each
   * signed request, and answers as Lambda does (a handler that throws: 200 with X-Amz-Function-Error).
   */
  async function localLambda(handler: (event: AcklineBatchEvent) => Promise<unknown>) {
    const requests: { url: string; authorization: string }[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', async () => {
        requests.push({ url: request.url ?? '', authorization: request.headers.authorization ?? '' });
        try {
          const answer = await handler(JSON.parse(body) as AcklineBatchEvent);
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        } catch (error) {
          response
            .writeHead(200, { 'content-type': 'application/json', 'X-Amz-Function-Error': 'Unhandled' })
            .end(JSON.stringify({ errorType: 'Error', errorMessage: String(error) }));
        }
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { requests, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it('configures itself from the environment the construct sets, invokes the function through the Invoke API and acknowledges', async () => {
    const topic = TopicRef.unique('lambda-bundle');
    await subscribe(topic, 'fn', { subscriptionType: 'Shared', negativeAckRedeliveryBackoff: NACK_BACKOFF });
    const calls: Call[] = [];
    const userHandler = acklineConsumer({
      process: (message) => {
        const threw = message.payload === 'no' && message.redeliveryCount === 0;
        calls.push({ message, atMs: Date.now(), threw });
        if (threw) throw new Error('refused');
      },
    });
    const lambda = await localLambda(userHandler);
    const functionArn = 'arn:aws:lambda:us-east-1:000000000000:function:billing';
    // The construct's environment for the runner (tables, queues: endpoints.env, already stubbed).
    vi.stubEnv('ACKLINE_TOPIC', topic.name);
    vi.stubEnv('ACKLINE_SUBSCRIPTION', 'fn');
    vi.stubEnv('ACKLINE_TARGET_FUNCTION', functionArn);
    vi.stubEnv('ACKLINE_TARGET_TIMEOUT_MS', '20000');
    vi.stubEnv('AWS_ENDPOINT_URL_LAMBDA', lambda.endpoint);
    const bundle = new URL('../../packages/cdk/dist/consumer-runner/index.mjs', import.meta.url);
    const { handler } = (await import(pathToFileURL(bundle.pathname).href)) as {
      handler: (event: unknown) => Promise<{ batchItemFailures: unknown[] }>;
    };
    const queue = await subscriptionQueue(topic, 'fn', false);
    pollers.push(
      startSqsPoller({
        client: sqs,
        queueUrl: queue.url,
        queueArn: queue.arn,
        handler: handler as never,
        ...RUNNER_INVOCATION,
        idleMs: 50,
        onError: (error) => pollerErrors.push(error),
      }),
    );

    const ids = await api.produce(topic, [{ payload: 'yes' }, { payload: 'no' }]);
    await eventually('both succeeded', () => succeeded(calls).length >= 2);

    expect(
      succeeded(calls)
        .map((call) => [call.message.messageId, call.message.redeliveryCount])
        .sort(),
    ).toEqual(
      [
        [ids[0], 0],
        [ids[1], 1],
      ].sort(),
    );
    expect(lambda.requests.length).toBeGreaterThanOrEqual(2);
    for (const request of lambda.requests) {
      expect(request.url).toBe(`/2015-03-31/functions/${encodeURIComponent(functionArn)}/invocations`);
      expect(request.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=acklinelocal\/\d{8}\/us-east-1\/lambda\//,
      );
    }
    await eventually('the backlog is empty', async () => (await api.backlogs(topic)).fn === 0);
  });
});
