import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { DynamoDbCursorStore } from '../../shared/adapters/dynamodb/dynamodb-cursor-store.ts';
import { Position } from '../../shared/domain/position.ts';
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
  makeDataDir,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';
import { Random } from '../support/random.ts';

// Criterion 8 of issue 3: random sequences of produce, individual acks written straight through
// the cursor store, admin acknowledgeMessage, skip and skipByMessageIds, checked against a naive
// model, with the embedded stack restarted midway (once with SIGTERM, once with SIGKILL). The
// cursor state the admin API reports must match the model before and after every restart.

const SEED = Number(process.env.ACKLINE_TEST_SEED ?? 0x423_5eed);
const OPERATIONS = 300;
const CHECK_EVERY = 25;
/** Small ledgers, so the sequence crosses many ledger boundaries. */
const MAX_ENTRIES_PER_LEDGER = 16;
const RESTARTS: ReadonlyMap<number, NodeJS.Signals> = new Map([
  [100, 'SIGTERM'],
  [200, 'SIGKILL'],
]);

interface Endpoints {
  readonly gateway: string;
  readonly dynamodb: string;
  readonly env: Record<string, string>;
}

/** One running stack: its admin API and a cursor store on its DynamoDB. */
interface Running {
  readonly process: EmbeddedProcess;
  readonly api: AdminApi;
  readonly dynamodb: DynamoDBClient;
  readonly cursorStore: DynamoDbCursorStore;
  readonly catalogTable: string;
}

async function start(dataDir: string): Promise<Running> {
  const child = await startEmbeddedProcess({
    dataDir,
    env: { ACKLINE_MAX_ENTRIES_PER_LEDGER: String(MAX_ENTRIES_PER_LEDGER) },
  });
  const endpoints = JSON.parse(await readFile(join(dataDir, 'endpoints.json'), 'utf8')) as Endpoints;
  const dynamodb = new DynamoDBClient({
    endpoint: endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ackline-local', secretAccessKey: 'ackline-local' },
  });
  return {
    process: child,
    api: new AdminApi(endpoints.gateway, tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET })),
    dynamodb,
    cursorStore: new DynamoDbCursorStore(dynamodb, endpoints.env.ACKLINE_CURSORS_TABLE as string),
    catalogTable: endpoints.env.ACKLINE_CATALOG_TABLE as string,
  };
}

async function stop(running: Running, signal: NodeJS.Signals): Promise<void> {
  running.dynamodb.destroy();
  await running.process.stop(signal);
}

/** The subscription's cursor id, as the catalog holds it: item `ML#<partition>` / `S#<sub>`, attribute `ci`. */
async function cursorIdOf(running: Running, topic: TopicRef, subscription: string): Promise<string> {
  const result = await running.dynamodb.send(
    new GetItemCommand({
      TableName: running.catalogTable,
      Key: { pk: { S: `ML#${topic.name}` }, sk: { S: `S#${subscription}` } },
      ConsistentRead: true,
    }),
  );
  const cursorId = result.Item?.ci?.S;
  if (!cursorId) throw new Error(`No catalog item for subscription ${subscription} of ${topic.name}`);
  return cursorId;
}

interface Entry {
  readonly ledgerId: string;
  readonly entryId: number;
}

/**
 * The naive model: the log as a list of positions in order, and per subscription the set of
 * acknowledged ordinals (indexes in that list). Mark-delete is the longest acknowledged prefix.
 */
class Model {
  readonly log: Entry[] = [];
  readonly subscriptions = new Map<string, { type: SubscriptionType; acked: Set<number> }>();

  constructor(readonly firstLedgerId: string) {}

  addSubscription(name: string, type: SubscriptionType, initialPosition: 'Earliest' | 'Latest'): void {
    const acked = new Set<number>();
    if (initialPosition === 'Latest') for (let i = 0; i < this.log.length; i++) acked.add(i);
    this.subscriptions.set(name, { type, acked });
  }

  acknowledge(subscription: string, ordinals: readonly number[]): void {
    const acked = this.sub(subscription).acked;
    for (const ordinal of ordinals) acked.add(ordinal);
  }

  /** The first `count` unacknowledged ordinals, in order (skip). */
  firstUnacknowledged(subscription: string, count: number): number[] {
    const acked = this.sub(subscription).acked;
    const found: number[] = [];
    for (let i = 0; i < this.log.length && found.length < count; i++) if (!acked.has(i)) found.push(i);
    return found;
  }

  /** What internalStats and stats should say of the subscription. */
  expected(subscription: string): {
    markDeletePosition: string;
    readPosition: string;
    individuallyDeletedMessages: string;
    msgBacklog: number;
  } {
    const acked = this.sub(subscription).acked;
    let prefix = 0;
    while (acked.has(prefix)) prefix++;
    const markDelete = prefix === 0 ? `${this.firstLedgerId}:-1` : this.text(prefix - 1);
    const last = this.log[this.log.length - 1];
    const readPosition =
      prefix < this.log.length
        ? this.text(prefix)
        : last
          ? `${last.ledgerId}:${last.entryId + 1}`
          : `${this.firstLedgerId}:0`;
    const ranges: string[] = [];
    let i = prefix + 1;
    while (i < this.log.length) {
      if (!acked.has(i)) {
        i++;
        continue;
      }
      const start = this.log[i] as Entry;
      let end = i;
      while (
        end + 1 < this.log.length &&
        acked.has(end + 1) &&
        this.log[end + 1]?.ledgerId === start.ledgerId
      )
        end++;
      ranges.push(`(${start.ledgerId}:${start.entryId - 1}..${this.text(end)}]`);
      i = end + 1;
    }
    let backlog = 0;
    for (let j = 0; j < this.log.length; j++) if (!acked.has(j)) backlog++;
    return {
      markDeletePosition: markDelete,
      readPosition,
      individuallyDeletedMessages: `[${ranges.join(',')}]`,
      msgBacklog: backlog,
    };
  }

  private text(ordinal: number): string {
    const entry = this.log[ordinal] as Entry;
    return `${entry.ledgerId}:${entry.entryId}`;
  }

  private sub(name: string) {
    const found = this.subscriptions.get(name);
    if (!found) throw new Error(`model has no subscription ${name}`);
    return found;
  }
}

/** What the stack reports for every subscription, shaped as {@link Model.expected}. */
async function observed(api: AdminApi, topic: TopicRef) {
  const internal = await api.internalStats(topic);
  const stats = await api.stats(topic);
  const result: Record<string, ReturnType<Model['expected']>> = {};
  for (const [name, cursor] of Object.entries(internal.cursors)) {
    result[name] = {
      markDeletePosition: cursor.markDeletePosition,
      readPosition: cursor.readPosition,
      individuallyDeletedMessages: cursor.individuallyDeletedMessages,
      msgBacklog: stats.subscriptions[name]?.msgBacklog ?? Number.NaN,
    };
  }
  return { subscriptions: result, msgInCounter: stats.msgInCounter, ledgers: internal.ledgers.length };
}

function expectedOf(model: Model) {
  const subscriptions: Record<string, ReturnType<Model['expected']>> = {};
  for (const name of model.subscriptions.keys()) subscriptions[name] = model.expected(name);
  return subscriptions;
}

describe('cursor state against a naive model, across restarts of the embedded stack', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it(`stays identical over ${OPERATIONS} random operations (seed ${SEED})`, async () => {
    const random = new Random(SEED);
    const dataDir = await makeDataDir('ackline-cursor-restart-');
    dirs.push(dataDir);
    const topic = TopicRef.unique('model');
    const history: string[] = [];
    const where = () => `seed ${SEED}; last operations:\n  ${history.slice(-8).join('\n  ')}`;

    let running = await start(dataDir);
    try {
      await running.api.createTopic(topic);
      const firstLedgerId = String((await running.api.internalStats(topic)).ledgers[0]?.ledgerId);
      const model = new Model(firstLedgerId);
      const cursorIds = new Map<string, string>();
      const subscribe = async (
        name: string,
        type: SubscriptionType,
        initialPosition: 'Earliest' | 'Latest',
      ) => {
        await running.api.createSubscription(topic, name, { type, initialPosition });
        model.addSubscription(name, type, initialPosition);
        cursorIds.set(name, await cursorIdOf(running, topic, name));
      };
      await subscribe('shared', 'Shared', 'Earliest');
      await subscribe('keyed', 'Key_Shared', 'Earliest');
      await subscribe('exclusive', 'Exclusive', 'Earliest');

      const check = async (label: string) => {
        const actual = await observed(running.api, topic);
        expect(actual.subscriptions, `${label}; ${where()}`).toEqual(expectedOf(model));
        expect(actual.msgInCounter, `${label}; ${where()}`).toBe(model.log.length);
        return actual;
      };
      const randomOrdinals = (max: number) =>
        Array.from({ length: random.intBetween(1, max) }, () => random.int(model.log.length));
      const positionsOf = (ordinals: readonly number[]) =>
        ordinals.map((ordinal) => model.log[ordinal] as Entry);

      for (let op = 0; op < OPERATIONS; op++) {
        const signal = RESTARTS.get(op);
        if (signal) {
          const before = await check(`before the ${signal} restart at operation ${op}`);
          await stop(running, signal);
          running = await start(dataDir);
          const after = await check(`after the ${signal} restart at operation ${op}`);
          expect(after, where()).toEqual(before);
          history.push(`#${op} restart (${signal})`);
        }
        if (op === 50) await subscribe('late', 'Shared', 'Latest');

        const roll = random.next();
        const names = [...model.subscriptions.keys()];
        if (model.log.length === 0 || roll < 0.3) {
          const count = random.intBetween(1, 4);
          const ids = await running.api.produce(
            topic,
            Array.from({ length: count }, (_, i) => ({ payload: `op${op}-${i}` })),
          );
          for (const id of ids) {
            const { ledgerId, entryId } = parseMessageId(id);
            model.log.push({ ledgerId, entryId: Number(entryId) });
          }
          history.push(`#${op} produce ${count} -> ${ids.join(' ')}`);
        } else if (roll < 0.55) {
          const subscription = random.pick(names);
          const ordinals = randomOrdinals(3);
          const positions = positionsOf(ordinals).map((entry) => Position.of(entry.ledgerId, entry.entryId));
          await running.cursorStore.acknowledge(cursorIds.get(subscription) as string, positions);
          model.acknowledge(subscription, ordinals);
          history.push(`#${op} cursor store ack ${subscription} ${positions.join(' ')}`);
        } else if (roll < 0.8) {
          const chosen = random.shuffle([...names]).slice(0, random.intBetween(1, names.length));
          const [ordinal] = randomOrdinals(1) as [number];
          const entry = model.log[ordinal] as Entry;
          const result = await running.api.acknowledge(topic, {
            ledgerId: entry.ledgerId,
            entryId: String(entry.entryId),
            subscriptionNames: chosen,
          });
          const refused = chosen.includes('exclusive');
          expect(result.status, `admin ack of ${chosen.join(',')}; ${where()}`).toBe(refused ? 412 : 204);
          if (!refused) for (const name of chosen) model.acknowledge(name, [ordinal]);
          history.push(
            `#${op} admin ack ${chosen.join(',')} ${entry.ledgerId}:${entry.entryId} -> ${result.status}`,
          );
        } else if (roll < 0.9) {
          const subscription = random.pick(names);
          const count = random.intBetween(0, 5);
          await running.api.expectStatus(
            204,
            'POST',
            `${topic.adminPath}/subscription/${subscription}/skip/${count}`,
          );
          model.acknowledge(subscription, model.firstUnacknowledged(subscription, count));
          history.push(`#${op} skip ${subscription} ${count}`);
        } else {
          const subscription = random.pick(names);
          const ordinals = randomOrdinals(3);
          const messageIds = positionsOf(ordinals).map((entry) =>
            random.chance(0.5)
              ? { ledgerId: Number(entry.ledgerId), entryId: entry.entryId }
              : { ledgerId: entry.ledgerId, entryId: String(entry.entryId) },
          );
          await running.api.expectStatus(
            204,
            'POST',
            `${topic.adminPath}/subscription/${subscription}/skipByMessageIds`,
            { body: { type: 'messageId', messageIds } },
          );
          model.acknowledge(subscription, ordinals);
          history.push(`#${op} skipByMessageIds ${subscription} ${JSON.stringify(messageIds)}`);
        }
        if (op % CHECK_EVERY === CHECK_EVERY - 1) await check(`after operation ${op}`);
      }
      const final = await check('at the end');
      expect(final.ledgers, 'the sequence should cross ledger boundaries').toBeGreaterThan(3);
    } finally {
      await stop(running, 'SIGTERM');
    }
  }, 120_000);
});
