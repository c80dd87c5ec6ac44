import type { BatchGetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbPermissionStore } from '../../../../shared/adapters/dynamodb/dynamodb-permission-store.ts';
import { type Item, MAX_BATCH_GET_ATTEMPTS } from '../../../../shared/adapters/dynamodb/dynamodb-support.ts';

// DynamoDB answers a throttled BatchGetItem with the keys it did not read in UnprocessedKeys; no
// emulator can be made to throttle, so a stand-in client answers BatchGetItem here, and only that.

/**
 * Answers BatchGetItem from `items` (by `pk`), except that its first `throttled` answers read
 * nothing and return every key as unprocessed.
 */
class ThrottlingClient {
  sends = 0;

  constructor(
    private readonly throttled: number,
    private readonly items: ReadonlyMap<string, Item>,
  ) {}

  async send(command: BatchGetItemCommand) {
    this.sends += 1;
    const [[table, { Keys = [] }]] = Object.entries(command.input.RequestItems ?? {}) as [
      [string, { Keys?: Item[] }],
    ];
    if (this.sends <= this.throttled) {
      return { Responses: { [table]: [] }, UnprocessedKeys: { [table]: { Keys } } };
    }
    const found = Keys.flatMap((key): Item[] => {
      const item = this.items.get(key.pk?.S ?? '');
      return item ? [item] : [];
    });
    return { Responses: { [table]: found }, UnprocessedKeys: {} };
  }
}

function storeOver(client: ThrottlingClient): { store: DynamoDbPermissionStore; pauses: number[] } {
  const pauses: number[] = [];
  const store = new DynamoDbPermissionStore(
    client as unknown as DynamoDBClient,
    'Catalog',
    async (attempt) => {
      pauses.push(attempt);
    },
  );
  return { store, pauses };
}

const grants = new Map<string, Item>([
  ['PERM#public/default', { pk: { S: 'PERM#public/default' }, sk: { S: 'app' }, a: { SS: ['consume'] } }],
  [
    'PERM#persistent://public/default/orders',
    { pk: { S: 'PERM#persistent://public/default/orders' }, sk: { S: 'app' }, a: { SS: ['produce'] } },
  ],
]);
const resources = ['public/default', 'persistent://public/default/orders'];

describe('DynamoDbPermissionStore.actionsOf under throttling', () => {
  it('sends the unprocessed keys again after a doubling pause until DynamoDB reads them', async () => {
    const client = new ThrottlingClient(3, grants);
    const { store, pauses } = storeOver(client);

    const actions = await store.actionsOf('app', resources);

    expect([...actions].sort()).toEqual(['consume', 'produce']);
    expect(client.sends).toBe(4);
    expect(pauses).toEqual([0, 1, 2]);
  });

  it(`gives up after ${MAX_BATCH_GET_ATTEMPTS} sends with an error naming the keys left unread`, async () => {
    const client = new ThrottlingClient(Number.POSITIVE_INFINITY, grants);
    const { store, pauses } = storeOver(client);

    await expect(store.actionsOf('app', resources)).rejects.toThrow(
      `BatchGetItem on Catalog left 2 keys unread after ${MAX_BATCH_GET_ATTEMPTS} attempts`,
    );
    expect(client.sends).toBe(MAX_BATCH_GET_ATTEMPTS);
    expect(pauses).toHaveLength(MAX_BATCH_GET_ATTEMPTS - 1);
  });
});
