import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { parseSubscriptionType } from '../../domain/subscription-type.ts';
import type {
  ActivePartition,
  ActiveSubscription,
  ActivityIndex,
  IndexedSubscription,
} from '../../ports/activity-index.ts';
import {
  ACTIVITY_SHARDS,
  activityShardKey,
  catalogKeys,
  itemKey,
  LEGACY_ACTIVITY_PK,
  PARTITION_ACTIVITY_SHARDS,
  partitionActivityShardKey,
} from './catalog-keys.ts';
import {
  forEachLimited,
  type Item,
  isConditionalCheckFailed,
  N,
  num,
  queryAll,
  S,
  str,
} from './dynamodb-support.ts';

const SEEDED_KEY = { pk: S('ACT#seeded'), sk: S('M') };
/** Legacy entries moved at once. */
const MOVE_CONCURRENCY = 8;

/**
 * The activity index in the Catalog table: pk `ACT#<shard>` (ACTIVITY_SHARDS partitions, the
 * shard a hash of the cursor id), sk the cursorId (unique per subscription incarnation), `p`
 * partition, `s` subscription, `ty` type, `m` marked at (ms), `rv` revisit at, `bd` backlog due
 * since. Marks are at most one per subscription, process and minute; spread over sixteen
 * partition keys they stay under a partition's 1,000 writes a second up to 960,000 marks a
 * minute (docs/design/aws-limits.md#hot-keys).
 *
 * An index written before the shards (pk `ACT`) is moved into them by `list`: each entry is put
 * into its shard unless a later mark is there, then deleted from `ACT` unless marked again
 * meanwhile (by a process still running the older code; the next list moves it). So `list` reads
 * ACTIVITY_SHARDS + 1 partitions: one Query each while the index is under 1 MB a partition.
 *
 * Partitions published to with no subscription are marked apart (pk `ACTP#<shard>`, sk the
 * partition, `m` marked at): retention trims them, and nothing else visits them.
 */
export class DynamoDbActivityIndex implements ActivityIndex {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async mark(subscription: IndexedSubscription, nowMs: number): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...itemKey(catalogKeys.activity(subscription.cursorId)),
          p: S(subscription.partition),
          s: S(subscription.subscription),
          ty: S(subscription.type),
          m: N(nowMs),
        },
      }),
    );
  }

  async list(): Promise<ActiveSubscription[]> {
    await this.moveLegacyEntries();
    const shards = Array.from({ length: ACTIVITY_SHARDS }, (_, shard) => activityShardKey(shard));
    const entries = (await Promise.all(shards.map((pk) => this.entries(pk)))).flat().map(entryOf);
    return entries.sort((a, b) => (a.cursorId < b.cursorId ? -1 : a.cursorId > b.cursorId ? 1 : 0));
  }

  private entries(pk: string): Promise<Item[]> {
    return queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(pk) },
      ConsistentRead: true,
    });
  }

  /** Entries of the index before its shards: each into its shard (unless marked since), then out of `ACT`. */
  private async moveLegacyEntries(): Promise<void> {
    const legacy = await this.entries(LEGACY_ACTIVITY_PK);
    await forEachLimited(legacy, MOVE_CONCURRENCY, async (item) => {
      const cursorId = str(item, 'sk') as string;
      const marked = item.m ?? N(0);
      try {
        await this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: { ...item, ...itemKey(catalogKeys.activity(cursorId)) },
            ConditionExpression: 'attribute_not_exists(pk) OR m < :m',
            ExpressionAttributeValues: { ':m': marked },
          }),
        );
      } catch (error) {
        // Its shard holds a later mark: that one stands.
        if (!isConditionalCheckFailed(error)) throw error;
      }
      await this.deleteIfMarked({ pk: S(LEGACY_ACTIVITY_PK), sk: S(cursorId) }, marked);
    });
  }

  private async deleteIfMarked(key: Item, marked: AttributeValue): Promise<void> {
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: 'm = :m',
          ExpressionAttributeValues: { ':m': marked },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async markPartition(partition: string, nowMs: number): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...itemKey(catalogKeys.partitionActivity(partition)), m: N(nowMs) },
      }),
    );
  }

  async listPartitions(): Promise<ActivePartition[]> {
    const shards = Array.from({ length: PARTITION_ACTIVITY_SHARDS }, (_, shard) =>
      partitionActivityShardKey(shard),
    );
    const items = (await Promise.all(shards.map((pk) => this.entries(pk)))).flat();
    return items
      .map((item) => ({ partition: str(item, 'sk') as string, markedAtMs: num(item, 'm') ?? 0 }))
      .sort((a, b) => (a.partition < b.partition ? -1 : a.partition > b.partition ? 1 : 0));
  }

  async removePartition(partition: string, markedAtMs: number): Promise<void> {
    await this.deleteIfMarked(itemKey(catalogKeys.partitionActivity(partition)), N(markedAtMs));
  }

  async remove(cursorId: string, markedAtMs: number): Promise<void> {
    await this.deleteIfMarked(itemKey(catalogKeys.activity(cursorId)), N(markedAtMs));
  }

  async defer(
    cursorId: string,
    markedAtMs: number,
    next: { readonly revisitAtMs: number; readonly backlogDueSinceMs?: number },
  ): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey(catalogKeys.activity(cursorId)),
          UpdateExpression:
            next.backlogDueSinceMs === undefined ? 'SET rv = :rv REMOVE bd' : 'SET rv = :rv, bd = :bd',
          ConditionExpression: 'm = :m',
          ExpressionAttributeValues: {
            ':m': N(markedAtMs),
            ':rv': N(next.revisitAtMs),
            ...(next.backlogDueSinceMs === undefined ? {} : { ':bd': N(next.backlogDueSinceMs) }),
          },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async seeded(): Promise<boolean> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: SEEDED_KEY, ConsistentRead: true }),
    );
    return item !== undefined;
  }

  async markSeeded(): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: { ...SEEDED_KEY } }));
  }
}

function entryOf(item: Item): ActiveSubscription {
  const revisitAtMs = num(item, 'rv');
  const backlogDueSinceMs = num(item, 'bd');
  return {
    cursorId: str(item, 'sk') as string,
    partition: str(item, 'p') as string,
    subscription: str(item, 's') as string,
    type: parseSubscriptionType(str(item, 'ty') as string),
    markedAtMs: num(item, 'm') ?? 0,
    ...(revisitAtMs === undefined ? {} : { revisitAtMs }),
    ...(backlogDueSinceMs === undefined ? {} : { backlogDueSinceMs }),
  };
}
