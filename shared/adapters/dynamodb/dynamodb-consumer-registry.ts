import { type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { ConsumerRecord, ConsumerRegistry } from '../../ports/consumer-registry.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import { deleteAll, N, num, queryAll, S, str } from './dynamodb-support.ts';

/**
 * Consumers in the Catalog table.
 *
 * | pk | sk | attributes |
 * | `CONS#<consumerId>` | `M` | `d` the record (JSON) |
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
        Item: { ...itemKey(catalogKeys.consumer(record.consumerId)), d: S(JSON.stringify(record)) },
      }),
    );
  }

  async get(consumerId: string): Promise<ConsumerRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: itemKey(catalogKeys.consumer(consumerId)),
        ConsistentRead: true,
      }),
    );
    const data = str(result.Item, 'd');
    return data === undefined ? undefined : (JSON.parse(data) as ConsumerRecord);
  }

  async delete(consumerId: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [itemKey(catalogKeys.consumer(consumerId))]);
  }

  async heartbeat(subscriptionKey: string, consumerId: string, untilMs: number): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...itemKey(catalogKeys.membership(subscriptionKey, consumerId)), u: N(untilMs) },
      }),
    );
  }

  async leave(subscriptionKey: string, consumerId: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [
      itemKey(catalogKeys.membership(subscriptionKey, consumerId)),
    ]);
  }

  async expired(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return (await this.leaseList(subscriptionKey)).filter(([, until]) => until < nowMs).map(([id]) => id);
  }

  async members(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return (await this.leaseList(subscriptionKey)).filter(([, until]) => until >= nowMs).map(([id]) => id);
  }

  async leases(subscriptionKey: string): Promise<{ consumerId: string; untilMs: number }[]> {
    return (await this.leaseList(subscriptionKey)).map(([consumerId, untilMs]) => ({ consumerId, untilMs }));
  }

  /** Every member of the subscription with the end of its lease, sorted by id. One strong Query. */
  private async leaseList(subscriptionKey: string): Promise<[string, number][]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(catalogKeys.membership(subscriptionKey, '').pk) },
      ConsistentRead: true,
    });
    return items
      .map((item): [string, number] => [str(item, 'sk') as string, num(item, 'u') ?? 0])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}
