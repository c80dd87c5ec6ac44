import { randomBytes } from 'node:crypto';
import { type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DELIVERY_HANDLE_KEY_BYTES } from '../../domain/delivery-handle.ts';
import { AcklineError } from '../../domain/errors.ts';
import type { HandleKeyStore } from '../../ports/handle-key-store.ts';
import { isConditionalCheckFailed, S } from './dynamodb-support.ts';

/** The one item, in the Catalog table: `k` the key's bytes (binary). */
const HANDLE_KEY = { pk: S('KEY#delivery-handle'), sk: S('M') };

/**
 * The delivery handle key in the Catalog table, made by the first call a deployment ever makes: a
 * conditional put of random bytes that only the first of concurrent callers wins; the others read
 * the winner's. Nothing else of the deployment holds it, so no new resource and no setting is
 * needed, and it works whatever verifies bearer tokens (an HS256 secret, which only the authorizer
 * reads, or a public key). Whoever can read the table could sign handles, but could also write the
 * cursors themselves: the key guards against API clients, which never see it.
 *
 * Not cached: wrap in CachingHandleKeyStore (the composition root does).
 */
export class DynamoDbHandleKeyStore implements HandleKeyStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    /** Random bytes for a new key; injected so a test can fix them. */
    private readonly random: (bytes: number) => Uint8Array = randomBytes,
  ) {}

  async loadOrCreate(): Promise<Uint8Array> {
    const stored = await this.read();
    if (stored) return stored;
    const key = this.random(DELIVERY_HANDLE_KEY_BYTES);
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { ...HANDLE_KEY, k: { B: key } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return key;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
    const winner = await this.read(); // another instance made it first
    if (!winner) throw new AcklineError('The delivery handle key was made but cannot be read');
    return winner;
  }

  private async read(): Promise<Uint8Array | undefined> {
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: HANDLE_KEY, ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const key = Item.k?.B;
    if (!key || key.length !== DELIVERY_HANDLE_KEY_BYTES) {
      throw new AcklineError(
        `The delivery handle key item holds no key of ${DELIVERY_HANDLE_KEY_BYTES} bytes: delete it to make a new one`,
      );
    }
    return key;
  }
}
