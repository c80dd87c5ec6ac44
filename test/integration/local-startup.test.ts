import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import type { LocalStatus } from '../../infra/local/start-local.ts';
import { AdminApi, SUPERUSER_ROLE, TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import { ConsumerApi, payloads, sleep } from '../support/consumer-fixtures.ts';
import {
  type EmbeddedProcess,
  makeDataDir,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';
import { call } from '../support/http-client.ts';

// The embedded stack's start-up and schedules (issue "delivery engine", criterion 4): nothing stored
// keeps the stack from starting. A subscription whose queue cannot be rebuilt (here: its catalog
// item names a cursor no SQS queue can be named after) is logged, shown at GET /_local/status and
// retried in the background while every other subscription is served; once the data is repaired
// the retry succeeds. Maintenance runs on a timer, as EventBridge runs it on AWS (every minute;
// 200 ms here).

const MAINTENANCE_INTERVAL_MS = 200;
const token = tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET });

let stack: EmbeddedProcess | undefined;
let dataDir: string | undefined;

afterAll(async () => {
  await stack?.stop('SIGTERM');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function start(dir: string): Promise<EmbeddedProcess> {
  stack = await startEmbeddedProcess({
    dataDir: dir,
    env: { ACKLINE_MAINTENANCE_INTERVAL_MS: String(MAINTENANCE_INTERVAL_MS) },
  });
  return stack;
}

async function status(running: EmbeddedProcess): Promise<LocalStatus> {
  const result = await call(running.url, 'GET', '/_local/status');
  expect(result.status).toBe(200);
  return result.body as LocalStatus;
}

async function waitFor(running: EmbeddedProcess, done: (s: LocalStatus) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let last = await status(running);
  while (!done(last) && Date.now() < deadline) {
    await sleep(100);
    last = await status(running);
  }
  return last;
}

/** Sets the subscription's cursorId (`ci` of its catalog item `ML#<partition>` / `S#<subscription>`), returning the old one. */
async function setCursorId(
  running: EmbeddedProcess,
  topic: TopicRef,
  subscription: string,
  cursorId: string,
) {
  const endpoints = JSON.parse(await readFile(join(running.dataDir, 'endpoints.json'), 'utf8')) as {
    dynamodb: string;
    env: Record<string, string>;
  };
  const client = new DynamoDBClient({
    endpoint: endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'acklinelocal', secretAccessKey: 'acklinelocal' },
  });
  try {
    const result = await client.send(
      new UpdateItemCommand({
        TableName: endpoints.env.ACKLINE_CATALOG_TABLE,
        Key: { pk: { S: `ML#${topic.name}` }, sk: { S: `S#${subscription}` } },
        UpdateExpression: 'SET ci = :ci',
        ConditionExpression: 'attribute_exists(ci)',
        ExpressionAttributeValues: { ':ci': { S: cursorId } },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return result.Attributes?.ci?.S as string;
  } finally {
    client.destroy();
  }
}

describe('the embedded stack starts whatever it has stored', () => {
  it('runs maintenance on its timer, and serves a subscription whose queue cannot be rebuilt as soon as its data is repaired', async () => {
    dataDir = await makeDataDir('ackline-startup-');
    let running = await start(dataDir);
    const admin = new AdminApi(running.url, token);
    const topic = TopicRef.unique('startup');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'good');
    await admin.createSubscription(topic, 'broken');
    await admin.produceMany(topic, 3);
    const maintenance = (await waitFor(running, (s) => s.maintenance.runs >= 2, 10_000)).maintenance;
    const original = await setCursorId(running, topic, 'broken', 'no queue may have this name!');

    expect(await running.stop('SIGTERM')).toBe(0);
    running = await start(dataDir);
    const broken = await status(running);
    const consumers = new ConsumerApi(running.url, token);
    const good = await consumers.subscribe(topic, 'good', { subscriptionType: 'Shared' });
    const fromGood = await good.receiveN(3, 10_000);
    await setCursorId(running, topic, 'broken', original);
    const repaired = await waitFor(running, (s) => s.rebuild.state === 'done', 15_000);
    const other = await consumers.subscribe(topic, 'broken', { subscriptionType: 'Shared' });
    const fromRepaired = await other.receiveN(3, 10_000);

    // A tick that finds the previous run still going is skipped (as EventBridge's overlapping runs
    // would queue): on a loaded machine some are, which says nothing about maintenance itself.
    expect(maintenance).toMatchObject({ intervalMs: MAINTENANCE_INTERVAL_MS, failures: 0 });
    expect(broken.rebuild).toMatchObject({ state: 'retrying', attempts: 1 });
    expect(broken.rebuild.lastError).toContain(JSON.stringify([topic.name, 'broken']));
    expect(running.output()).toContain('restore subscription doorbells: attempt 1 failed');
    expect(payloads(fromGood).sort()).toEqual(['m0', 'm1', 'm2']);
    expect(repaired.rebuild).toMatchObject({ state: 'done' });
    expect(repaired.rebuild.attempts).toBeGreaterThan(1);
    expect(payloads(fromRepaired).sort()).toEqual(['m0', 'm1', 'm2']);
  });
});
