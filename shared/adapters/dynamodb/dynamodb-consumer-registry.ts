import {
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { ConsumerRecord, ConsumerRegistry } from '../../ports/consumer-registry.ts';
import { deleteAll, isConditionalCheckFailed, N, num, queryAll, S, str } from './dynamodb-support.ts';

/**
 * Consumers in the Catalog table.
 *
 * | pk | sk | attributes |
 * | `CONS#<consumerId>` | `M` | `d` the record (JSON) |
 * | `OWN#<topic>|<subscription>` | `M` | `o` owning consumer, `u` lease end (ms) |
 * | `MEM#<topic>|<subscription>` | `<consumerId>` | `u` alive until (ms) |
 */
export class DynamoDbConsumerRegistry implements ConsumerRegistry {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async register(record: ConsumerRecord): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { pk: S(`CONS#${record.consumerId}`), sk: S('M'), d: S(JSON.stringify(record)) },
      }),
    );
  }

  async get(consumerId: string): Promise<ConsumerRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: S(`CONS#${consumerId}`), sk: S('M') },
        ConsistentRead: true,
      }),
    );
    const data = str(result.Item, 'd');
    return data === undefined ? undefined : (JSON.parse(data) as ConsumerRecord);
  }

  async delete(consumerId: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [{ pk: S(`CONS#${consumerId}`), sk: S('M') }]);
  }

  async claimOwnership(
    subscriptionKey: string,
    consumerId: string,
    nowMs: number,
    untilMs: number,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(`OWN#${subscriptionKey}`), sk: S('M') },
          UpdateExpression: 'SET o = :me, u = :until',
          ConditionExpression: 'attribute_not_exists(o) OR o = :me OR u < :now',
          ExpressionAttributeValues: { ':me': S(consumerId), ':until': N(untilMs), ':now': N(nowMs) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async releaseOwnership(subscriptionKey: string, consumerId: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: S(`OWN#${subscriptionKey}`), sk: S('M') },
          UpdateExpression: 'REMOVE o, u',
          ConditionExpression: 'o = :me',
          ExpressionAttributeValues: { ':me': S(consumerId) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async owner(subscriptionKey: string, nowMs: number): Promise<string | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { pk: S(`OWN#${subscriptionKey}`), sk: S('M') },
        ConsistentRead: true,
      }),
    );
    const owner = str(result.Item, 'o');
    return owner !== undefined && (num(result.Item, 'u') ?? 0) >= nowMs ? owner : undefined;
  }

  async heartbeat(subscriptionKey: string, consumerId: string, untilMs: number): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { pk: S(`MEM#${subscriptionKey}`), sk: S(consumerId), u: N(untilMs) },
      }),
    );
  }

  async leave(subscriptionKey: string, consumerId: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [{ pk: S(`MEM#${subscriptionKey}`), sk: S(consumerId) }]);
  }

  async expired(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return (await this.leases(subscriptionKey)).filter(([, until]) => until < nowMs).map(([id]) => id);
  }

  async members(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return (await this.leases(subscriptionKey)).filter(([, until]) => until >= nowMs).map(([id]) => id);
  }

  /** Every member of the subscription with the end of its lease, sorted by id. One strong Query. */
  private async leases(subscriptionKey: string): Promise<[string, number][]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(`MEM#${subscriptionKey}`) },
      ConsistentRead: true,
    });
    return items
      .map((item): [string, number] => [str(item, 'sk') as string, num(item, 'u') ?? 0])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}
