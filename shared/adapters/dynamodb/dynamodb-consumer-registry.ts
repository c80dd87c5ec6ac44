import {
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type {
  ConsumerRecord,
  ConsumerRegistry,
  MemberLease,
  WaitingReceive,
} from '../../ports/consumer-registry.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import { deleteAll, N, num, queryAll, S, str } from './dynamodb-support.ts';

/**
 * Consumers in the Catalog table.
 *
 * | pk | sk | attributes |
 * | `CONS#<consumerId>` | `M` | `d` the record (JSON) |
 * | `MEM#<topic>|<subscription>` | `<consumerId>` | `u` alive until (ms); while a receive waits: `rm` its maxMessages, `rs` since, `ru` until (ms) |
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

  /** An UpdateItem: the lease, and the waiting receive only when `receive` is given. */
  async heartbeat(
    subscriptionKey: string,
    consumerId: string,
    untilMs: number,
    options: { readonly receive?: WaitingReceive | null } = {},
  ): Promise<void> {
    const receive = options.receive;
    const update =
      receive === undefined
        ? 'SET u = :u'
        : receive === null
          ? 'SET u = :u REMOVE rm, rs, ru'
          : 'SET u = :u, rm = :rm, rs = :rs, ru = :ru';
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: itemKey(catalogKeys.membership(subscriptionKey, consumerId)),
        UpdateExpression: update,
        ExpressionAttributeValues: {
          ':u': N(untilMs),
          ...(receive
            ? { ':rm': N(receive.maxMessages), ':rs': N(receive.sinceMs), ':ru': N(receive.untilMs) }
            : {}),
        },
      }),
    );
  }

  async leave(subscriptionKey: string, consumerId: string): Promise<void> {
    await deleteAll(this.client, this.tableName, [
      itemKey(catalogKeys.membership(subscriptionKey, consumerId)),
    ]);
  }

  async expired(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return (await this.leases(subscriptionKey))
      .filter(({ untilMs }) => untilMs < nowMs)
      .map(({ consumerId }) => consumerId);
  }

  async members(subscriptionKey: string, nowMs: number): Promise<string[]> {
    return (await this.leases(subscriptionKey))
      .filter(({ untilMs }) => untilMs >= nowMs)
      .map(({ consumerId }) => consumerId);
  }

  async leases(subscriptionKey: string): Promise<MemberLease[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(catalogKeys.membership(subscriptionKey, '').pk) },
      ConsistentRead: true,
    });
    return items
      .map((item): MemberLease => {
        const maxMessages = num(item, 'rm');
        return {
          consumerId: str(item, 'sk') as string,
          untilMs: num(item, 'u') ?? 0,
          ...(maxMessages === undefined
            ? {}
            : { receive: { maxMessages, sinceMs: num(item, 'rs') ?? 0, untilMs: num(item, 'ru') ?? 0 } }),
        };
      })
      .sort((a, b) => (a.consumerId < b.consumerId ? -1 : a.consumerId > b.consumerId ? 1 : 0));
  }
}
