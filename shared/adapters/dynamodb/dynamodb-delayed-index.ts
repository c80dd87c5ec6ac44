import { type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { groupDelayed } from '../../domain/delayed-groups.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { DelayedEntry, DelayedGroup, DelayedIndex, DelayedIndexKey } from '../../ports/delayed-index.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import { TTL_ATTRIBUTE } from './dynamodb-audit-log.ts';
import { deleteAll, type Item, N, queryAll, S, str, writeAll } from './dynamodb-support.ts';

/** A group item stays readable a day past its due time (TTL on AWS), then DynamoDB deletes it. */
const KEEP_AFTER_DUE_MS = 86_400_000;

/**
 * The delayed index in the Catalog table (docs/design/storage.md#delayed-index):
 * | pk | sk | attributes |
 * | `DX#<partition>` | `<dueAtMs:15>#<ledgerId:20>#<firstEntryId:20>` | `e` the entry ids (number set), `ttl` |
 * Fixed-width numbers make string order due-time order, then log order.
 */
export class DynamoDbDelayedIndex implements DelayedIndex {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async put(partition: TopicName, entries: readonly DelayedEntry[]): Promise<void> {
    const groups = groupDelayed(entries);
    await writeAll(
      this.client,
      this.tableName,
      groups.map((group) => ({
        PutRequest: {
          Item: {
            ...itemKey(
              catalogKeys.delayedGroup(partition, group.dueAtMs, group.ledgerId, group.firstEntryId),
            ),
            e: { NS: group.entryIds.map((id) => id.toString()) },
            [TTL_ATTRIBUTE]: N(Math.ceil((group.dueAtMs + KEEP_AFTER_DUE_MS) / 1000)),
          },
        },
      })),
    );
  }

  async groups(
    partition: TopicName,
    request: { readonly from: DelayedIndexKey; readonly untilMs: number; readonly limit: number },
  ): Promise<DelayedGroup[]> {
    if (request.limit <= 0 || request.from.dueAtMs > request.untilMs) return [];
    const { from } = request;
    const first = catalogKeys.delayedGroup(partition, from.dueAtMs, from.ledgerId, from.entryId);
    // '~' sorts after every digit and '#': the last key due at untilMs.
    const last = `${catalogKeys.delayedGroup(partition, request.untilMs, 0n, 0n).sk.slice(0, 15)}#~`;
    // DynamoDB stops a Query page at 1 MB (about 1,000 full groups): follow it up to the limit.
    const items: Item[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': S(first.pk), ':from': S(first.sk), ':to': S(last) },
          Limit: request.limit - items.length,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey && items.length < request.limit);
    return items.map(groupOf);
  }

  async purge(partition: TopicName): Promise<void> {
    const pk = catalogKeys.delayedGroup(partition, 0, 0n, 0n).pk;
    const keys = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': S(pk) },
      ProjectionExpression: 'pk, sk',
    });
    await deleteAll(this.client, this.tableName, keys);
  }
}

function groupOf(item: Item): DelayedGroup {
  const [dueAtMs, ledgerId, firstEntryId] = (str(item, 'sk') as string).split('#') as [
    string,
    string,
    string,
  ];
  const entryIds = (item.e?.NS ?? []).map((id) => BigInt(id)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    dueAtMs: Number(dueAtMs),
    ledgerId: BigInt(ledgerId),
    firstEntryId: BigInt(firstEntryId),
    entryIds,
  };
}
