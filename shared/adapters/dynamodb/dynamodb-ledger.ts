import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { TopicNotFoundError } from '../../domain/catalog-errors.ts';
import { DEFAULT_ENTRY_EXPIRY_MS, expiresAtSeconds, renewalDueAtMs } from '../../domain/entry-expiry.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import { type ExclusiveProducer, PRODUCER_LEASE_MS, publishRefusal } from '../../domain/producer-access.ts';
import { type RateCounter, type RateSnapshot, snapshotDue } from '../../domain/rate-counter.ts';
import { type RecentPublisher, withPublisher } from '../../domain/recent-publishers.ts';
import {
  entriesBetween,
  letsGoAllConsumed,
  planRetention,
  type RetentionRequest,
  type StoredBatch,
} from '../../domain/retention-plan.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { Clock } from '../../ports/clock.ts';
import type { DelayedEntry, DelayedIndex } from '../../ports/delayed-index.ts';
import {
  type Appended,
  type AppendOptions,
  type Ledger,
  type LedgerInfo,
  type ManagedLedgerState,
  type NewEntry,
  payloadBytes,
  type ReadEntriesOptions,
  type Renewed,
  type StoredEntry,
  type Trimmed,
} from '../../ports/ledger.ts';
import { systemClock } from '../system-clock.ts';
import { catalogKeys, itemKey } from './catalog-keys.ts';
import type { ClosedLedgerCache } from './closed-ledger-cache.ts';
import { ClosedLedgerItems } from './closed-ledger-items.ts';
import {
  big,
  deleteAll,
  type Item,
  isConditionalCheckFailed,
  N,
  num,
  queryAll,
  S,
  str,
} from './dynamodb-support.ts';
import { type CachedChunk, chunkBytes, EntryChunkCache } from './entry-chunk-cache.ts';
import {
  deleteChunksWithoutExpiry,
  EXPIRES_AT,
  expiresAtMsOf,
  FIRST_EXPIRING_LEDGER,
  renewExpiryWalk,
} from './ledger-expiry.ts';

/** An entries item stays well under DynamoDB's 400 KB item limit. */
export const MAX_CHUNK_BYTES = 350 * 1024;
/** Attribute overhead per entry in a chunk, in DynamoDB's size rules (names, numbers, map). */
const ENTRY_OVERHEAD_BYTES = 40;

const STATE_SK = 'M';
/** Partitions of ledgers a process remembers for readEntry's first-kept check (about 10 MB). */
const MAX_KNOWN_OWNERS = 100_000;
const LEDGER_COUNTER_KEY = { pk: S('C#ledgerId'), sk: S(STATE_SK) };

/** The tables of a DynamoDbLedger, and when its ledgers roll over. */
export interface DynamoDbLedgerOptions {
  /** The catalog table: managed-ledger state, the ledger index and the ledgerId counter. */
  readonly catalogTable: string;
  /** The entries table: one item per chunk of a publish batch. */
  readonly entriesTable: string;
  /** Entries a ledger holds before the next append rolls over to a new ledger. */
  readonly maxEntriesPerLedger: number;
  /** The chunk cache to use (default: a new one for this ledger; it lives as long as the process). */
  readonly chunks?: EntryChunkCache;
  /** The closed-ledger cache to use (default: a new one for this ledger; it lives as long as the process). */
  readonly closedLedgers?: ClosedLedgerCache;
  /**
   * Where an append indexes its delayed messages (those with a deliverAt), before it writes them
   * (docs/design/storage.md#delayed-index). None: they are not indexed.
   */
  readonly delayedIndex?: DelayedIndex;
  /**
   * Entry expiry (docs/design/storage.md#entry-expiry): each batch is written with DynamoDB's TTL
   * attribute `entryExpiryMs` after its publish time, retention only moves the first kept position,
   * and {@link DynamoDbLedger.renewExpiry} keeps alive what is kept. Off (default): batches are
   * written without expiry and retention deletes them (billed as writes).
   */
  readonly expireEntries?: boolean;
  /** How long after its publish (or renewal) a batch expires (default DEFAULT_ENTRY_EXPIRY_MS, 14 days). */
  readonly entryExpiryMs?: number;
  /** What expiry is compared with when reading (default: the system clock). */
  readonly clock?: Clock;
}

/**
 * Ledgers on DynamoDB.
 *
 * Catalog items:
 * | pk | sk | attributes |
 * | `ML#<partition>` | `M` (the state) | `cl` current ledgerId, `nx` next entryId in it, `fl` the first ledger, `pc` the last closed ledger, `mi`/`bi` msg/bytes in, `sv` subscription announcements, the publish rate and recent publishers, retention's `tp`/`dm`/`bd` |
 * | `ML#<partition>` | `L#<ledgerId:20>` | `n` entries of a closed ledger ({@link ClosedLedgerItems}) |
 * | `L#<ledgerId>` | `M` | `p` owning partition (ledgerId -> partition) |
 * | `C#ledgerId` | `M` | `v` the deployment-wide ledgerId counter |
 *
 * Every publish updates the state, so it holds nothing that grows with the partition's history: its
 * size depends on the names in it (the partition's, up to 500 bytes, and the recent publishers'
 * roles), never on how many ledgers or entries there are. The closed ledgers are items of their
 * own, written once by the rollover that closes each. A state written before them (a list `ld` of
 * the closed ledgers, no `fl`) is read as it is and migrated by its next rollover: `ld` becomes
 * closed-ledger items and is removed.
 *
 * Entries items (pk ledgerId, sk firstEntryId): `n` entries in this chunk,
 * `pt` publish time, `e` list of {p payload, k key, pr properties, et event
 * time, da deliverAt}. One publish batch is one chunk (split at 350 KB), so a
 * batch of ten 1 KiB messages costs one write sized by its bytes.
 *
 * Appending: one atomic `ADD nx` allocates the batch's entry ids (the counter
 * update of the design), then the chunk is written. The update returns the
 * item, so the publisher learns the subscriptions version (`sv`, bumped by
 * announceSubscriptions) with its ids, atomically and for no extra read.
 * When `nx` passes
 * `maxEntriesPerLedger` the ledger rolls over: a new ledgerId from the
 * counter, its index item, then a conditional switch of `cl` (the loser of a
 * race retries in the winner's ledger).
 */
export class DynamoDbLedger implements Ledger {
  private readonly catalogTable: string;
  private readonly entriesTable: string;
  private readonly maxEntriesPerLedger: number;
  /** The chunks this process wrote or read (entries never change once written). */
  private readonly chunks: EntryChunkCache;
  private readonly closedLedgers: ClosedLedgerItems;
  private readonly delayedIndex: DelayedIndex | undefined;
  private readonly expireEntries: boolean;
  private readonly entryExpiryMs: number;
  private readonly clock: Clock;
  /** ledgerId -> its partition, as read once (a ledger never changes hands); bounded. */
  private readonly owners = new Map<bigint, TopicName>();

  constructor(
    private readonly client: DynamoDBClient,
    options: DynamoDbLedgerOptions,
  ) {
    this.catalogTable = options.catalogTable;
    this.entriesTable = options.entriesTable;
    this.maxEntriesPerLedger = options.maxEntriesPerLedger;
    this.chunks = options.chunks ?? new EntryChunkCache();
    this.closedLedgers = new ClosedLedgerItems(client, options.catalogTable, options.closedLedgers);
    this.delayedIndex = options.delayedIndex;
    this.expireEntries = options.expireEntries ?? false;
    this.entryExpiryMs = options.entryExpiryMs ?? DEFAULT_ENTRY_EXPIRY_MS;
    this.clock = options.clock ?? systemClock;
  }

  async initialize(partition: TopicName): Promise<ManagedLedgerState> {
    const existing = await this.state(partition);
    if (existing) return existing;
    const ledgerId = await this.newLedger(partition);
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.catalogTable,
          Item: {
            pk: S(stateKey(partition)),
            sk: S(STATE_SK),
            cl: N(ledgerId),
            nx: N(0),
            fl: N(ledgerId),
            mi: N(0),
            bi: N(0),
            // Every ledger of a new partition holds only batches that expire.
            ...(this.expireEntries ? { [FIRST_EXPIRING_LEDGER]: N(ledgerId - 1n) } : {}),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      await deleteAll(this.client, this.catalogTable, [ledgerIndexKey(ledgerId)]);
    }
    return (await this.state(partition)) as ManagedLedgerState;
  }

  async append(
    partition: TopicName,
    entries: readonly NewEntry[],
    publishTimeMs: number,
    options: AppendOptions = {},
  ): Promise<Appended> {
    const positions: Position[] = [];
    let subscriptionsVersion = '';
    let remaining = entries;
    while (remaining.length > 0) {
      const allocated = await this.allocate(partition, remaining, {
        publishTimeMs,
        ...options,
      });
      const { ledgerId, first, count } = allocated;
      const batch = remaining.slice(0, count);
      // Indexed before written: a crash between leaves an item naming entries never written,
      // which readers skip (maintenance acknowledges ids allocated and never written).
      if (this.delayedIndex) await this.delayedIndex.put(partition, delayedOf(batch, ledgerId, first));
      await this.writeChunks(ledgerId, first, batch, publishTimeMs);
      for (let i = 0; i < count; i++) positions.push(Position.of(ledgerId, first + BigInt(i)));
      subscriptionsVersion = allocated.subscriptionsVersion;
      remaining = remaining.slice(count);
    }
    return { positions, subscriptionsVersion };
  }

  async announceSubscriptions(partition: TopicName): Promise<ManagedLedgerState> {
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.catalogTable,
          Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
          UpdateExpression: 'ADD sv :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': N(1) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return await this.toState(partition, result.Attributes as Item);
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new TopicNotFoundError(partition.toString());
      throw error;
    }
  }

  async state(partition: TopicName): Promise<ManagedLedgerState | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.catalogTable,
        Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
        ConsistentRead: true,
      }),
    );
    return result.Item ? await this.toState(partition, result.Item) : undefined;
  }

  async ownerOf(ledgerId: bigint): Promise<TopicName | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.catalogTable,
        Key: ledgerIndexKey(ledgerId),
        ConsistentRead: true,
      }),
    );
    const owner = str(result.Item, 'p');
    return owner === undefined ? undefined : TopicName.parse(owner);
  }

  async readEntry(position: Position): Promise<StoredEntry | undefined> {
    const entry = await this.readStoredEntry(position);
    // With entry expiry, what retention let go stays stored until its expiry: the first kept
    // position decides (without expiry, retention deleted it before anyone could read this).
    if (!entry || !this.expireEntries) return entry;
    const firstKept = await this.firstKeptOf(position.ledgerId);
    return firstKept && position.compareTo(firstKept) < 0 ? undefined : entry;
  }

  /** The partition's first kept position, for the partition owning `ledgerId` (strongly consistent). */
  private async firstKeptOf(ledgerId: bigint): Promise<Position | undefined> {
    let owner = this.owners.get(ledgerId);
    if (!owner) {
      owner = await this.ownerOf(ledgerId);
      if (!owner) return undefined;
      if (this.owners.size >= MAX_KNOWN_OWNERS) this.owners.clear();
      this.owners.set(ledgerId, owner);
    }
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.catalogTable,
        Key: { pk: S(stateKey(owner)), sk: S(STATE_SK) },
        ProjectionExpression: 'tp',
        ConsistentRead: true,
      }),
    );
    const kept = str(result.Item, 'tp');
    return kept === undefined ? undefined : Position.parse(kept);
  }

  /** A cached chunk holding the position, unless it may have expired since it was read. */
  private cachedCovering(ledgerId: bigint, entryId: bigint): CachedChunk | undefined {
    const chunk = this.chunks.covering(ledgerId, entryId);
    if (chunk?.expiresAtMs !== undefined && chunk.expiresAtMs <= this.clock.nowMs()) return undefined;
    return chunk;
  }

  private async readStoredEntry(position: Position): Promise<StoredEntry | undefined> {
    const cached = this.cachedCovering(position.ledgerId, position.entryId);
    if (cached) return cached.entries[Number(position.entryId - cached.firstEntryId)];
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.entriesTable,
        KeyConditionExpression: 'ledgerId = :l AND firstEntryId <= :e',
        ExpressionAttributeValues: { ':l': N(position.ledgerId), ':e': N(position.entryId) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const item = result.Items?.[0];
    if (!item) return undefined;
    const chunk = this.remember(position.ledgerId, item);
    return chunk.entries[Number(position.entryId - chunk.firstEntryId)];
  }

  /**
   * The chunk holding `firstEntryId` (the last one starting at or before it), then, only when it
   * does not reach `lastEntryId`, every chunk after it up to `lastEntryId` (paged). Each chunk is
   * read whole, so a range that starts or ends inside a big chunk pays for all of it, once.
   */
  async readEntries(
    ledgerId: bigint,
    firstEntryId: bigint,
    lastEntryId: bigint,
    options: ReadEntriesOptions = {},
  ): Promise<StoredEntry[]> {
    // What this process wrote or read before comes from its cache; the rest from DynamoDB.
    const entries: StoredEntry[] = [];
    let next = firstEntryId;
    while (next <= lastEntryId) {
      const chunk = this.cachedCovering(ledgerId, next);
      if (!chunk) break;
      const from = Number(next - chunk.firstEntryId);
      const to = Math.min(chunk.entries.length - 1, Number(lastEntryId - chunk.firstEntryId));
      entries.push(...chunk.entries.slice(from, to + 1));
      next = chunk.firstEntryId + BigInt(to + 1);
    }
    if (next > lastEntryId) return entries;
    return [
      ...entries,
      ...(await this.queryEntries(ledgerId, next, lastEntryId, options.consistent ?? true)),
    ];
  }

  private async queryEntries(
    ledgerId: bigint,
    firstEntryId: bigint,
    lastEntryId: bigint,
    consistent: boolean,
  ): Promise<StoredEntry[]> {
    // The chunk holding firstEntryId starts at or before it: one Query backwards for it, unless
    // it can only start there (then the forward Query below finds it; at the log's end, the
    // backward one would read the chunk before, which ends just before firstEntryId, for nothing).
    const startsHere = this.chunks.startsAt(ledgerId, firstEntryId);
    const head = startsHere
      ? { Items: [] }
      : await this.client.send(
          new QueryCommand({
            TableName: this.entriesTable,
            KeyConditionExpression: 'ledgerId = :l AND firstEntryId <= :e',
            ExpressionAttributeValues: { ':l': N(ledgerId), ':e': N(firstEntryId) },
            ScanIndexForward: false,
            Limit: 1,
            ConsistentRead: consistent,
          }),
        );
    // The chunk holding firstEntryId often holds the whole range (a dispatcher reads one publish
    // batch at a time): then one Query is all it costs.
    const first = head.Items?.[0];
    const firstEnd = first ? (big(first, 'firstEntryId') as bigint) + BigInt(num(first, 'n') ?? 0) - 1n : -1n;
    // Chunks after the first one: a chunk starting at firstEntryId would have been the first.
    const restFrom = startsHere ? firstEntryId : (firstEnd > firstEntryId ? firstEnd : firstEntryId) + 1n;
    const rest =
      restFrom > lastEntryId
        ? []
        : await queryAll(this.client, {
            TableName: this.entriesTable,
            KeyConditionExpression: 'ledgerId = :l AND firstEntryId BETWEEN :from AND :to',
            ExpressionAttributeValues: {
              ':l': N(ledgerId),
              ':from': N(restFrom),
              ':to': N(lastEntryId),
            },
            ConsistentRead: consistent,
          });
    const entries: StoredEntry[] = [];
    for (const item of [...(head.Items ?? []), ...rest]) {
      const chunk = this.remember(ledgerId, item);
      const from = firstEntryId > chunk.firstEntryId ? Number(firstEntryId - chunk.firstEntryId) : 0;
      const to = Math.min(chunk.entries.length - 1, Number(lastEntryId - chunk.firstEntryId));
      if (from <= to) entries.push(...chunk.entries.slice(from, to + 1));
    }
    return entries;
  }

  /** Decodes an entries item whole and keeps it in this process's cache. */
  private remember(ledgerId: bigint, item: Item): CachedChunk {
    const first = big(item, 'firstEntryId') as bigint;
    const list = item.e?.L ?? [];
    const count = Math.min(num(item, 'n') ?? 0, list.length);
    const publishTimeMs = num(item, 'pt') ?? 0;
    const entries: StoredEntry[] = [];
    for (let index = 0; index < count; index++) {
      const entry = list[index]?.M;
      if (!entry) break;
      entries.push(toStoredEntry(Position.of(ledgerId, first + BigInt(index)), entry, publishTimeMs));
    }
    const expiresAtMs = expiresAtMsOf(item);
    if (expiresAtMs !== undefined && expiresAtMs <= this.clock.nowMs()) {
      // Expired, not yet deleted by DynamoDB's TTL: absent, as AWS advises readers to filter.
      return { ledgerId, firstEntryId: first, entries: [], bytes: 0 };
    }
    const chunk = {
      ledgerId,
      firstEntryId: first,
      entries,
      bytes: chunkBytes(entries),
      ...(expiresAtMs === undefined ? {} : { expiresAtMs }),
    };
    if (entries.length === count) this.chunks.put(chunk);
    return chunk;
  }

  /** One Query of the next chunk's keys and publish time (Limit 1). */
  async firstWrittenAfter(
    ledgerId: bigint,
    entryId: bigint,
  ): Promise<{ position: Position; publishTimeMs: number } | undefined> {
    let after = entryId;
    for (;;) {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.entriesTable,
          KeyConditionExpression: 'ledgerId = :l AND firstEntryId > :e',
          ExpressionAttributeValues: { ':l': N(ledgerId), ':e': N(after) },
          ProjectionExpression: `firstEntryId, pt, n, #ttl`,
          ExpressionAttributeNames: { '#ttl': EXPIRES_AT },
          Limit: 1,
          ConsistentRead: true,
        }),
      );
      const chunk = result.Items?.[0];
      if (!chunk) return undefined;
      const first = big(chunk, 'firstEntryId') as bigint;
      const expiresAtMs = expiresAtMsOf(chunk);
      if (expiresAtMs === undefined || expiresAtMs > this.clock.nowMs()) {
        return { position: Position.of(ledgerId, first), publishTimeMs: num(chunk, 'pt') ?? 0 };
      }
      // Expired, not yet deleted: skipped as if never written.
      after = first + BigInt(num(chunk, 'n') ?? 1) - 1n;
    }
  }

  async trim(
    partition: TopicName,
    request: RetentionRequest & { readonly maxBatches: number },
  ): Promise<Trimmed | undefined> {
    const item = await this.stateItem(partition);
    if (!item) return undefined;
    const state = await this.toState(partition, item);
    if (this.expireEntries && letsGoAllConsumed(request)) return this.trimToConsumed(item, state, request);
    const first = state.ledgers[0] as LedgerInfo;
    const from = state.firstKept ?? Position.of(first.ledgerId, 0n);
    const walked = await this.walkForRetention(state, from, request);
    const stored = state.bytesInCounter - (state.bytesDeleted ?? 0);
    const plan = planRetention(walked.batches, stored, request);
    const lastDeleted = plan.deleted[plan.deleted.length - 1];
    let to = from;
    if (lastDeleted) {
      to = Position.of(lastDeleted.ledgerId, lastDeleted.firstEntryId + BigInt(lastDeleted.count));
      const entries = plan.entries - walked.cut;
      const recorded = await this.recordTrim(state, { from, to, entries, bytes: plan.bytes });
      if (!recorded) {
        // Another run trimmed first: it counts and deletes; this one deletes only leftovers.
        await deleteAll(this.client, this.entriesTable, walked.leftovers);
        return undefined;
      }
    }
    // A batch that expires is trimmed by the first kept position alone; DynamoDB deletes it.
    const deleted = plan.deleted.filter((batch) => !walked.expiring.has(batchKey(batch)));
    for (const batch of deleted) this.chunks.forget(batch.ledgerId, batch.firstEntryId);
    await deleteAll(this.client, this.entriesTable, [
      ...walked.leftovers,
      ...deleted.map((batch) => ({ ledgerId: N(batch.ledgerId), firstEntryId: N(batch.firstEntryId) })),
    ]);
    return { entries: plan.deleted.length > 0 ? plan.entries - walked.cut : 0, bytes: plan.bytes, from, to };
  }

  /**
   * The batches from the first kept position up to the first that ends after what every
   * subscription consumed (at most `maxBatches`), the keys of batches before it that a run which
   * died left (only those without expiry: DynamoDB deletes the others), and which batches expire.
   */
  private async walkForRetention(
    state: ManagedLedgerState,
    from: Position,
    request: RetentionRequest & { readonly maxBatches: number },
  ): Promise<{ batches: StoredBatch[]; leftovers: Item[]; expiring: Set<string>; cut: number }> {
    let cut = 0;
    const leftovers: Item[] = [];
    const batches: StoredBatch[] = [];
    const expiring = new Set<string>();
    for (const ledger of state.ledgers) {
      if (ledger.ledgerId < from.ledgerId || batches.length >= request.maxBatches) continue;
      let startKey: Item | undefined;
      let stop = false;
      const lowest =
        ledger.ledgerId === from.ledgerId ? await this.walkStart(ledger.ledgerId, from.entryId) : 0n;
      do {
        const page = await this.client.send(
          new QueryCommand({
            TableName: this.entriesTable,
            KeyConditionExpression: 'ledgerId = :l AND firstEntryId >= :lowest',
            ExpressionAttributeValues: { ':l': N(ledger.ledgerId), ':lowest': N(lowest) },
            Limit: 100,
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        );
        for (const chunk of page.Items ?? []) {
          const firstEntryId = big(chunk, 'firstEntryId') as bigint;
          const count = num(chunk, 'n') ?? 0;
          const expires = this.expireEntries && expiresAtMsOf(chunk) !== undefined;
          if (expires) expiring.add(batchKey({ ledgerId: ledger.ledgerId, firstEntryId }));
          const last = Position.of(ledger.ledgerId, firstEntryId + BigInt(count - 1));
          if (last.compareTo(from) < 0) {
            if (!expires) leftovers.push({ ledgerId: N(ledger.ledgerId), firstEntryId: N(firstEntryId) });
            continue;
          }
          // A batch that ends after what every subscription consumed stops the walk.
          if (last.compareTo(request.consumedUpTo) > 0 || batches.length >= request.maxBatches) {
            stop = true;
            break;
          }
          // A batch a 0/0 trim cut (the first kept position inside it): what is left of it counts.
          const skipped =
            ledger.ledgerId === from.ledgerId && from.entryId > firstEntryId
              ? from.entryId - firstEntryId
              : 0n;
          if (skipped > 0n) cut = Number(skipped);
          batches.push({
            ledgerId: ledger.ledgerId,
            firstEntryId,
            count,
            publishTimeMs: num(chunk, 'pt') ?? 0,
            bytes: (chunk.e?.L ?? [])
              .slice(Number(skipped))
              .reduce((sum, entry) => sum + Buffer.byteLength(entry.M?.p?.S ?? ''), 0),
          });
        }
        startKey = stop ? undefined : page.LastEvaluatedKey;
      } while (startKey);
      if (stop) break;
    }
    return { batches, leftovers, expiring, cut };
  }

  /**
   * Where a retention walk starts in the first kept position's ledger: without entry expiry at its
   * start (batches before the first kept position are leftovers of a run that died, deleted here);
   * with it, at the batch holding the first kept position, since the batches before it stay
   * stored until they expire and reading them again at every visit would be paid for nothing.
   */
  private async walkStart(ledgerId: bigint, entryId: bigint): Promise<bigint> {
    if (!this.expireEntries || entryId <= 0n) return 0n;
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.entriesTable,
        KeyConditionExpression: 'ledgerId = :l AND firstEntryId <= :e',
        ExpressionAttributeValues: { ':l': N(ledgerId), ':e': N(entryId) },
        ProjectionExpression: 'firstEntryId',
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    return big(result.Items?.[0], 'firstEntryId') ?? 0n;
  }

  /**
   * Retention 0/0 with entry expiry: the first kept position moves to just after what every
   * subscription consumed, and nothing is read or deleted but batches of ledgers that may hold some
   * written without expiry (those up to `tf`). The entries count exactly (ids allocated in the
   * range); the bytes are the partition's average unless everything stored went.
   */
  private async trimToConsumed(
    item: Item,
    state: ManagedLedgerState,
    request: RetentionRequest,
  ): Promise<Trimmed | undefined> {
    const first = state.ledgers[0] as LedgerInfo;
    const current = state.ledgers[state.ledgers.length - 1] as LedgerInfo;
    const from = state.firstKept ?? Position.of(first.ledgerId, 0n);
    const end = Position.of(current.ledgerId, current.entries);
    const consumedTo = nextInLedger(request.consumedUpTo);
    const to = consumedTo.compareTo(end) > 0 ? end : consumedTo;
    if (to.compareTo(from) <= 0) return { entries: 0, bytes: 0, from, to: from };
    const entries = entriesBetween(state.ledgers, from, to);
    const storedEntries = state.msgInCounter - (state.entriesDeleted ?? 0);
    const storedBytes = state.bytesInCounter - (state.bytesDeleted ?? 0);
    const bytes =
      entries >= storedEntries
        ? storedBytes
        : Math.floor((storedBytes * entries) / Math.max(1, storedEntries));
    if (!(await this.recordTrim(state, { from, to, entries, bytes }))) return undefined;
    const expiringAfter = big(item, FIRST_EXPIRING_LEDGER);
    const legacy = state.ledgers
      .map((ledger) => ledger.ledgerId)
      .filter(
        (ledgerId) =>
          ledgerId >= from.ledgerId &&
          ledgerId <= to.ledgerId &&
          (expiringAfter === undefined || ledgerId <= expiringAfter),
      );
    if (legacy.length > 0) {
      const deleted = await deleteChunksWithoutExpiry(this.client, {
        entriesTable: this.entriesTable,
        ledgerIds: legacy,
        // From the batch holding the old first kept position: those before it went earlier.
        from: Position.of(from.ledgerId, await this.walkStart(from.ledgerId, from.entryId)),
        before: to,
      });
      for (const batch of deleted) this.chunks.forget(batch.ledgerId, batch.firstEntryId);
    }
    return { entries, bytes, from, to };
  }

  /**
   * Records a trim on the state: the new first kept position and what went, conditional on the
   * first kept position read (of two runs racing, one counts). False when the other won.
   */
  private async recordTrim(
    state: ManagedLedgerState,
    trim: {
      readonly from: Position;
      readonly to: Position;
      readonly entries: number;
      readonly bytes: number;
    },
  ): Promise<boolean> {
    const values: Record<string, AttributeValue> = {
      ':to': S(trim.to.toString()),
      ':b': N(trim.bytes),
      ':n': N(trim.entries),
    };
    let condition = 'attribute_not_exists(tp)';
    if (state.firstKept) {
      condition = 'tp = :from';
      values[':from'] = S(trim.from.toString());
    }
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.catalogTable,
          Key: { pk: S(stateKey(state.partition)), sk: S(STATE_SK) },
          UpdateExpression: 'SET tp = :to ADD bd :b, dm :n',
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return false;
    }
  }

  /**
   * When due (the state's `xd`), walks the batches from the first kept position (or where the last
   * walk stopped, `xr`) and renews what expires within half the entry expiry; then records when
   * the next walk is due, or where it goes on (`xr`, with the earliest expiry so far, `xm`). Runs
   * for any partition that has had batches with expiry (`tf` set), whether or not expiry is on now.
   */
  async renewExpiry(
    partition: TopicName,
    request: { readonly nowMs: number; readonly maxBatches: number },
  ): Promise<Renewed | undefined> {
    const item = await this.stateItem(partition);
    if (!item) return undefined;
    const idle = { renewed: 0, walked: 0 };
    if (item[FIRST_EXPIRING_LEDGER] === undefined || this.entryExpiryMs <= 0) return idle;
    const dueAtMs = num(item, 'xd');
    if (dueAtMs !== undefined && request.nowMs < dueAtMs) return idle;
    const state = await this.toState(partition, item);
    const first = state.ledgers[0] as LedgerInfo;
    const kept = state.firstKept ?? Position.of(first.ledgerId, 0n);
    const resume = str(item, 'xr') === undefined ? undefined : Position.parse(str(item, 'xr') as string);
    const walk = await renewExpiryWalk(this.client, {
      entriesTable: this.entriesTable,
      ledgers: state.ledgers,
      start: resume && resume.compareTo(kept) > 0 ? resume : kept,
      nowMs: request.nowMs,
      expiryMs: this.entryExpiryMs,
      maxBatches: request.maxBatches,
    });
    const earliestMs = Math.min(
      walk.earliestMs,
      resume ? (num(item, 'xm') ?? walk.earliestMs) : walk.earliestMs,
    );
    const next = walk.resumeAt ? request.nowMs : renewalDueAtMs(earliestMs, this.entryExpiryMs);
    await this.client
      .send(
        new UpdateItemCommand({
          TableName: this.catalogTable,
          Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
          UpdateExpression: walk.resumeAt ? 'SET xd = :d, xr = :r, xm = :m' : 'SET xd = :d REMOVE xr, xm',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: {
            ':d': N(next),
            ...(walk.resumeAt ? { ':r': S(walk.resumeAt.toString()), ':m': N(earliestMs) } : {}),
          },
        }),
      )
      .catch((error: unknown) => {
        // Detached meanwhile (the topic was deleted): nothing left to renew.
        if (!isConditionalCheckFailed(error)) throw error;
      });
    return {
      renewed: walk.renewed,
      walked: walk.walked,
      ...(walk.expired > 0 ? { expired: walk.expired } : {}),
      dueAtMs: next,
    };
  }

  private async stateItem(partition: TopicName): Promise<Item | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.catalogTable,
        Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
        ConsistentRead: true,
      }),
    );
    return result.Item;
  }

  /**
   * A conditional DeleteItem of the state: its first ledger (`fl`; in a state written before it,
   * the first closed one, or the current one while none is closed).
   */
  async detachPartition(partition: TopicName, firstLedgerId: bigint): Promise<void> {
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.catalogTable,
          Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
          ConditionExpression:
            'fl = :first OR (attribute_not_exists(fl) AND ((size(ld) = :zero AND cl = :first) OR ld[0].i = :first))',
          ExpressionAttributeValues: { ':zero': N(0), ':first': N(firstLedgerId) },
        }),
      );
    } catch (error) {
      // Gone already, or another incarnation: nothing of this one to detach.
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async purgeLedger(ledgerId: bigint, maxItems: number): Promise<boolean> {
    this.chunks.forgetLedger(ledgerId);
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.entriesTable,
        KeyConditionExpression: 'ledgerId = :l',
        ExpressionAttributeValues: { ':l': N(ledgerId) },
        ProjectionExpression: 'ledgerId, firstEntryId',
        Limit: maxItems,
        ConsistentRead: true,
      }),
    );
    const keys = page.Items ?? [];
    await deleteAll(this.client, this.entriesTable, keys);
    if (keys.length >= maxItems || page.LastEvaluatedKey) return true;
    // The closed-ledger item first: the index names its partition, and goes last.
    const index = await this.client.send(
      new GetItemCommand({
        TableName: this.catalogTable,
        Key: ledgerIndexKey(ledgerId),
        ConsistentRead: true,
      }),
    );
    const owner = str(index.Item, 'p');
    if (owner !== undefined) await this.closedLedgers.delete(TopicName.parse(owner), ledgerId);
    await deleteAll(this.client, this.catalogTable, [ledgerIndexKey(ledgerId)]);
    return false;
  }

  /**
   * Allocates ids for a prefix of `entries` in the current ledger, rolling over when it is full.
   * The id allocation (one UpdateItem: ids, counters, the publish time and producer), then, for
   * the first publish of a minute, the rate snapshot's renewal (one more, conditional).
   */
  /** Why the allocation's condition failed: no partition, or the exclusive producer check (one read). */
  private async refusal(partition: TopicName, options: AppendOptions): Promise<Error> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.catalogTable,
        Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
        ConsistentRead: true,
      }),
    );
    if (result.Item === undefined) return new TopicNotFoundError(partition.toString());
    return publishRefusal(partition.toString(), exclusiveProducerOf(result.Item), options.access);
  }

  private async allocate(
    partition: TopicName,
    entries: readonly NewEntry[],
    options: AppendOptions & { readonly publishTimeMs: number },
  ): Promise<{ ledgerId: bigint; first: bigint; count: number; subscriptionsVersion: string }> {
    const max = BigInt(this.maxEntriesPerLedger);
    for (;;) {
      const wanted = BigInt(entries.length);
      const bytes = entries.reduce((sum, entry) => sum + payloadBytes(entry), 0);
      let updated: Item | undefined;
      try {
        const values: Record<string, AttributeValue> = {
          ':n': N(wanted),
          ':b': N(bytes),
          ':t': N(options.publishTimeMs),
        };
        if (options.producerName !== undefined) values[':p'] = S(options.producerName);
        const access = accessCheck(options);
        Object.assign(values, access.values);
        const result = await this.client.send(
          new UpdateItemCommand({
            TableName: this.catalogTable,
            Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
            // lq/lu keep the producer and time of the publish before (read before the update).
            // tf: the ledgers after the current one hold only batches that expire (set once).
            UpdateExpression: `SET lt = :t${
              options.producerName !== undefined
                ? ', lq = if_not_exists(lp, :p), lu = if_not_exists(lt, :t), lp = :p'
                : ''
            }${this.expireEntries ? `, ${FIRST_EXPIRING_LEDGER} = if_not_exists(${FIRST_EXPIRING_LEDGER}, cl)` : ''}${access.set} ADD nx :n, mi :n, bi :b`,
            ConditionExpression: `attribute_exists(pk) AND ${access.condition}`,
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        );
        updated = result.Attributes;
        await this.renewRateSnapshot(partition, updated as Item, {
          count: Number(wanted),
          bytes,
          atMs: options.publishTimeMs,
        });
      } catch (error) {
        if (isConditionalCheckFailed(error)) throw await this.refusal(partition, options);
        throw error;
      }
      const ledgerId = big(updated, 'cl') as bigint;
      const next = big(updated, 'nx') as bigint;
      const first = next - wanted;
      const fitting = first >= max ? 0n : (next > max ? max : next) - first;
      if (fitting < wanted) {
        // The part past the ledger's end is not written: take it back out of the counters.
        const unused = entries.slice(Number(fitting));
        const unusedBytes = unused.reduce((sum, entry) => sum + payloadBytes(entry), 0);
        await this.client.send(
          new UpdateItemCommand({
            TableName: this.catalogTable,
            Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
            UpdateExpression: 'ADD mi :n, bi :b',
            ExpressionAttributeValues: { ':n': N(-unused.length), ':b': N(-unusedBytes) },
          }),
        );
      }
      if (fitting > 0n) {
        return { ledgerId, first, count: Number(fitting), subscriptionsVersion: versionOf(updated as Item) };
      }
      await this.rollOver(partition, updated as Item);
    }
  }

  /**
   * When the partition's rate snapshot is a minute old (or missing), the counters as they were
   * before this publish become the snapshot, the old one the previous, and the last producer joins
   * the recent publishers. Conditional on the snapshot read: of publishers racing, one renews.
   */
  private async renewRateSnapshot(
    partition: TopicName,
    item: Item,
    publish: { readonly count: number; readonly bytes: number; readonly atMs: number },
  ): Promise<void> {
    const counter = rateCounterOf(item);
    if (!snapshotDue(counter, publish.atMs)) return;
    // The first snapshot is zero, whichever racing publisher writes it (see DynamoDbDispatchStore.addToCounters).
    const snapshot: RateSnapshot = counter
      ? {
          atMs: publish.atMs,
          count: (num(item, 'mi') ?? 0) - publish.count,
          bytes: (num(item, 'bi') ?? 0) - publish.bytes,
        }
      : { atMs: publish.atMs, count: 0, bytes: 0 };
    const values: Record<string, AttributeValue> = {
      ':s': numbers([snapshot.atMs, snapshot.count, snapshot.bytes]),
      ':pl': { S: JSON.stringify(publishersOf(item)) },
    };
    let update = 'SET rs = :s, pl = :pl';
    let condition = 'attribute_not_exists(rs)';
    if (counter) {
      values[':q'] = numbers([counter.snapshot.atMs, counter.snapshot.count, counter.snapshot.bytes]);
      values[':old'] = N(counter.snapshot.atMs);
      update += ', rq = :q';
      condition = 'rs[0] = :old';
    }
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.catalogTable,
          Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      // Another publisher renewed it first.
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /**
   * Closes the full ledger of the state `full` and switches the state to a new one: the new
   * ledgerId, the closed-ledger item (written before the switch, so whoever reads the state after
   * it finds the closed ledger; a rollover racing this one writes the same item), then the switch,
   * conditional on the full ledger being current. The state's size does not change. A state
   * written before closed-ledger items has its list `ld` written as items and removed here.
   */
  private async rollOver(partition: TopicName, full: Item): Promise<void> {
    const fullLedgerId = big(full, 'cl') as bigint;
    const ledgerId = await this.newLedger(partition);
    await this.closedLedgers.record(partition, [
      ...legacyClosedLedgers(full),
      { ledgerId: fullLedgerId, entries: BigInt(this.maxEntriesPerLedger) },
    ]);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.catalogTable,
          Key: { pk: S(stateKey(partition)), sk: S(STATE_SK) },
          UpdateExpression: 'SET cl = :new, nx = :zero, pc = :old, fl = :first REMOVE ld',
          ConditionExpression: 'cl = :old',
          ExpressionAttributeValues: {
            ':new': N(ledgerId),
            ':old': N(fullLedgerId),
            ':zero': N(0),
            ':first': N(firstLedgerOf(full)),
          },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // Another publisher rolled over first; its ledger is used and ours was never referenced.
      await deleteAll(this.client, this.catalogTable, [ledgerIndexKey(ledgerId)]);
    }
  }

  /** A deployment-wide unique ledgerId, indexed to its partition before anyone can use it. */
  private async newLedger(partition: TopicName): Promise<bigint> {
    const result = await this.client.send(
      new UpdateItemCommand({
        TableName: this.catalogTable,
        Key: LEDGER_COUNTER_KEY,
        UpdateExpression: 'ADD v :one',
        ExpressionAttributeValues: { ':one': N(1) },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const ledgerId = big(result.Attributes, 'v') as bigint;
    await this.client.send(
      new PutItemCommand({
        TableName: this.catalogTable,
        Item: { ...ledgerIndexKey(ledgerId), p: S(partition.toString()) },
      }),
    );
    return ledgerId;
  }

  private async writeChunks(
    ledgerId: bigint,
    firstEntryId: bigint,
    entries: readonly NewEntry[],
    publishTimeMs: number,
  ): Promise<void> {
    let chunkStart = 0;
    while (chunkStart < entries.length) {
      let size = 0;
      let chunkEnd = chunkStart;
      while (chunkEnd < entries.length) {
        const entrySize = approximateSize(entries[chunkEnd] as NewEntry);
        if (chunkEnd > chunkStart && size + entrySize > MAX_CHUNK_BYTES) break;
        size += entrySize;
        chunkEnd++;
      }
      const chunk = entries.slice(chunkStart, chunkEnd);
      const item: Item = {
        ledgerId: N(ledgerId),
        firstEntryId: N(firstEntryId + BigInt(chunkStart)),
        n: N(chunk.length),
        pt: N(publishTimeMs),
        e: { L: chunk.map((entry) => ({ M: entryAttributes(entry) })) },
      };
      if (this.expireEntries) item[EXPIRES_AT] = N(expiresAtSeconds(publishTimeMs, this.entryExpiryMs));
      await this.client.send(new PutItemCommand({ TableName: this.entriesTable, Item: item }));
      this.remember(ledgerId, item);
      chunkStart = chunkEnd;
    }
  }

  /**
   * The state item with the partition's closed ledgers: from its own list in a state written
   * before closed-ledger items, else from those items (cached: see ClosedLedgerItems.read).
   */
  private async toState(partition: TopicName, item: Item): Promise<ManagedLedgerState> {
    const max = BigInt(this.maxEntriesPerLedger);
    const closed: LedgerInfo[] = item.ld
      ? legacyClosedLedgers(item)
      : await this.closedLedgers.read({
          partition,
          firstLedgerId: firstLedgerOf(item),
          lastClosedId: big(item, 'pc'),
        });
    const next = big(item, 'nx') as bigint;
    const current = { ledgerId: big(item, 'cl') as bigint, entries: next > max ? max : next };
    return {
      partition,
      ledgers: [...closed, current],
      msgInCounter: num(item, 'mi') ?? 0,
      bytesInCounter: num(item, 'bi') ?? 0,
      ...(rateCounterOf(item) ? { msgIn: rateCounterOf(item) as RateCounter } : {}),
      ...(item.lp || item.pl ? { publishers: publishersOf(item) } : {}),
      ...(item.tp?.S ? { firstKept: Position.parse(item.tp.S) } : {}),
      ...(num(item, 'dm') !== undefined ? { entriesDeleted: num(item, 'dm') as number } : {}),
      ...(num(item, 'bd') !== undefined ? { bytesDeleted: num(item, 'bd') as number } : {}),
      subscriptionsVersion: versionOf(item),
    };
  }
}

/**
 * The subscriptions version: the first ledger names the partition's incarnation, so a recreated
 * topic starts over at sv 0 and still never repeats a version.
 */
function versionOf(item: Item): string {
  return `${firstLedgerOf(item)}.${num(item, 'sv') ?? 0}`;
}

/** The partition's first ledger: `fl`, or in a state written before it the first of `ld` or `cl`. */
function firstLedgerOf(item: Item): bigint {
  return big(item, 'fl') ?? legacyClosedLedgers(item)[0]?.ledgerId ?? (big(item, 'cl') as bigint);
}

/** The closed ledgers a state written before closed-ledger items lists in `ld` (none for others). */
function legacyClosedLedgers(item: Item): LedgerInfo[] {
  return (item.ld?.L ?? []).map((ledger) => ({
    ledgerId: big(ledger.M, 'i') as bigint,
    entries: big(ledger.M, 'n') as bigint,
  }));
}

function numbers(values: readonly number[]): AttributeValue {
  return { L: values.map((value) => N(value)) };
}

function snapshotOf(value: AttributeValue | undefined): RateSnapshot | undefined {
  const list = value?.L?.map((entry) => Number(entry.N));
  if (!list || list.length < 3) return undefined;
  return { atMs: list[0] as number, count: list[1] as number, bytes: list[2] as number };
}

/** The partition's counters with their snapshots (rs, rq) and last publish time (lt). */
function rateCounterOf(item: Item): RateCounter | undefined {
  const snapshot = snapshotOf(item.rs);
  if (!snapshot) return undefined;
  const previous = snapshotOf(item.rq);
  return {
    count: num(item, 'mi') ?? 0,
    bytes: num(item, 'bi') ?? 0,
    lastAtMs: num(item, 'lt') ?? snapshot.atMs,
    snapshot,
    ...(previous ? { previous } : {}),
  };
}

/**
 * The recent publishers kept at the last renewal (pl), with the producers of the last two publishes
 * (lq at lu, then lp at lt).
 */
function publishersOf(item: Item): RecentPublisher[] {
  let kept: RecentPublisher[] = [];
  try {
    kept = item.pl?.S ? (JSON.parse(item.pl.S) as RecentPublisher[]) : [];
  } catch {
    kept = [];
  }
  const before = str(item, 'lq');
  const withBefore = before === undefined ? kept : withPublisher(kept, before, num(item, 'lu') ?? 0);
  const last = str(item, 'lp');
  return last === undefined ? withBefore : withPublisher(withBefore, last, num(item, 'lt') ?? 0);
}

/** The entries of a batch allocated from `first` that carry a deliverAt, as the delayed index takes them. */
export function delayedOf(batch: readonly NewEntry[], ledgerId: bigint, first: bigint): DelayedEntry[] {
  return batch.flatMap((entry, i) =>
    entry.deliverAtMs === undefined
      ? []
      : [{ position: Position.of(ledgerId, first + BigInt(i)), deliverAtMs: entry.deliverAtMs }],
  );
}

function batchKey(batch: { readonly ledgerId: bigint; readonly firstEntryId: bigint }): string {
  return `${batch.ledgerId}:${batch.firstEntryId}`;
}

function stateKey(partition: TopicName): string {
  return catalogKeys.ledgerState(partition).pk;
}

function ledgerIndexKey(ledgerId: bigint): Item {
  return itemKey(catalogKeys.ledgerIndex(ledgerId));
}

function approximateSize(entry: NewEntry): number {
  let size =
    ENTRY_OVERHEAD_BYTES +
    payloadBytes(entry) +
    Buffer.byteLength(entry.key ?? '') +
    Buffer.byteLength(entry.producerName ?? '');
  for (const [name, value] of Object.entries(entry.properties)) {
    size += Buffer.byteLength(name) + Buffer.byteLength(value) + 3;
  }
  return size;
}

function entryAttributes(entry: NewEntry): Record<string, AttributeValue> {
  // A binary payload is stored as bytes (B): the 256 KiB limit counts raw bytes, and base64 would
  // not fit a full one beside its metadata in one 350 KB chunk.
  const attributes: Record<string, AttributeValue> = entry.binary
    ? { b: { B: Buffer.from(entry.payload, 'base64') } }
    : { p: S(entry.payload) };
  if (entry.producerName !== undefined) attributes.pn = S(entry.producerName);
  if (entry.sequenceId !== undefined) attributes.sq = N(entry.sequenceId);
  if (entry.key !== undefined) attributes.k = S(entry.key);
  if (Object.keys(entry.properties).length > 0) {
    attributes.pr = { M: Object.fromEntries(Object.entries(entry.properties).map(([k, v]) => [k, S(v)])) };
  }
  if (entry.eventTimeMs !== undefined) attributes.et = N(entry.eventTimeMs);
  if (entry.deliverAtMs !== undefined) attributes.da = N(entry.deliverAtMs);
  return attributes;
}

function toStoredEntry(
  position: Position,
  entry: Record<string, AttributeValue>,
  publishTimeMs: number,
): StoredEntry {
  const properties: Record<string, string> = {};
  for (const [name, value] of Object.entries(entry.pr?.M ?? {})) properties[name] = value.S ?? '';
  const stored: {
    -readonly [K in keyof StoredEntry]: StoredEntry[K];
  } = { position, payload: entry.p?.S ?? '', properties, publishTimeMs };
  if (entry.b?.B !== undefined) {
    stored.payload = Buffer.from(entry.b.B).toString('base64');
    stored.binary = true;
  }
  if (entry.pn?.S !== undefined) stored.producerName = entry.pn.S;
  if (entry.sq?.N !== undefined) stored.sequenceId = Number(entry.sq.N);
  if (entry.k?.S !== undefined) stored.key = entry.k.S;
  if (entry.et?.N !== undefined) stored.eventTimeMs = Number(entry.et.N);
  if (entry.da?.N !== undefined) stored.deliverAtMs = Number(entry.da.N);
  return stored;
}

/**
 * The allocation's exclusive-producer check (ProducerAccessStore's attributes on the state: `xi`
 * the holder's registration id, `xu` its lease end): the holder's own publish renews its lease;
 * any other publish needs no live holder. Pure expression parts; free in the same write.
 */
function accessCheck(options: AppendOptions & { readonly publishTimeMs: number }): {
  readonly condition: string;
  readonly set: string;
  readonly values: Record<string, AttributeValue>;
} {
  if (options.access === undefined) {
    return {
      condition: '(attribute_not_exists(xi) OR xu < :t)',
      set: '',
      values: {},
    };
  }
  return {
    condition: 'xi = :xi',
    set: ', xu = :xu',
    values: {
      ':xi': S(options.access.producerId),
      ':xu': N(options.publishTimeMs + PRODUCER_LEASE_MS),
    },
  };
}

/** The exclusive producer a ledger state item holds (lease lapsed or not), if any. */
export function exclusiveProducerOf(item: Item): ExclusiveProducer | undefined {
  const producerId = str(item, 'xi');
  if (producerId === undefined) return undefined;
  return {
    producerId,
    producerName: str(item, 'xn') ?? '',
    topicEpoch: num(item, 'xe') ?? 0,
    leaseUntilMs: num(item, 'xu') ?? 0,
  };
}
