import {
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { parseSubscriptionType } from '../../domain/subscription-type.ts';
import type { ActiveSubscription, ActivityIndex, IndexedSubscription } from '../../ports/activity-index.ts';
import { type Item, isConditionalCheckFailed, N, num, queryAll, S, str } from './dynamodb-support.ts';

const INDEX_PK = 'ACT';
const SEEDED_KEY = { pk: S('ACT#seeded'), sk: S('M') };

/**
 * The activity index in the Catalog table: pk `ACT`, sk the cursorId (unique per subscription
 * incarnation), `p` partition, `s` subscription, `ty` type, `m` marked at (ms), `rv` revisit at,
 * `bd` backlog due since. One partition key: marks are at most one per subscription, process and
 * minute, far below a partition's 1,000 writes a second for any deployment this serves.
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
          pk: S(INDEX_PK),
          sk: S(subscription.cursorId),
          p: S(subscription.partition),
          s: S(subscription.subscription),
          ty: S(subscription.type),
          m: N(nowMs),
        },
      }),
    );
  }

  async list(): Promise<ActiveSubscription[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(INDEX_PK) },
      ConsistentRead: true,
    });
    return items.map(entryOf);
  }

  async remove(cursorId: string, markedAtMs: number): Promise<void> {
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: { pk: S(INDEX_PK), sk: S(cursorId) },
          ConditionExpression: 'm = :m',
          ExpressionAttributeValues: { ':m': N(markedAtMs) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
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
          Key: { pk: S(INDEX_PK), sk: S(cursorId) },
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
