import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { SubscriptionAlreadyExistsError, TopicAlreadyExistsError } from '../../domain/catalog-errors.ts';
import { Position } from '../../domain/position.ts';
import { parseSubscriptionType } from '../../domain/subscription-type.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type {
  FeedProgress,
  FeedProgressClaim,
  SubscriptionRecord,
  TopicCatalog,
  TopicRecord,
} from '../../ports/topic-catalog.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import {
  deleteAll,
  type Item,
  isConditionalCheckFailed,
  N,
  num,
  queryAll,
  S,
  str,
} from './dynamodb-support.ts';

/**
 * Topics and subscriptions in the Catalog table.
 *
 * | pk | sk | attributes |
 * | `NS#<domain>://<tenant>/<namespace>` | `T#<topic>` | `pt` partitions (0: not partitioned), `ca` created at |
 * | `ML#<partition>` | `S#<subscription>` | `ty` type, `ci` cursorId, `ca` created at; the backlog feeder's `fj` entitled job, `fa` last entry fed |
 *
 * A namespace's topics are one Query; a partition's subscriptions share the
 * partition key of its managed-ledger state.
 */
export class DynamoDbTopicCatalog implements TopicCatalog {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async createTopic(record: TopicRecord): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { ...topicKey(record.topic), pt: N(record.partitions), ca: N(record.createdAtMs) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new TopicAlreadyExistsError(record.topic.toString());
      throw error;
    }
  }

  async getTopic(topic: TopicName): Promise<TopicRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: topicKey(topic), ConsistentRead: true }),
    );
    return result.Item ? toTopicRecord(topic, result.Item) : undefined;
  }

  async listTopics(domain: TopicName['domain'], namespaceName: string): Promise<TopicRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      ExpressionAttributeValues: { ':pk': S(`NS#${domain}://${namespaceName}`), ':t': S('T#') },
      ConsistentRead: true,
    });
    return items.map((item) => {
      const localName = (str(item, 'sk') as string).slice(2);
      return toTopicRecord(TopicName.parse(`${domain}://${namespaceName}/${localName}`), item);
    });
  }

  async listAllTopics(): Promise<TopicRecord[]> {
    const records: TopicRecord[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: 'begins_with(pk, :ns) AND begins_with(sk, :t)',
          ExpressionAttributeValues: { ':ns': S('NS#'), ':t': S('T#') },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        const namespace = (str(item, 'pk') as string).slice(3);
        const localName = (str(item, 'sk') as string).slice(2);
        records.push(toTopicRecord(TopicName.parse(`${namespace}/${localName}`), item));
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return records;
  }

  async deleteTopic(topic: TopicName, options: { readonly createdAtMs?: number } = {}): Promise<void> {
    if (options.createdAtMs === undefined) {
      await deleteAll(this.client, this.tableName, [topicKey(topic)]);
      return;
    }
    await this.deleteIf(topicKey(topic), 'ca = :v', N(options.createdAtMs));
  }

  async createSubscription(partition: TopicName, record: SubscriptionRecord): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            ...subscriptionKey(partition, record.name),
            ty: S(record.type),
            ci: S(record.cursorId),
            ca: N(record.createdAtMs),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) {
        throw new SubscriptionAlreadyExistsError(partition.toString(), record.name);
      }
      throw error;
    }
  }

  async getSubscription(partition: TopicName, name: string): Promise<SubscriptionRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: subscriptionKey(partition, name),
        ConsistentRead: true,
      }),
    );
    return result.Item ? toSubscriptionRecord(result.Item) : undefined;
  }

  async listSubscriptions(partition: TopicName): Promise<SubscriptionRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':pk': S(`ML#${partition.toString()}`), ':s': S('S#') },
      ConsistentRead: true,
    });
    return items.map(toSubscriptionRecord);
  }

  async deleteSubscription(
    partition: TopicName,
    name: string,
    options: { readonly cursorId?: string } = {},
  ): Promise<void> {
    if (options.cursorId === undefined) {
      await deleteAll(this.client, this.tableName, [subscriptionKey(partition, name)]);
      return;
    }
    await this.deleteIf(subscriptionKey(partition, name), 'ci = :v', S(options.cursorId));
  }

  /** One conditional DeleteItem; a condition that does not hold (or no item) deletes nothing. */
  private async deleteIf(key: Item, condition: string, value: AttributeValue): Promise<void> {
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: key,
          ConditionExpression: condition,
          ExpressionAttributeValues: { ':v': value },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async getFeedProgress(
    partition: TopicName,
    name: string,
    cursorId: string,
  ): Promise<FeedProgress | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: subscriptionKey(partition, name),
        ProjectionExpression: 'ci, fj, fa',
        ConsistentRead: true,
      }),
    );
    const jobId = str(item, 'fj');
    const after = str(item, 'fa');
    if (str(item, 'ci') !== cursorId || jobId === undefined || after === undefined) return undefined;
    return { jobId, after: Position.parseStored(after) };
  }

  /** One conditional UpdateItem; it never creates the item (the cursorId condition needs it). */
  async recordFeedProgress(partition: TopicName, name: string, claim: FeedProgressClaim): Promise<boolean> {
    const { cursorId, expectedJobId, progress } = claim;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: subscriptionKey(partition, name),
          UpdateExpression: 'SET fj = :fj, fa = :fa',
          ConditionExpression: expectedJobId === undefined ? 'ci = :ci' : 'ci = :ci AND fj = :efj',
          ExpressionAttributeValues: {
            ':ci': S(cursorId),
            ':fj': S(progress.jobId),
            ':fa': S(progress.after.toString()),
            ...(expectedJobId === undefined ? {} : { ':efj': S(expectedJobId) }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}

function topicKey(topic: TopicName): Item {
  return itemKey(catalogKeys.topic(topic));
}

function subscriptionKey(partition: TopicName, name: string): Item {
  return itemKey(catalogKeys.subscription(partition, name));
}

function toTopicRecord(topic: TopicName, item: Item): TopicRecord {
  return { topic, partitions: num(item, 'pt') ?? 0, createdAtMs: num(item, 'ca') ?? 0 };
}

function toSubscriptionRecord(item: Item): SubscriptionRecord {
  return {
    name: (str(item, 'sk') as string).slice(2),
    type: parseSubscriptionType(str(item, 'ty') as string),
    cursorId: str(item, 'ci') as string,
    createdAtMs: num(item, 'ca') ?? 0,
  };
}
