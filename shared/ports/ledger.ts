import type { LedgerInfo } from '../domain/ledger-layout.ts';
import type { Position } from '../domain/position.ts';
import type { ProducerAccessToken } from '../domain/producer-access.ts';
import type { RateCounter } from '../domain/rate-counter.ts';
import type { RecentPublisher } from '../domain/recent-publishers.ts';
import type { RetentionRequest } from '../domain/retention-plan.ts';
import type { TopicName } from '../domain/topic-name.ts';

export type { LedgerInfo, RecentPublisher };

/** A partition's managed-ledger state: ledgers in order, the last one open. */
export interface ManagedLedgerState {
  readonly partition: TopicName;
  readonly ledgers: readonly LedgerInfo[];
  readonly msgInCounter: number;
  readonly bytesInCounter: number;
  /**
   * msgInCounter and bytesInCounter as a rate counter (its snapshots renewed by the first publish
   * of every minute: one more write per partition and minute while it is published to); undefined
   * before the first publish that kept one.
   */
  readonly msgIn?: RateCounter;
  /**
   * The roles that published lately, newest first (at most MAX_RECENT_PUBLISHERS): the last one,
   * and those remembered when the rate snapshot was renewed.
   */
  readonly publishers?: readonly RecentPublisher[];
  /** The first position retention kept (everything before it was deleted); undefined: nothing was. */
  readonly firstKept?: Position;
  /** What retention deleted: entries and payload bytes (bytesInCounter minus it is what is stored). */
  readonly entriesDeleted?: number;
  readonly bytesDeleted?: number;
  /**
   * Changes whenever the partition's subscriptions change
   * ({@link Ledger.announceSubscriptions}), and differs between two incarnations
   * of a partition (a topic deleted and created again). Opaque.
   */
  readonly subscriptionsVersion: string;
}

/** What one retention run deleted on a partition. */
export interface Trimmed {
  readonly entries: number;
  readonly bytes: number;
  /** The first kept position before and after the run. */
  readonly from: Position;
  readonly to: Position;
}

/** What one expiry renewal walk did on a partition ({@link Ledger.renewExpiry}). */
export interface Renewed {
  /** Batches whose expiry it renewed. */
  readonly renewed: number;
  /** Batches it read. */
  readonly walked: number;
  /** Kept batches it found already expired (0 unless maintenance stopped for too long): lost. */
  readonly expired?: number;
  /** When the next walk is due (epoch ms); undefined: the walk was not due, or expiry is off. */
  readonly dueAtMs?: number;
}

/** Options of an append. */
export interface AppendOptions {
  /** Who publishes (the caller's role), for the partition's recent publishers. */
  readonly producerName?: string;
  /**
   * The exclusive producer making the publish (its registration, see ProducerAccessStore): the id
   * allocation appends only if it still holds the partition, and renews its lease. Without it, the
   * allocation appends only while no exclusive producer holds the partition. Checked in the same
   * conditional write (no extra cost); a refusal throws ProducerFencedError / ProducerBusyError and
   * writes nothing.
   */
  readonly access?: ProducerAccessToken;
}

/** What one append allocated and wrote. */
export interface Appended {
  /** The entries' positions, in the order given. */
  readonly positions: Position[];
  /**
   * The subscriptions version read atomically with the id allocation (the last
   * one, when the append spans two ledgers): the entries are owed, by their
   * publisher, to the subscriptions announced at or before it; a subscription
   * announced later owes itself every entry allocated before its announcement.
   */
  readonly subscriptionsVersion: string;
}

/** A message to append. */
export interface NewEntry {
  /** The payload: UTF-8 text, or, when `binary`, the base64 of its bytes (stored as bytes). */
  readonly payload: string;
  /** The payload is bytes, carried as base64 in `payload` (and on the JSON wire). */
  readonly binary?: boolean;
  /** The producer that published it (Pulsar's message metadata `producer_name`). */
  readonly producerName?: string;
  /** The producer's sequence id (Pulsar's `sequence_id`), when it sent one. */
  readonly sequenceId?: number;
  readonly key?: string;
  readonly properties: Readonly<Record<string, string>>;
  readonly eventTimeMs?: number;
  /** Epoch ms before which the message must not be delivered (delayed delivery). */
  readonly deliverAtMs?: number;
}

/** The payload's size in bytes: its UTF-8 bytes, or the bytes a binary payload's base64 stands for. */
export function payloadBytes(entry: Pick<NewEntry, 'payload' | 'binary'>): number {
  return entry.binary ? Buffer.byteLength(entry.payload, 'base64') : Buffer.byteLength(entry.payload, 'utf8');
}

export interface StoredEntry extends NewEntry {
  readonly position: Position;
  readonly publishTimeMs: number;
}

export interface ReadEntriesOptions {
  /**
   * false: an eventually consistent read (half the cost): entries written a moment ago may be
   * missing, never wrong (entries are immutable). Default true.
   */
  readonly consistent?: boolean;
}

/**
 * The log of every topic partition, made of ledgers. ledgerIds are unique
 * across the deployment, so a ledgerId names exactly one partition.
 */
export interface Ledger {
  /** Creates the partition's first ledger (idempotent). */
  initialize(partition: TopicName): Promise<ManagedLedgerState>;
  /**
   * Appends entries in order and returns their positions. A ledger rolls over
   * after `maxEntriesPerLedger` entries; one call may span two ledgers. The id allocation also
   * records the publish time and the producer; the first publish of a minute renews the rate
   * snapshot (one more write).
   * Cost: the id allocation (one update of the partition's state, whose size does not grow with
   * the number of ledgers or entries: 1 write unit for names of usual length), one write per
   * 350 KB of entries. A rollover adds 6 writes of 1 unit, whatever the number of ledgers before:
   * the allocation that found the ledger full and its take-back, a new ledger id, its index, the
   * closed ledger's record, the switch (test/integration/ledger-cost.test.ts).
   */
  append(
    partition: TopicName,
    entries: readonly NewEntry[],
    publishTimeMs: number,
    options?: AppendOptions,
  ): Promise<Appended>;
  /**
   * Records that the partition's subscriptions changed (one created or deleted)
   * and returns the state at that instant, atomically: every entry allocated
   * before it is in `ledgers`, and every append after it sees the new
   * `subscriptionsVersion`. Publishers keep the subscription list per version,
   * so their hot path reads no catalog.
   * Cost: one update of the partition's state, and its closed ledgers as {@link Ledger.state} reads them.
   * @throws TopicNotFoundError when the partition has no state.
   */
  announceSubscriptions(partition: TopicName): Promise<ManagedLedgerState>;
  /**
   * The partition's state with every ledger (undefined: none, or deleted).
   * Cost: one strongly consistent read of the state (fixed size), plus the closed ledgers this
   * process has not read before: none when no ledger closed since its last read (closed ledgers
   * never change and are cached), one read unit after a rollover, and at a process's first read
   * one Query of them all (about 45 ledgers a read unit, for a partition name of 50 bytes).
   */
  state(partition: TopicName): Promise<ManagedLedgerState | undefined>;
  /** The partition that owns `ledgerId`, if any. */
  ownerOf(ledgerId: bigint): Promise<TopicName | undefined>;
  /**
   * The entry at `position`; undefined when it was never written, its batch expired, or it is
   * before the partition's first kept position (retention let it go: with entry expiry its batch
   * may still be stored until DynamoDB's TTL deletes it, and is never returned from here).
   * Cost: one Query of its batch (none when cached); with entry expiry, one strongly consistent
   * read of the partition's first kept position (and, once per ledger and process, its owner).
   */
  readEntry(position: Position): Promise<StoredEntry | undefined>;
  /**
   * The written entries of ledger `ledgerId` from `firstEntryId` to `lastEntryId`, both included,
   * in order (BookKeeper's `ReadHandle.read(first, last)`); ids allocated but never written, or past
   * the ledger's end, are absent. Nothing when `firstEntryId > lastEntryId`. For reading a run of a
   * backlog: the storage items holding the range are each read once, not once per entry.
   * Batches past their expiry are absent (DynamoDB deletes expired items within days, not at once).
   * Entries before the partition's first kept position that have not expired yet are returned:
   * callers read at or after a cursor's read position, which retention never passes (it trims only
   * what every subscription acknowledged, and moves a cursor a reset put below it forward); a read
   * by an arbitrary position goes through {@link Ledger.readEntry}, which checks.
   */
  readEntries(
    ledgerId: bigint,
    firstEntryId: bigint,
    lastEntryId: bigint,
    options?: ReadEntriesOptions,
  ): Promise<StoredEntry[]>;
  /**
   * The first entry written in ledger `ledgerId` after `entryId`, with its publish time; undefined
   * when none is. `entryId` is -1n (from the start), an id never written (the end of a hole), or
   * the last entry of a publish batch: batches are stored whole, and this finds the next one by
   * its key without reading payloads. Expired batches are skipped, as in readEntries.
   */
  firstWrittenAfter(
    ledgerId: bigint,
    entryId: bigint,
  ): Promise<{ position: Position; publishTimeMs: number } | undefined>;
  /**
   * Detaches the partition's state from its name, when its first ledger is `firstLedgerId` (the
   * incarnation a deletion captured): appends to the name fail from then on, and `initialize`
   * creates a new incarnation with new ledgers. The ledgers and entries stay until
   * {@link Ledger.purgeLedger}. Idempotent; a newer incarnation is left alone. Cost: one
   * conditional delete.
   */
  detachPartition(partition: TopicName, firstLedgerId: bigint): Promise<void>;
  /**
   * Deletes up to `maxItems` stored items of ledger `ledgerId` (its entries), then, once none is
   * left, its record in the partition's layout and its index item. Idempotent: a crash between
   * two calls loses nothing that still has to go.
   * Cost: one Query of keys and one write per item deleted; the last call also reads the index
   * and deletes two items.
   * @returns true when items may remain (call again).
   */
  purgeLedger(ledgerId: bigint, maxItems: number): Promise<boolean>;
  /**
   * Retention (Pulsar's trimConsumedLedgers, per stored batch instead of per ledger): lets go,
   * oldest first, the batches `planRetention` allows, and records the new first kept position and
   * what went (one conditional write: of two runs racing, one counts). Ledgers stay in the layout
   * (their entries read as absent).
   * With entry expiry (docs/design/storage.md#entry-expiry), a batch that carries an expiry is not
   * deleted: moving the first kept position is what trims it, and DynamoDB's TTL deletes it later
   * for no write unit. A batch without one (written before entry expiry, or with it off) is deleted,
   * as are those before the first kept position that a run which died left.
   * Cost: with entry expiry and 0/0 (everything consumed goes), the state and one write: no batch
   * is read (the bytes that went are then estimated from the partition's average, exact once
   * everything stored went). Otherwise the batches read (one Query page per 100 from the first
   * kept), one write, one delete per batch deleted (BatchWriteItem, 25 a request). At most
   * `maxBatches` batches a run.
   */
  trim(
    partition: TopicName,
    request: RetentionRequest & { readonly maxBatches: number },
  ): Promise<Trimmed | undefined>;
  /**
   * Keeps alive what the partition still holds (docs/design/storage.md#entry-expiry): when a walk
   * is due, renews the expiry of every batch from the first kept position on that expires within
   * half the entry expiry, in position order, up to the first batch published late enough not to
   * need it, and records when the next walk is due (a quarter of the expiry before the earliest
   * expiry left). Nothing at or after the first kept position ever expires while maintenance visits
   * the partition at least that often. Undefined when the partition has no state; nothing done when
   * entry expiry is off (and no batch of the partition carries one) or the walk is not due.
   * Cost: when not due, the state read; when due, the batches walked (one Query page per 100,
   * eventually consistent), one write per batch renewed (sized as the batch), one write of the
   * state. At most `maxBatches` batches a walk; the next one resumes where it stopped.
   */
  renewExpiry(
    partition: TopicName,
    request: { readonly nowMs: number; readonly maxBatches: number },
  ): Promise<Renewed | undefined>;
}

/**
 * The ledger with this container's cache of ledger states and ledger owners in front of it
 * (CachingLedger, built in the composition root). The Ledger methods read and write the store as
 * they say; these answer from what this container read lately.
 */
export interface CachedLedger extends Ledger {
  /** The partition's state, as read lately by this method (for the dispatcher's idle path). */
  recentState(partition: TopicName): Promise<ManagedLedgerState | undefined>;
  /**
   * The first of `positions` that names no written entry of the partition's ledgers (none:
   * undefined), answered from a remembered state when that already holds them all.
   */
  firstUnwritten(partition: TopicName, positions: readonly Position[]): Promise<Position | undefined>;
  /** The partition that owns `ledgerId`, as this container read it once (a ledger never changes hands). */
  knownOwnerOf(ledgerId: bigint): Promise<TopicName | undefined>;
}
