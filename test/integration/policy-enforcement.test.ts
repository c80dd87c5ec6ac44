import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStatus } from '../../infra/local/start-local.ts';
import { AdminApi, SUPERUSER_ROLE, TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import { ConsumerApi, payloads, sleep, type TestConsumer } from '../support/consumer-fixtures.ts';
import { defaultDeadLetterTopic } from '../support/dead-letter-fixtures.ts';
import {
  type EmbeddedProcess,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';
import { call } from '../support/http-client.ts';

// Issue 13, criterion 3, measured over HTTP: retention and message TTL set through Pulsar's admin
// paths, enforced by the embedded stack's own maintenance runs (on a stack of this file's own,
// whose maintenance runs every 200 ms instead of every minute), and read back through the stats
// Pulsar answers: storageSize and internal stats' numberOfEntries/totalSize are what the policy
// keeps; expired messages leave the backlog and never reach a consumer.

const MAINTENANCE_INTERVAL_MS = 200;
const KiB = 1024;

let stack: EmbeddedProcess;
let admin: AdminApi;
let consumers: ConsumerApi;
const opened: TestConsumer[] = [];

beforeAll(async () => {
  // The deployment default set to Pulsar's 0/0 (ackline's own is -1/-1): what it deletes is
  // measured here, and the tests of what is kept without retention set -1/-1 on their topics.
  stack = await startEmbeddedProcess({
    env: {
      ACKLINE_MAINTENANCE_INTERVAL_MS: String(MAINTENANCE_INTERVAL_MS),
      ACKLINE_DEFAULT_RETENTION_TIME_IN_MINUTES: '0',
      ACKLINE_DEFAULT_RETENTION_SIZE_IN_MB: '0',
    },
  });
  const token = tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET });
  admin = new AdminApi(stack.url, token);
  consumers = new ConsumerApi(stack.url, token);
});

afterAll(async () => {
  await Promise.allSettled(opened.map((consumer) => consumer.close()));
  await stack?.stop('SIGTERM');
  if (stack) await rm(stack.dataDir, { recursive: true, force: true });
});

async function maintenanceRuns(): Promise<LocalStatus['maintenance']> {
  const result = await call(stack.url, 'GET', '/_local/status');
  expect(result.status).toBe(200);
  return (result.body as LocalStatus).maintenance;
}

/** Waits until two more maintenance runs completed: one of them started after this call. */
async function afterMaintenance(): Promise<void> {
  const before = await maintenanceRuns();
  const deadline = Date.now() + 15_000;
  let now = before;
  while (now.runs < before.runs + 2 && Date.now() < deadline) {
    await sleep(50);
    now = await maintenanceRuns();
  }
  expect(now.runs).toBeGreaterThanOrEqual(before.runs + 2);
  expect(now.failures).toBe(before.failures);
}

interface Storage {
  storageSize: number;
  msgInCounter: number;
  numberOfEntries: number;
  totalSize: number;
}

/** What the topic stores, as stats (storageSize) and internal stats (entries, size) answer it. */
async function storage(topic: TopicRef): Promise<Storage> {
  const stats = (await admin.expectStatus(200, 'GET', `${topic.adminPath}/stats`)).body as {
    storageSize: number;
    msgInCounter: number;
  };
  const internal = (await admin.expectStatus(200, 'GET', `${topic.adminPath}/internalStats`)).body as {
    numberOfEntries: number;
    totalSize: number;
  };
  return {
    storageSize: stats.storageSize,
    msgInCounter: stats.msgInCounter,
    numberOfEntries: internal.numberOfEntries,
    totalSize: internal.totalSize,
  };
}

/** One produce call per payload: each is one stored publish batch (retention deletes whole ones). */
async function produceEach(topic: TopicRef, texts: readonly string[]): Promise<void> {
  for (const payload of texts) await admin.produce(topic, [{ payload }]);
}

describe('retention and message TTL, enforced by the embedded stack maintenance', () => {
  it('namespace retention 0/0: what every subscription consumed is deleted, what the slowest still needs is kept', async () => {
    const topic = TopicRef.unique('retain-consumed');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'fast');
    await admin.createSubscription(topic, 'slow');
    // Kept while the namespace's retention keeps everything (the default, 0/0, would not).
    await admin.expectStatus(204, 'POST', `/admin/v2/namespaces/${topic.namespace.name}/retention`, {
      body: { retentionTimeInMinutes: -1, retentionSizeInMB: -1 },
    });
    const texts = Array.from({ length: 6 }, (_, i) => `${i}`.padEnd(100, '.')); // 100 bytes each
    await produceEach(topic, texts);
    const fast = await consumers.subscribe(topic, 'fast', { subscriptionType: 'Shared' });
    const slow = await consumers.subscribe(topic, 'slow', { subscriptionType: 'Shared' });
    opened.push(fast, slow);
    await fast.ack(await fast.receiveN(6, 10_000));
    await slow.ack(await slow.receiveN(2, 10_000));
    await afterMaintenance();
    expect(await storage(topic)).toEqual({
      storageSize: 600,
      msgInCounter: 6,
      numberOfEntries: 6,
      totalSize: 600,
    });

    // Pulsar's namespace path; 0/0: deleted as soon as every subscription consumed it.
    await admin.expectStatus(204, 'POST', `/admin/v2/namespaces/${topic.namespace.name}/retention`, {
      body: { retentionTimeInMinutes: 0, retentionSizeInMB: 0 },
    });
    await afterMaintenance();

    // The two messages both subscriptions consumed are gone; the four 'slow' has not are kept.
    expect(await storage(topic)).toEqual({
      storageSize: 400,
      msgInCounter: 6,
      numberOfEntries: 4,
      totalSize: 400,
    });
    expect(await admin.backlogs(topic)).toEqual({ fast: 0, slow: 4 });
    // A subscription created at Earliest now starts at the first message kept.
    await admin.createSubscription(topic, 'late', { initialPosition: 'Earliest' });
    expect((await admin.backlogs(topic)).late).toBe(4);
    await admin.expectStatus(204, 'DELETE', `${topic.adminPath}/subscription/late`);

    const rest = await slow.receiveN(4, 10_000);
    expect(payloads(rest)).toEqual(texts.slice(2));
    await slow.ack(rest);
    await afterMaintenance();
    expect(await storage(topic)).toEqual({
      storageSize: 0,
      msgInCounter: 6,
      numberOfEntries: 0,
      totalSize: 0,
    });
  });

  it('topic retention by size: consumed messages go, oldest first, until the topic holds retentionSizeInMB', async () => {
    const topic = TopicRef.unique('retain-size');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'sub');
    const texts = Array.from({ length: 6 }, (_, i) => `${i}`.padEnd(256 * KiB, 'x')); // 1.5 MiB in all
    await produceEach(topic, texts);
    // Pulsar's topic path; no time limit, 1 MB (Pulsar's MB: 1,048,576 bytes).
    await admin.expectStatus(204, 'POST', `${topic.adminPath}/retention`, {
      body: { retentionTimeInMinutes: -1, retentionSizeInMB: 1 },
    });
    await afterMaintenance();
    // Nothing consumed yet: nothing may go, whatever the size.
    expect((await storage(topic)).numberOfEntries).toBe(6);

    await admin.expectStatus(204, 'POST', `${topic.adminPath}/subscription/sub/skip_all`);
    await afterMaintenance();
    expect(await storage(topic)).toEqual({
      storageSize: 4 * 256 * KiB,
      msgInCounter: 6,
      numberOfEntries: 4,
      totalSize: 4 * 256 * KiB,
    });
  });

  it('topic message TTL: messages older than it are acknowledged, leave the backlog and never reach the consumer', async () => {
    const topic = TopicRef.unique('ttl');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'sub');
    // Connected, but not receiving until the messages expired.
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    opened.push(consumer);
    await admin.expectStatus(204, 'POST', `${topic.adminPath}/messageTTL?messageTTL=2`);
    // Retention keeps everything here: what the TTL does alone (under 0/0 the expired would go too).
    await admin.expectStatus(204, 'POST', `${topic.adminPath}/retention`, {
      body: { retentionTimeInMinutes: -1, retentionSizeInMB: -1 },
    });
    await admin.produceMany(topic, 3, 'old');
    expect((await admin.backlogs(topic)).sub).toBe(3);

    await sleep(2_100);
    await afterMaintenance();
    const stats = await admin.stats(topic);
    expect(stats.subscriptions.sub).toMatchObject({ msgBacklog: 0, unackedMessages: 0 });
    // Expired is acknowledged, not deleted (retention -1/-1: everything is kept).
    expect((await storage(topic)).numberOfEntries).toBe(3);

    // A receive already waiting when a new message comes gets that one only.
    const waiting = consumer.receive(10, 10_000);
    await sleep(200);
    await admin.produceMany(topic, 1, 'new');
    expect(payloads(await waiting)).toEqual(['new0']);
  });
  it("no policy anywhere under a 0/0 default (Pulsar's): what every subscription acknowledged goes, and everything on a topic nobody subscribes to", async () => {
    const topic = TopicRef.unique('default-retention');
    await admin.createTopic(topic);
    await admin.createSubscription(topic, 'sub');
    const texts = Array.from({ length: 4 }, (_, i) => `${i}`.padEnd(100, '.'));
    await produceEach(topic, texts);
    expect((await admin.expectStatus(200, 'GET', `${topic.adminPath}/retention?applied=true`)).body).toEqual({
      retentionTimeInMinutes: 0,
      retentionSizeInMB: 0,
    });
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    opened.push(consumer);
    await consumer.ack(await consumer.receiveN(1, 10_000));
    await afterMaintenance();
    expect(await storage(topic)).toEqual({
      storageSize: 300,
      msgInCounter: 4,
      numberOfEntries: 3,
      totalSize: 300,
    });

    const nobody = TopicRef.unique('default-retention-nosub');
    await admin.createTopic(nobody);
    await produceEach(nobody, texts);
    await afterMaintenance();
    expect(await storage(nobody)).toEqual({
      storageSize: 0,
      msgInCounter: 4,
      numberOfEntries: 0,
      totalSize: 0,
    });
  });
  it('under the 0/0 default, the dead-letter subscription ackline makes keeps dead letters for a reader who comes later', async () => {
    const topic = TopicRef.unique('default-retention-dlq');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 0,
      deadLetterPolicy: { maxRedeliverCount: 1 },
    });
    opened.push(consumer);
    const deadLetterTopic = defaultDeadLetterTopic(topic, 'sub');
    expect(await admin.backlogs(deadLetterTopic)).toEqual({ 'sub-DLQ-sub': 0 });
    await admin.produce(topic, [{ payload: 'poison' }]);
    const deadline = Date.now() + 10_000;
    while ((await admin.stats(deadLetterTopic)).msgInCounter < 1 && Date.now() < deadline) {
      const batch = await consumer.receive(10, 1_000);
      if (batch.length > 0) await consumer.nack(batch);
    }
    await afterMaintenance();

    expect((await storage(deadLetterTopic)).numberOfEntries).toBe(1);
    const reader = await consumers.subscribe(deadLetterTopic, 'late-reader', {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    opened.push(reader);
    expect(payloads(await reader.receiveN(1, 5_000))).toEqual(['poison']);
  });
});
