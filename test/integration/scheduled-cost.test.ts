import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbDelayedIndex } from '../../shared/adapters/dynamodb/dynamodb-delayed-index.ts';
import { DynamoDbLedger } from '../../shared/adapters/dynamodb/dynamodb-ledger.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import type { NewEntry } from '../../shared/ports/ledger.ts';
import { AdminApi, SUPERUSER_ROLE, TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import {
  type EmbeddedProcess,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';

// Issue 24, criterion 1: a page of the scheduled view costs the same DynamoDB requests and units
// whether 1,000 or 100,000 delayed entries wait, and at 100,000 a page of 100 answers within a
// second on the embedded stack. The entries are seeded in bulk through the ledger port (the
// stack's own tables, the DynamoDB ledger with its delayed index, as a publish writes them);
// the stack counts its DynamoDB requests and capacity (ACKLINE_METER=1, GET /_local/usage).

interface Endpoints {
  readonly gateway: string;
  readonly dynamodb: string;
  readonly env: Record<string, string>;
}

interface OperationUsage {
  readonly requests: number;
  readonly readCapacityUnits: number;
  readonly writeCapacityUnits: number;
}

const ENTRIES_PER_APPEND = 1_000;
/** Distinct deliverAt seconds per append: ten entries share each (index groups of 10). */
const DUES_PER_APPEND = 100;

let stack: EmbeddedProcess;
let api: AdminApi;
let dynamodb: DynamoDBClient;
let ledger: DynamoDbLedger;

beforeAll(async () => {
  // Maintenance would run in the measured window otherwise.
  stack = await startEmbeddedProcess({
    env: { ACKLINE_METER: '1', ACKLINE_MAINTENANCE_INTERVAL_MS: '3600000' },
  });
  const endpoints = JSON.parse(await readFile(join(stack.dataDir, 'endpoints.json'), 'utf8')) as Endpoints;
  api = new AdminApi(endpoints.gateway, tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET }));
  dynamodb = new DynamoDBClient({
    endpoint: endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ackline-local', secretAccessKey: 'ackline-local' },
  });
  const catalogTable = endpoints.env.ACKLINE_CATALOG_TABLE as string;
  ledger = new DynamoDbLedger(dynamodb, {
    catalogTable,
    entriesTable: endpoints.env.ACKLINE_ENTRIES_TABLE as string,
    maxEntriesPerLedger: 50_000,
    delayedIndex: new DynamoDbDelayedIndex(dynamodb, catalogTable),
  });
}, 60_000);

afterAll(async () => {
  dynamodb?.destroy();
  await stack?.stop('SIGTERM');
  if (stack) await rm(stack.dataDir, { recursive: true, force: true });
});

/** A topic with a Shared subscription and `count` delayed entries appended through the ledger port. */
async function seeded(count: number): Promise<TopicRef> {
  const topic = TopicRef.unique(`cost${count}`);
  await api.createTopic(topic);
  await api.createSubscription(topic, 'sub', { type: 'Shared', initialPosition: 'Earliest' });
  const partition = TopicName.parse(topic.name);
  const base = Date.now() + 3_600_000;
  for (let appended = 0; appended < count; appended += ENTRIES_PER_APPEND) {
    const entries: NewEntry[] = Array.from({ length: ENTRIES_PER_APPEND }, (_, i) => ({
      payload: `delayed-${appended + i}`,
      properties: {},
      deliverAtMs: base + ((appended / ENTRIES_PER_APPEND) * DUES_PER_APPEND + (i % DUES_PER_APPEND)) * 1000,
    }));
    await ledger.append(partition, entries, Date.now());
  }
  return topic;
}

/** The DynamoDB requests and write units of one call through the stack. */
async function measuredWrites(call: () => Promise<unknown>) {
  await api.expectStatus(200, 'DELETE', '/_local/usage');
  await call();
  const usage = (await api.expectStatus(200, 'GET', '/_local/usage')).body as {
    requests: Record<string, OperationUsage>;
  };
  const dynamo = Object.entries(usage.requests).filter(([name]) => name.startsWith('DynamoDB.'));
  return {
    requests: dynamo.reduce((sum, [, u]) => sum + u.requests, 0),
    writeUnits: dynamo.reduce((sum, [, u]) => sum + u.writeCapacityUnits, 0),
    batchWrites: usage.requests['DynamoDB.BatchWriteItem']?.writeCapacityUnits ?? 0,
  };
}

/** What one page cost (DynamoDB only) and how long it took. */
async function measuredPage(topic: TopicRef, query: string) {
  await api.expectStatus(200, 'DELETE', '/_local/usage');
  const started = performance.now();
  const page = await api.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/scheduled${query}`);
  const elapsedMs = performance.now() - started;
  const usage = (await api.expectStatus(200, 'GET', '/_local/usage')).body as {
    requests: Record<string, OperationUsage>;
  };
  const dynamo = Object.entries(usage.requests).filter(([name]) => name.startsWith('DynamoDB.'));
  const total = (pick: (u: OperationUsage) => number) => dynamo.reduce((sum, [, u]) => sum + pick(u), 0);
  return {
    body: page.body as { messages: { dueAt: number }[]; nextPageToken?: string },
    elapsedMs,
    requests: total((u) => u.requests),
    readUnits: total((u) => u.readCapacityUnits),
  };
}

describe('scheduled page cost against the number waiting', () => {
  it('a page of 100 costs the same at 1,000 and 100,000 delayed entries; within 1 s at 100,000', async () => {
    const small = await seeded(1_000);
    const large = await seeded(100_000);
    // Warm both (the function's first call reads the catalog, the ledger's chunk cache fills).
    await measuredPage(small, '?limit=100');
    await measuredPage(large, '?limit=100');

    const atSmall = await measuredPage(small, '?limit=100');
    const atLarge = await measuredPage(large, '?limit=100');
    // A later page, from the middle of the large one's due times.
    const middle = await measuredPage(large, `?limit=100&from=${atLarge.body.messages[99]?.dueAt ?? 0}`);

    console.log(
      `scheduled page of 100: 1,000 waiting: ${atSmall.requests} requests, ${atSmall.readUnits} RCU, ${atSmall.elapsedMs.toFixed(0)} ms; ` +
        `100,000 waiting: ${atLarge.requests} requests, ${atLarge.readUnits} RCU, ${atLarge.elapsedMs.toFixed(0)} ms; ` +
        `a later page: ${middle.requests} requests, ${middle.readUnits} RCU, ${middle.elapsedMs.toFixed(0)} ms`,
    );
    expect(atSmall.body.messages).toHaveLength(100);
    expect(atLarge.body.messages).toHaveLength(100);
    expect(atLarge.requests).toBe(atSmall.requests);
    expect(atLarge.readUnits).toBeCloseTo(atSmall.readUnits, 5);
    expect(middle.requests).toBe(atSmall.requests);
    expect(atLarge.elapsedMs).toBeLessThan(1_000);
  }, 600_000);

  it('a publish with delays costs one more write unit per distinct deliverAt (index groups of up to 100 entries)', async () => {
    const topic = TopicRef.unique('pubcost');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub', { type: 'Shared', initialPosition: 'Earliest' });
    const at = Date.now() + 3_600_000;
    const ten = (deliverAt: (i: number) => number | undefined) =>
      Array.from({ length: 10 }, (_, i) => {
        const due = deliverAt(i);
        return { payload: `m${i}`, ...(due === undefined ? {} : { deliverAt: due }) };
      });
    await api.produce(
      topic,
      ten(() => undefined),
    ); // warm: the rate snapshot, the catalog reads
    const plain = await measuredWrites(() =>
      api.produce(
        topic,
        ten(() => undefined),
      ),
    );
    const oneDelay = await measuredWrites(() =>
      api.produce(
        topic,
        ten(() => at),
      ),
    );
    const tenDelays = await measuredWrites(() =>
      api.produce(
        topic,
        ten((i) => at + i * 1000),
      ),
    );
    console.log(
      `publish of 10 (DynamoDB): no delay ${plain.requests} requests, ${plain.writeUnits} WCU; ` +
        `one deliverAt ${oneDelay.requests} requests, ${oneDelay.writeUnits} WCU; ` +
        `ten deliverAts ${tenDelays.requests} requests, ${tenDelays.writeUnits} WCU`,
    );
    // The delayed index's items: one per distinct deliverAt, each under 1 KB.
    expect(oneDelay.batchWrites).toBe(1);
    expect(tenDelays.batchWrites).toBe(10);
    expect(oneDelay.writeUnits - plain.writeUnits).toBe(1);
    expect(tenDelays.writeUnits - plain.writeUnits).toBe(10);
  }, 60_000);
});
