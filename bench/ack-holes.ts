import { performance } from 'node:perf_hooks';
import { DynamoDbDispatchStore } from '../shared/adapters/dynamodb/dynamodb-dispatch-store.ts';
import { queryAll } from '../shared/adapters/dynamodb/dynamodb-support.ts';
import { DynamoDbTopicCatalog } from '../shared/adapters/dynamodb/dynamodb-topic-catalog.ts';
import { itemBytes } from '../shared/adapters/dynamodb/item-size.ts';
import { catalogTable, cursorsTable } from '../shared/config/resources.ts';
import { Position } from '../shared/domain/position.ts';
import { TopicName } from '../shared/domain/topic-name.ts';
import { DISPATCH_PAGE_SIZE, type PageRef } from '../shared/ports/dispatch-store.ts';
import { type BenchStack, note, Progress, runLimited, sumWhere } from './harness.ts';

export interface AckHolesOptions {
  /** Entries published; every other one is acknowledged. */
  readonly entries: number;
  /** Acknowledgements per ack call: Pulsar's maxAcknowledgmentGroupSize. */
  readonly groupSize: number;
  /** Entries a consumer holds unacknowledged at once; acks are shuffled within it. */
  readonly window: number;
  /** Acknowledgements of the second run, in random order across the whole topic. */
  readonly randomOrderSample: number;
}

export interface AckHolesResult {
  readonly entries: number;
  readonly acknowledgements: number;
  readonly holes: number;
  readonly groupSize: number;
  readonly window: number;
  readonly publishSeconds: number;
  readonly ackSeconds: number;
  readonly acksPerSecond: number;
  readonly writeUnitsPerAck: number;
  readonly readUnitsPerAck: number;
  readonly updateItemsPerAck: number;
  readonly cursorItems: number;
  readonly storedBytesPerHole: number;
  readonly restartSeconds: number;
  readonly verified: {
    readonly acknowledgementsFound: number;
    readonly backlog: number;
    readonly lost: number;
  };
  /** The same acknowledgements sent in random order across the whole topic (worst case for the page layout). */
  readonly randomOrder: { readonly acknowledgements: number; readonly writeUnitsPerAck: number };
  readonly wallSeconds: number;
}

const TOPIC = 'persistent://public/default/bench-holes';
const TOPIC_PATH = '/persistent/public/default/bench-holes';

/**
 * `entries` entries, every other one acknowledged individually over the
 * consumer HTTP API (message ids, `groupSize` per call, in random order
 * within a window of `window` entries, as a consumer acknowledging in
 * processing order and grouping its acks would), then a restart of the
 * embedded stack and a check of the stored cursor against what was sent.
 */
export async function runAckHoles(stack: BenchStack, options: AckHolesOptions): Promise<AckHolesResult> {
  const wallStarted = performance.now();
  const ids = await publish(stack, options.entries);
  const publishSeconds = (performance.now() - wallStarted) / 1000;

  const consumerId = await subscribe(stack, 'holes');
  const acked = ids.filter((_, index) => index % 2 === 1);
  const ordered = windowShuffled(acked, options.window / 2);
  await stack.usage(true);
  const ackStarted = performance.now();
  await acknowledge(stack, consumerId, ordered, {
    groupSize: options.groupSize,
    label: 'ack holes: acknowledge',
  });
  const ackSeconds = (performance.now() - ackStarted) / 1000;
  const usage = await stack.usage(true);

  // Worst case for the page layout: random order across the whole topic, on a second subscription.
  const randomConsumer = await subscribe(stack, 'holes-random-order');
  const sample = windowShuffled(acked, acked.length).slice(0, options.randomOrderSample);
  await stack.usage(true);
  await acknowledge(stack, randomConsumer, sample, {
    groupSize: options.groupSize,
    label: 'ack holes: random-order sample',
  });
  const randomUsage = await stack.usage(true);

  const cursorId = await cursorIdOf(stack, 'holes');
  const restartSeconds = (await stack.restart()) / 1000;
  const verified = await verify(stack, cursorId, ids);
  const stored = await cursorItems(stack, cursorId);
  const holes = ids.length - acked.length;
  return {
    entries: ids.length,
    acknowledgements: acked.length,
    holes,
    groupSize: options.groupSize,
    window: options.window,
    publishSeconds,
    ackSeconds,
    acksPerSecond: acked.length / ackSeconds,
    writeUnitsPerAck: sumWhere(usage.requests, 'DynamoDB.', 'writeCapacityUnits') / acked.length,
    readUnitsPerAck: sumWhere(usage.requests, 'DynamoDB.', 'readCapacityUnits') / acked.length,
    updateItemsPerAck: sumWhere(usage.requests, 'DynamoDB.UpdateItem', 'requests') / acked.length,
    cursorItems: stored.items,
    storedBytesPerHole: stored.bytes / holes,
    restartSeconds,
    verified,
    randomOrder: {
      acknowledgements: sample.length,
      writeUnitsPerAck: sumWhere(randomUsage.requests, 'DynamoDB.', 'writeCapacityUnits') / sample.length,
    },
    wallSeconds: (performance.now() - wallStarted) / 1000,
  };
}

/** Publishes `count` one-byte messages in calls of 1,000; answers their ids in order. */
async function publish(stack: BenchStack, count: number): Promise<string[]> {
  await stack.call('PUT', `/admin/v2${TOPIC_PATH}`, undefined, [204, 200]);
  // Published before anyone subscribes: under the default retention (Pulsar's 0/0) maintenance
  // would delete the entries while they are published, as Pulsar would. Keep them.
  await stack.call(
    'POST',
    `/admin/v2${TOPIC_PATH}/retention`,
    { retentionTimeInMinutes: -1, retentionSizeInMB: -1 },
    [204],
  );
  const calls = Math.ceil(count / 1000);
  const ids: string[][] = new Array(calls);
  const progress = new Progress('ack holes: publish', count);
  await runLimited(calls, 4, async (call) => {
    const size = Math.min(1000, count - call * 1000);
    const result = await stack.call<{ messagePublishResults: { messageId: string }[] }>(
      'POST',
      `/topics${TOPIC_PATH}`,
      { messages: Array.from({ length: size }, () => ({ payload: 'h' })) },
    );
    ids[call] = result.messagePublishResults.map((r) => r.messageId);
    progress.add(size);
  });
  progress.finish();
  return ids.flat();
}

async function subscribe(stack: BenchStack, subscription: string): Promise<string> {
  const started = performance.now();
  const { consumerId } = await stack.call<{ consumerId: string }>(
    'POST',
    `/consumers${TOPIC_PATH}/subscription/${subscription}`,
    { subscriptionType: 'Shared', subscriptionInitialPosition: 'Earliest' },
  );
  note(`  subscribed ${subscription} at Earliest in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return consumerId;
}

/** Shuffles within consecutive windows of `window` items (Fisher-Yates, seeded). */
function windowShuffled<T>(items: readonly T[], window: number): T[] {
  const out = [...items];
  let seed = 0x2545f491;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  for (let start = 0; start < out.length; start += window) {
    const end = Math.min(out.length, start + window);
    for (let i = end - 1; i > start; i--) {
      const j = start + Math.floor(random() * (i - start + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
  }
  return out;
}

async function acknowledge(
  stack: BenchStack,
  consumerId: string,
  ids: readonly string[],
  { groupSize, label }: { groupSize: number; label: string },
): Promise<void> {
  const progress = new Progress(label, ids.length);
  const groups = Math.ceil(ids.length / groupSize);
  await runLimited(groups, 4, async (group) => {
    const messageIds = ids.slice(group * groupSize, (group + 1) * groupSize);
    await stack.call('POST', `/consumers/${consumerId}/ack`, { messageIds });
    progress.add(messageIds.length);
  });
  progress.finish();
}

async function cursorIdOf(stack: BenchStack, subscription: string): Promise<string> {
  const record = await stack.withDynamoDb((client) =>
    new DynamoDbTopicCatalog(client, stack.tableName(catalogTable)).getSubscription(
      TopicName.parse(TOPIC),
      subscription,
    ),
  );
  if (!record) throw new Error(`subscription ${subscription} not found`);
  return record.cursorId;
}

/**
 * Reads the cursor back from the restarted stack's storage (the delivery engine's head and ack
 * pages, through the store alone, not the use cases that wrote them) and compares it with what was
 * sent: every odd entry acknowledged, every even one still in the backlog; then asks the admin API
 * for the backlog.
 */
async function verify(
  stack: BenchStack,
  cursorId: string,
  ids: readonly string[],
): Promise<AckHolesResult['verified']> {
  const positions = ids.map((id) => Position.of(...(id.split(':') as [string, string])));
  const acknowledged = await stack.withDynamoDb(async (client) => {
    const store = new DynamoDbDispatchStore(client, stack.tableName(cursorsTable));
    const record = await store.readHead(cursorId);
    if (!record) throw new Error('cursor missing after the restart');
    const { markDelete } = record.head;
    const pageOf = (position: Position): PageRef => ({
      ledgerId: position.ledgerId,
      page: position.entryId / DISPATCH_PAGE_SIZE,
    });
    const refs = new Map<string, PageRef>();
    for (const position of positions) {
      const ref = pageOf(position);
      refs.set(`${ref.ledgerId}:${ref.page}`, ref);
    }
    const pages = new Map(
      (await store.readPages(cursorId, [...refs.values()])).map((page) => [
        `${page.ledgerId}:${page.page}`,
        page,
      ]),
    );
    return positions.map((position) => {
      if (position.compareTo(markDelete) <= 0) return true;
      const ref = pageOf(position);
      const page = pages.get(`${ref.ledgerId}:${ref.page}`);
      const offset = Number(position.entryId - ref.page * DISPATCH_PAGE_SIZE);
      return page !== undefined && ((page.floor ?? -1) >= offset || page.acked.has(offset));
    });
  });
  let lost = 0;
  let wronglyAcked = 0;
  acknowledged.forEach((isAcked, index) => {
    if (index % 2 === 1 && !isAcked) lost++;
    if (index % 2 === 0 && isAcked) wronglyAcked++;
  });
  if (wronglyAcked > 0) throw new Error(`${wronglyAcked} entries acknowledged that were never acknowledged`);
  const stats = await stack.call<{ subscriptions: Record<string, { msgBacklog: number }> }>(
    'GET',
    `/admin/v2${TOPIC_PATH}/stats`,
  );
  return {
    acknowledgementsFound: acknowledged.filter(Boolean).length,
    backlog: stats.subscriptions.holes?.msgBacklog ?? -1,
    lost,
  };
}

/** The cursor's items and their size by DynamoDB's item size rules. */
async function cursorItems(stack: BenchStack, cursorId: string): Promise<{ items: number; bytes: number }> {
  const items = await stack.withDynamoDb((client) =>
    queryAll(client, {
      TableName: stack.tableName(cursorsTable),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: cursorId } },
      ConsistentRead: true,
    }),
  );
  return { items: items.length, bytes: items.reduce((sum, item) => sum + itemBytes(item), 0) };
}
