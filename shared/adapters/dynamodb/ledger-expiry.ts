import { type DynamoDBClient, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import {
  expiresAtSeconds,
  expiryBeyondWalkMs,
  needsRenewal,
  walkMayStopAt,
} from '../../domain/entry-expiry.ts';
import { Position } from '../../domain/position.ts';
import type { LedgerInfo } from '../../ports/ledger.ts';
import { big, deleteAll, type Item, isConditionalCheckFailed, N, num, queryAll } from './dynamodb-support.ts';

/**
 * Entry expiry on DynamoDB (docs/design/storage.md#entry-expiry): the entries table's TTL attribute
 * and the walks that renew it or delete batches written without it.
 *
 * AWS semantics relied on: DynamoDB deletes an item some time after the epoch second in its TTL
 * attribute, usually within a few days, without consuming write throughput; until then the item is
 * read, queried and updated as any other, so readers filter on it
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ttl-expired-items.html). An
 * update that sets the attribute further out before the deletion keeps the item.
 */

/** The entries table's TTL attribute (epoch seconds), as `resources.ts` declares it. */
export const EXPIRES_AT = 'ttl';

/**
 * Ledger-state attribute: every ledger after this one holds only batches that expire (set by the
 * first publish with entry expiry on, or at the partition's creation: the ledger before its first).
 */
export const FIRST_EXPIRING_LEDGER = 'tf';

/** A batch's expiry in epoch ms, if it carries one. */
export function expiresAtMsOf(item: Item): number | undefined {
  const seconds = num(item, EXPIRES_AT);
  return seconds === undefined ? undefined : seconds * 1_000;
}

/** What a renewal walk found and did. */
export interface WalkOutcome {
  readonly walked: number;
  readonly renewed: number;
  /** Kept batches found already past their expiry (never renewed: readers no longer see them). */
  readonly expired: number;
  /** The earliest expiry of what the walk covered and of what lies beyond it (epoch ms). */
  readonly earliestMs: number;
  /** Where the next walk goes on, when this one stopped at `maxBatches`. */
  readonly resumeAt?: Position;
}

/** A walk's inputs: the partition's ledgers and where to start. */
export interface WalkRequest {
  readonly entriesTable: string;
  readonly ledgers: readonly LedgerInfo[];
  readonly start: Position;
  readonly nowMs: number;
  readonly expiryMs: number;
  readonly maxBatches: number;
}

type Totals = { walked: number; renewed: number; expired: number; earliestMs: number };

/**
 * Walks the batches from `start` in position order, renewing each that expires within half the
 * expiry to `now + expiryMs` (a conditional update: only while it is unexpired and its expiry is
 * earlier), and stops at the first batch published late enough that it and all after it need no
 * renewal. Cost: eventually consistent Query pages of 100 batches; one write per renewal, sized as
 * the batch.
 */
export async function renewExpiryWalk(client: DynamoDBClient, request: WalkRequest): Promise<WalkOutcome> {
  const totals: Totals = { walked: 0, renewed: 0, expired: 0, earliestMs: Number.POSITIVE_INFINITY };
  for (const ledger of request.ledgers) {
    if (ledger.ledgerId < request.start.ledgerId) continue;
    const from = ledger.ledgerId === request.start.ledgerId ? request.start.entryId : 0n;
    let startKey: Item | undefined = await chunkBefore(client, request, ledger.ledgerId, from);
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: request.entriesTable,
          KeyConditionExpression: 'ledgerId = :l AND firstEntryId >= :from',
          ExpressionAttributeValues: { ':l': N(ledger.ledgerId), ':from': N(0) },
          Limit: 100,
          ExclusiveStartKey: startKey,
        }),
      );
      for (const chunk of page.Items ?? []) {
        const first = big(chunk, 'firstEntryId') as bigint;
        const last = first + BigInt(num(chunk, 'n') ?? 1) - 1n;
        if (last < from) continue;
        const publishTimeMs = num(chunk, 'pt') ?? 0;
        if (walkMayStopAt(publishTimeMs, request.nowMs, request.expiryMs)) {
          return finish(totals, expiryBeyondWalkMs(publishTimeMs, request.nowMs, request.expiryMs));
        }
        totals.walked++;
        await renewOne(client, request, chunk, totals);
        if (totals.walked >= request.maxBatches) {
          return { ...totals, resumeAt: Position.of(ledger.ledgerId, last + 1n) };
        }
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  return finish(totals, expiryBeyondWalkMs(undefined, request.nowMs, request.expiryMs));
}

function finish(totals: Totals, beyondMs: number): WalkOutcome {
  return { ...totals, earliestMs: Math.min(totals.earliestMs, beyondMs) };
}

/**
 * The key to start a ledger's forward Query after, so that it begins with the batch holding
 * `from` (the last one starting at or before it): the key of the batch before that one; none when
 * `from` is the ledger's start or no batch starts before it.
 */
async function chunkBefore(
  client: DynamoDBClient,
  request: WalkRequest,
  ledgerId: bigint,
  from: bigint,
): Promise<Item | undefined> {
  if (from <= 0n) return undefined;
  const result = await client.send(
    new QueryCommand({
      TableName: request.entriesTable,
      KeyConditionExpression: 'ledgerId = :l AND firstEntryId <= :e',
      ExpressionAttributeValues: { ':l': N(ledgerId), ':e': N(from) },
      ProjectionExpression: 'ledgerId, firstEntryId',
      ScanIndexForward: false,
      Limit: 2,
    }),
  );
  // [holding `from`, the one before]: start after the one before (or from the ledger's start).
  return result.Items?.[1];
}

async function renewOne(
  client: DynamoDBClient,
  request: WalkRequest,
  chunk: Item,
  totals: Totals,
): Promise<void> {
  const expiresAtMs = expiresAtMsOf(chunk);
  if (expiresAtMs === undefined) return; // never expires
  if (expiresAtMs <= request.nowMs) {
    totals.expired++;
    return;
  }
  if (!needsRenewal(expiresAtMs, request.nowMs, request.expiryMs)) {
    totals.earliestMs = Math.min(totals.earliestMs, expiresAtMs);
    return;
  }
  const renewedAt = expiresAtSeconds(request.nowMs, request.expiryMs);
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: request.entriesTable,
        Key: { ledgerId: chunk.ledgerId as Item[string], firstEntryId: chunk.firstEntryId as Item[string] },
        UpdateExpression: 'SET #ttl = :new',
        ConditionExpression: '#ttl > :now AND #ttl < :new',
        ExpressionAttributeNames: { '#ttl': EXPIRES_AT },
        ExpressionAttributeValues: { ':new': N(renewedAt), ':now': N(Math.floor(request.nowMs / 1_000)) },
      }),
    );
    totals.renewed++;
  } catch (error) {
    // Renewed by a racing walk, or deleted with its topic: nothing to keep alive here.
    if (!isConditionalCheckFailed(error)) throw error;
  }
  totals.earliestMs = Math.min(totals.earliestMs, renewedAt * 1_000);
}

/**
 * Deletes the batches of `ledgerIds` starting from `from` (the first ledger's batches from
 * `from.entryId`, the others' from their start) that end before `before` and carry no expiry
 * (written before entry expiry, or while it was off): what retention let go that DynamoDB will not
 * delete. Returns their keys. Cost: the batches in that range read (Query), one delete per batch
 * deleted.
 */
export async function deleteChunksWithoutExpiry(
  client: DynamoDBClient,
  input: {
    readonly entriesTable: string;
    readonly ledgerIds: readonly bigint[];
    readonly from: Position;
    readonly before: Position;
  },
): Promise<{ ledgerId: bigint; firstEntryId: bigint }[]> {
  const keys: Item[] = [];
  const deleted: { ledgerId: bigint; firstEntryId: bigint }[] = [];
  for (const ledgerId of input.ledgerIds) {
    const lowest = ledgerId === input.from.ledgerId ? input.from.entryId : 0n;
    const highest =
      ledgerId === input.before.ledgerId ? input.before.entryId : BigInt(Number.MAX_SAFE_INTEGER);
    const chunks = await queryAll(client, {
      TableName: input.entriesTable,
      KeyConditionExpression: 'ledgerId = :l AND firstEntryId BETWEEN :lowest AND :highest',
      ExpressionAttributeValues: { ':l': N(ledgerId), ':lowest': N(lowest), ':highest': N(highest) },
      ProjectionExpression: 'ledgerId, firstEntryId, n, #ttl',
      ExpressionAttributeNames: { '#ttl': EXPIRES_AT },
      ConsistentRead: true,
    });
    for (const chunk of chunks) {
      const first = big(chunk, 'firstEntryId') as bigint;
      const last = Position.of(ledgerId, first + BigInt(num(chunk, 'n') ?? 1) - 1n);
      if (expiresAtMsOf(chunk) !== undefined || last.compareTo(input.before) >= 0) continue;
      keys.push({ ledgerId: N(ledgerId), firstEntryId: N(first) });
      deleted.push({ ledgerId, firstEntryId: first });
    }
  }
  await deleteAll(client, input.entriesTable, keys);
  return deleted;
}
