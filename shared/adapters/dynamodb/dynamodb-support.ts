import {
  type AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  QueryCommand,
  type QueryCommandInput,
  TransactionCanceledException,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';

export type Item = Record<string, AttributeValue>;

export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException || error instanceof TransactionCanceledException;
}

export const S = (value: string): AttributeValue => ({ S: value });
export const N = (value: bigint | number): AttributeValue => ({ N: value.toString() });

export function str(item: Item | undefined, name: string): string | undefined {
  return item?.[name]?.S;
}

/** Numbers stay exact: ids above 2^53 come back as bigint, never through a JS number. */
export function big(item: Item | undefined, name: string): bigint | undefined {
  const value = item?.[name]?.N;
  return value === undefined ? undefined : BigInt(value);
}

export function num(item: Item | undefined, name: string): number | undefined {
  const value = item?.[name]?.N;
  return value === undefined ? undefined : Number(value);
}

/** Fixed-width decimal, so string order equals numeric order in sort keys. */
export function pad(value: bigint | number, width = 20): string {
  return value.toString().padStart(width, '0');
}

/** Every item of a query, following LastEvaluatedKey. */
export async function queryAll(client: DynamoDBClient, input: QueryCommandInput): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** BatchWriteItem calls writeAll keeps in flight. */
const WRITE_BATCH_CONCURRENCY = 8;
/**
 * BatchWriteItem takes at most 25 requests (and 16 MB, which 25 keys never
 * approach: a key is at most 2 KB + 1 KB).
 */
export const MAX_BATCH_WRITE_ITEMS = 25;
/** Sends of one batch's unprocessed items before writeAll gives up (1.6 to 3.3 s of backoff in all). */
const MAX_BATCH_WRITE_ATTEMPTS = 10;

/**
 * Deletes keys with {@link writeAll}: what was deleted before it throws stays
 * deleted (deleting again is a no-op, so the caller may simply retry).
 */
export async function deleteAll(
  client: DynamoDBClient,
  tableName: string,
  keys: readonly Item[],
): Promise<void> {
  await writeAll(
    client,
    tableName,
    keys.map((key) => ({ DeleteRequest: { Key: key } })),
  );
}

/**
 * Sends puts and deletes in BatchWriteItem batches of MAX_BATCH_WRITE_ITEMS
 * (WRITE_BATCH_CONCURRENCY at once), sending unprocessed ones again with
 * jittered backoff; after MAX_BATCH_WRITE_ATTEMPTS sends of one batch it
 * throws, and what was written stays written. Unconditional, so only for
 * writes that are idempotent. Cost: one write unit per KB of each item.
 */
export async function writeAll(
  client: DynamoDBClient,
  tableName: string,
  requests: readonly WriteRequest[],
): Promise<void> {
  const batches: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += MAX_BATCH_WRITE_ITEMS)
    batches.push(requests.slice(i, i + MAX_BATCH_WRITE_ITEMS));
  // Batches in parallel: a cursor that consumed millions of entries keeps a tombstone per 200.
  await forEachLimited(batches, WRITE_BATCH_CONCURRENCY, async (batch) => {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const result = await client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: pending } }));
      pending = result.UnprocessedItems?.[tableName] ?? [];
      if (pending.length === 0) return;
      if (attempt >= MAX_BATCH_WRITE_ATTEMPTS) {
        throw new Error(
          `BatchWriteItem on ${tableName} left ${pending.length} writes unprocessed after ${attempt} attempts`,
        );
      }
      await backoff(attempt - 1);
    }
  });
}

/** BatchGetItem takes at most 100 keys. */
export const MAX_BATCH_GET_KEYS = 100;
/**
 * Sends of one BatchGetItem's unprocessed keys before batchGetAll gives up (1.6 to 3.3 s of
 * backoff in all, {@link backoff}).
 */
export const MAX_BATCH_GET_ATTEMPTS = 10;

/** What batchGetAll reads, and how it waits between attempts. */
export interface BatchGetAllInput {
  readonly tableName: string;
  readonly keys: readonly Item[];
  /** The pause before attempt `attempt + 1` (default {@link backoff}: jittered, doubling). */
  readonly pause?: (attempt: number) => Promise<void>;
}

/**
 * Every item of `keys` that exists, read strongly consistent with BatchGetItem, MAX_BATCH_GET_KEYS
 * keys a request. DynamoDB answers the keys it did not read (throttling, 16 MB answers) in
 * UnprocessedKeys and asks for them to be sent again with exponential backoff
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html): they
 * are, after a jittered pause, and after MAX_BATCH_GET_ATTEMPTS sends of one batch this throws,
 * naming how many keys were left unread (nothing is written, so the caller may simply retry).
 * Cost: 1 read unit per 4 KB of each item found (an absent key costs at least one unit too).
 */
export async function batchGetAll(client: DynamoDBClient, input: BatchGetAllInput): Promise<Item[]> {
  const { tableName, keys: all, pause = backoff } = input;
  const found: Item[] = [];
  for (let i = 0; i < all.length; i += MAX_BATCH_GET_KEYS) {
    let keys = all.slice(i, i + MAX_BATCH_GET_KEYS);
    for (let attempt = 1; keys.length > 0; attempt++) {
      const result = await client.send(
        new BatchGetItemCommand({ RequestItems: { [tableName]: { Keys: [...keys], ConsistentRead: true } } }),
      );
      found.push(...(result.Responses?.[tableName] ?? []));
      keys = (result.UnprocessedKeys?.[tableName]?.Keys ?? []) as Item[];
      if (keys.length === 0) break;
      if (attempt >= MAX_BATCH_GET_ATTEMPTS) {
        throw new Error(
          `BatchGetItem on ${tableName} left ${keys.length} keys unread after ${attempt} attempts (throttled)`,
        );
      }
      await pause(attempt - 1);
    }
  }
  return found;
}

/** 10 ms doubling per attempt up to 1 s, each wait drawn from its upper half (jitter). */
export function backoff(attempt: number): Promise<void> {
  const ceilingMs = Math.min(1000, 10 * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ceilingMs / 2 + Math.random() * (ceilingMs / 2)));
}

/** Runs `task` over `inputs` with at most `concurrency` in flight. */
export async function forEachLimited<T>(
  inputs: readonly T[],
  concurrency: number,
  task: (input: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, inputs.length) }, async () => {
    while (next < inputs.length) {
      const input = inputs[next++] as T;
      await task(input);
    }
  });
  await Promise.all(workers);
}
