import { TopicNotFoundError } from '../../shared/domain/catalog-errors.ts';
import {
  DEFAULT_ENTRY_EXPIRY_MS,
  expiresAtSeconds,
  expiryBeyondWalkMs,
  needsRenewal,
  renewalDueAtMs,
  walkMayStopAt,
} from '../../shared/domain/entry-expiry.ts';
import { nextInLedger, Position } from '../../shared/domain/position.ts';
import {
  type ExclusiveProducer,
  PRODUCER_LEASE_MS,
  publishAllowed,
  publishRefusal,
} from '../../shared/domain/producer-access.ts';
import { type RateSnapshot, snapshotDue } from '../../shared/domain/rate-counter.ts';
import { type RecentPublisher, withPublisher } from '../../shared/domain/recent-publishers.ts';
import {
  entriesBetween,
  letsGoAllConsumed,
  planRetention,
  type RetentionRequest,
  type StoredBatch,
} from '../../shared/domain/retention-plan.ts';
import type { TopicName } from '../../shared/domain/topic-name.ts';
import type { Clock } from '../../shared/ports/clock.ts';
import type { DelayedIndex } from '../../shared/ports/delayed-index.ts';
import {
  type Appended,
  type AppendOptions,
  type Ledger,
  type ManagedLedgerState,
  type NewEntry,
  payloadBytes,
  type Renewed,
  type StoredEntry,
  type Trimmed,
} from '../../shared/ports/ledger.ts';
import { InjectedFaults } from './in-memory-faults.ts';

export interface PartitionRecord {
  readonly partition: TopicName;
  readonly ledgers: { readonly ledgerId: bigint; entries: bigint }[];
  msgInCounter: number;
  bytesInCounter: number;
  /** As DynamoDbLedger's lt, lp, lu, lq, rs, rq, pl. */
  lastPublishAtMs?: number;
  lastProducer?: string;
  publishBeforeAtMs?: number;
  producerBefore?: string;
  snapshot?: RateSnapshot;
  previous?: RateSnapshot;
  publishersKept?: RecentPublisher[];
  /** As DynamoDbLedger's tp, dm, bd. */
  firstKept?: Position;
  entriesDeleted?: number;
  bytesDeleted?: number;
  /** How many times its subscriptions were announced. */
  announcements: number;
  /** As DynamoDbLedger's tf, xd, xr, xm (entry expiry). */
  firstExpiringAfter?: bigint;
  renewalDueAtMs?: number;
  renewalResumeAt?: Position;
  renewalEarliestMs?: number;
  /** As DynamoDbLedger's xi, xn, xe, xu (the exclusive producer) and te (the topic epoch). */
  exclusive?: ExclusiveProducer;
  topicEpoch?: number;
}

/** Entry expiry as DynamoDbLedger's options say it (docs/design/storage.md#entry-expiry). */
export interface InMemoryExpiry {
  readonly clock: Clock;
  /** Whether appends write an expiry (DynamoDbLedgerOptions.expireEntries). */
  readonly expireEntries: boolean;
  /** Default DEFAULT_ENTRY_EXPIRY_MS. */
  readonly entryExpiryMs?: number;
}

/**
 * What DynamoDbLedger keeps in its tables: partition states, the
 * deployment-wide ledgerId counter, the ledger index and the entries. Several
 * InMemoryLedger instances over one InMemoryLedgerTables behave as several
 * functions over one deployment's tables.
 */
export class InMemoryLedgerTables {
  readonly partitions = new Map<string, PartitionRecord>();
  readonly owners = new Map<bigint, TopicName>();
  readonly entries = new Map<string, StoredEntry>();
  /** Each stored entry's expiry (epoch ms, whole seconds as DynamoDB's TTL), when it has one. */
  readonly expiresAtMs = new Map<string, number>();

  /**
   * What DynamoDB's TTL does some time after an expiry: deletes every entry expired at `nowMs`.
   * Returns how many went.
   */
  deleteExpired(nowMs: number): number {
    let deleted = 0;
    for (const [key, expiresAtMs] of this.expiresAtMs) {
      if (expiresAtMs > nowMs) continue;
      this.entries.delete(key);
      this.expiresAtMs.delete(key);
      deleted++;
    }
    return deleted;
  }

  /** @param nextLedgerId the first ledgerId handed out (DynamoDbLedger's counter starts at 1). */
  constructor(private nextLedgerId = 1n) {}

  /** A ledgerId never handed out before, indexed to `partition`. */
  newLedger(partition: TopicName): bigint {
    const ledgerId = this.nextLedgerId;
    this.nextLedgerId += 1n;
    this.owners.set(ledgerId, partition);
    return ledgerId;
  }
}

/**
 * Ledger in memory, with the semantics of DynamoDbLedger: ledgerIds come from
 * one counter, a ledger rolls over lazily (when an append finds it full), the
 * counters count payload bytes in UTF-8, and appending nothing does nothing.
 * Not persisted; every operation is atomic (the adapter's append is not: a
 * crash between allocating ids and writing entries leaves a hole, which
 * `allocateUnwritten` makes).
 */
export class InMemoryLedger implements Ledger {
  private readonly faults = new InjectedFaults<keyof Ledger>();

  constructor(
    private readonly maxEntriesPerLedger: number,
    /** The tables (InMemoryProducerAccessStore keeps its holders on their partition states). */
    readonly tables = new InMemoryLedgerTables(),
    /** Where appends index their delayed messages, as DynamoDbLedger does (none: not indexed). */
    private readonly delayedIndex?: DelayedIndex,
    /** Entry expiry (none: off, as DynamoDbLedger's default). */
    private readonly expiry?: InMemoryExpiry,
  ) {}

  private get expiryMs(): number {
    return this.expiry?.entryExpiryMs ?? DEFAULT_ENTRY_EXPIRY_MS;
  }

  /** Whether the stored entry at `key` expired (DynamoDB may not have deleted it yet). */
  private expired(key: string): boolean {
    const expiresAtMs = this.tables.expiresAtMs.get(key);
    return expiresAtMs !== undefined && this.expiry !== undefined && expiresAtMs <= this.expiry.clock.nowMs();
  }

  /** The stored entry at `position`, unless it expired. */
  private live(position: Position): StoredEntry | undefined {
    const key = position.toString();
    return this.expired(key) ? undefined : this.tables.entries.get(key);
  }

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof Ledger, error: Error): void {
    this.faults.failNext(operation, error);
  }

  async initialize(partition: TopicName): Promise<ManagedLedgerState> {
    await this.faults.enter('initialize');
    let record = this.tables.partitions.get(partition.toString());
    if (record === undefined) {
      const ledgerId = this.tables.newLedger(partition);
      record = {
        partition,
        ledgers: [{ ledgerId, entries: 0n }],
        msgInCounter: 0,
        bytesInCounter: 0,
        announcements: 0,
        ...(this.expiry?.expireEntries ? { firstExpiringAfter: ledgerId - 1n } : {}),
      };
      this.tables.partitions.set(partition.toString(), record);
    }
    return snapshot(record);
  }

  async append(
    partition: TopicName,
    entries: readonly NewEntry[],
    publishTimeMs: number,
    options: AppendOptions = {},
  ): Promise<Appended> {
    await this.faults.enter('append');
    if (entries.length === 0) return { positions: [], subscriptionsVersion: '' };
    const record = this.tables.partitions.get(partition.toString());
    if (record === undefined) throw new TopicNotFoundError(partition.toString());
    // As DynamoDbLedger: the allocation checks the exclusive producer, and renews its lease.
    if (!publishAllowed(record.exclusive, options.access, publishTimeMs)) {
      throw publishRefusal(partition.toString(), record.exclusive, options.access);
    }
    if (options.access && record.exclusive) {
      record.exclusive = { ...record.exclusive, leaseUntilMs: publishTimeMs + PRODUCER_LEASE_MS };
    }
    // As DynamoDbLedger: the allocation records the time and producer; the first publish of a
    // minute renews the rate snapshot with the counters as they were before it.
    if (options.producerName !== undefined) {
      record.producerBefore = record.lastProducer ?? options.producerName;
      record.publishBeforeAtMs = record.lastPublishAtMs ?? publishTimeMs;
      record.lastProducer = options.producerName;
    }
    record.lastPublishAtMs = publishTimeMs;
    const counter = rateCounterOf(record);
    if (snapshotDue(counter, publishTimeMs)) {
      if (record.snapshot) record.previous = record.snapshot;
      record.snapshot = { atMs: publishTimeMs, count: record.msgInCounter, bytes: record.bytesInCounter };
      record.publishersKept = publishersOf(record);
    }
    const max = BigInt(this.maxEntriesPerLedger);
    const positions: Position[] = [];
    if (this.expiry?.expireEntries && record.firstExpiringAfter === undefined) {
      record.firstExpiringAfter = record.ledgers[record.ledgers.length - 1]?.ledgerId;
    }
    for (const entry of entries) {
      let current = record.ledgers[record.ledgers.length - 1]!;
      if (current.entries >= max) {
        current = { ledgerId: this.tables.newLedger(partition), entries: 0n };
        record.ledgers.push(current);
      }
      const position = Position.of(current.ledgerId, current.entries);
      current.entries += 1n;
      this.tables.entries.set(position.toString(), storedEntry(position, entry, publishTimeMs));
      if (this.expiry?.expireEntries) {
        this.tables.expiresAtMs.set(
          position.toString(),
          expiresAtSeconds(publishTimeMs, this.expiryMs) * 1_000,
        );
      }
      positions.push(position);
      record.msgInCounter += 1;
      record.bytesInCounter += payloadBytes(entry);
    }
    await this.delayedIndex?.put(
      partition,
      entries.flatMap((entry, i) =>
        entry.deliverAtMs === undefined
          ? []
          : [{ position: positions[i] as Position, deliverAtMs: entry.deliverAtMs }],
      ),
    );
    return { positions, subscriptionsVersion: versionOf(record) };
  }

  async trim(
    partition: TopicName,
    request: RetentionRequest & { readonly maxBatches: number },
  ): Promise<Trimmed | undefined> {
    await this.faults.enter('trim');
    const record = this.tables.partitions.get(partition.toString());
    if (record === undefined) return undefined;
    const first = record.ledgers[0] as { ledgerId: bigint };
    const from = record.firstKept ?? Position.of(first.ledgerId, 0n);
    if (this.expiry?.expireEntries && letsGoAllConsumed(request))
      return this.trimToConsumed(record, from, request);
    // Each entry is its own batch here (DynamoDbLedger deletes whole publish batches).
    const batches: StoredBatch[] = [];
    for (const { ledgerId, entries } of record.ledgers) {
      for (let entryId = 0n; entryId < entries && batches.length < request.maxBatches; entryId++) {
        const position = Position.of(ledgerId, entryId);
        if (position.compareTo(from) < 0) continue;
        const stored = this.tables.entries.get(position.toString());
        if (!stored) continue;
        batches.push({
          ledgerId,
          firstEntryId: entryId,
          count: 1,
          publishTimeMs: stored.publishTimeMs,
          bytes: payloadBytes(stored),
        });
      }
    }
    const plan = planRetention(batches, record.bytesInCounter - (record.bytesDeleted ?? 0), request);
    const last = plan.deleted[plan.deleted.length - 1];
    if (!last) return { entries: 0, bytes: 0, from, to: from };
    for (const batch of plan.deleted) {
      const key = Position.of(batch.ledgerId, batch.firstEntryId).toString();
      // With entry expiry, one that expires is left to DynamoDB's TTL.
      if (!(this.expiry?.expireEntries && this.tables.expiresAtMs.has(key))) this.tables.entries.delete(key);
    }
    const to = Position.of(last.ledgerId, last.firstEntryId + 1n);
    return this.recordTrim(record, { from, to, entries: plan.entries, bytes: plan.bytes });
  }

  /** As DynamoDbLedger's: 0/0 with entry expiry moves the first kept position and reads no entry. */
  private trimToConsumed(record: PartitionRecord, from: Position, request: RetentionRequest): Trimmed {
    const current = record.ledgers[record.ledgers.length - 1] as { ledgerId: bigint; entries: bigint };
    const end = Position.of(current.ledgerId, current.entries);
    const consumedTo = nextInLedger(request.consumedUpTo);
    const to = consumedTo.compareTo(end) > 0 ? end : consumedTo;
    if (to.compareTo(from) <= 0) return { entries: 0, bytes: 0, from, to: from };
    const entries = entriesBetween(record.ledgers, from, to);
    const storedEntries = record.msgInCounter - (record.entriesDeleted ?? 0);
    const storedBytes = record.bytesInCounter - (record.bytesDeleted ?? 0);
    const bytes =
      entries >= storedEntries
        ? storedBytes
        : Math.floor((storedBytes * entries) / Math.max(1, storedEntries));
    // Entries written without expiry (before it, in ledgers up to tf) are deleted.
    for (const [key, stored] of this.tables.entries) {
      const { ledgerId } = stored.position;
      const legacy = record.firstExpiringAfter === undefined || ledgerId <= record.firstExpiringAfter;
      const owned = record.ledgers.some((ledger) => ledger.ledgerId === ledgerId);
      if (owned && legacy && stored.position.compareTo(to) < 0 && !this.tables.expiresAtMs.has(key)) {
        this.tables.entries.delete(key);
      }
    }
    return this.recordTrim(record, { from, to, entries, bytes });
  }

  private recordTrim(record: PartitionRecord, trimmed: Trimmed): Trimmed {
    record.firstKept = trimmed.to;
    record.entriesDeleted = (record.entriesDeleted ?? 0) + trimmed.entries;
    record.bytesDeleted = (record.bytesDeleted ?? 0) + trimmed.bytes;
    return trimmed;
  }

  /** As DynamoDbLedger's, each entry being its own batch. */
  async renewExpiry(
    partition: TopicName,
    request: { readonly nowMs: number; readonly maxBatches: number },
  ): Promise<Renewed | undefined> {
    await this.faults.enter('renewExpiry');
    const record = this.tables.partitions.get(partition.toString());
    if (record === undefined) return undefined;
    if (record.firstExpiringAfter === undefined || this.expiry === undefined)
      return { renewed: 0, walked: 0 };
    if (record.renewalDueAtMs !== undefined && request.nowMs < record.renewalDueAtMs) {
      return { renewed: 0, walked: 0 };
    }
    const first = record.ledgers[0] as { ledgerId: bigint };
    const kept = record.firstKept ?? Position.of(first.ledgerId, 0n);
    const resume = record.renewalResumeAt;
    const walk = this.walk(record, {
      start: resume && resume.compareTo(kept) > 0 ? resume : kept,
      ...request,
    });
    const earliestMs = Math.min(walk.earliestMs, resume ? (record.renewalEarliestMs ?? Infinity) : Infinity);
    const next = walk.resumeAt ? request.nowMs : renewalDueAtMs(earliestMs, this.expiryMs);
    record.renewalDueAtMs = next;
    if (walk.resumeAt) {
      record.renewalResumeAt = walk.resumeAt;
      record.renewalEarliestMs = earliestMs;
    } else {
      delete record.renewalResumeAt;
      delete record.renewalEarliestMs;
    }
    return {
      renewed: walk.renewed,
      walked: walk.walked,
      ...(walk.expired > 0 ? { expired: walk.expired } : {}),
      dueAtMs: next,
    };
  }

  private walk(
    record: PartitionRecord,
    request: { readonly start: Position; readonly nowMs: number; readonly maxBatches: number },
  ): { walked: number; renewed: number; expired: number; earliestMs: number; resumeAt?: Position } {
    const totals = { walked: 0, renewed: 0, expired: 0, earliestMs: Number.POSITIVE_INFINITY };
    const expiryMs = this.expiryMs;
    for (const { ledgerId, entries } of record.ledgers) {
      for (let entryId = 0n; entryId < entries; entryId++) {
        const position = Position.of(ledgerId, entryId);
        const stored = this.tables.entries.get(position.toString());
        if (position.compareTo(request.start) < 0 || !stored) continue;
        if (walkMayStopAt(stored.publishTimeMs, request.nowMs, expiryMs)) {
          const beyond = expiryBeyondWalkMs(stored.publishTimeMs, request.nowMs, expiryMs);
          return { ...totals, earliestMs: Math.min(totals.earliestMs, beyond) };
        }
        totals.walked++;
        const expiresAtMs = this.tables.expiresAtMs.get(position.toString());
        if (expiresAtMs !== undefined && expiresAtMs <= request.nowMs) totals.expired++;
        else if (expiresAtMs !== undefined && needsRenewal(expiresAtMs, request.nowMs, expiryMs)) {
          const renewed = expiresAtSeconds(request.nowMs, expiryMs) * 1_000;
          this.tables.expiresAtMs.set(position.toString(), renewed);
          totals.renewed++;
          totals.earliestMs = Math.min(totals.earliestMs, renewed);
        } else if (expiresAtMs !== undefined) totals.earliestMs = Math.min(totals.earliestMs, expiresAtMs);
        if (totals.walked >= request.maxBatches) return { ...totals, resumeAt: nextInLedger(position) };
      }
    }
    const beyond = expiryBeyondWalkMs(undefined, request.nowMs, expiryMs);
    return { ...totals, earliestMs: Math.min(totals.earliestMs, beyond) };
  }

  /** Test view: the expiry of the entry at `position` (epoch ms), if it has one. */
  expiryOf(position: Position): number | undefined {
    return this.tables.expiresAtMs.get(position.toString());
  }

  async announceSubscriptions(partition: TopicName): Promise<ManagedLedgerState> {
    await this.faults.enter('announceSubscriptions');
    const record = this.tables.partitions.get(partition.toString());
    if (record === undefined) throw new TopicNotFoundError(partition.toString());
    record.announcements += 1;
    return snapshot(record);
  }

  /**
   * Allocates `count` ids without writing their entries: what DynamoDbLedger
   * leaves when its publisher dies between the two (a hole that reads back as
   * nothing). Rolls over as append does.
   */
  allocateUnwritten(partition: TopicName, count: number): Position[] {
    const record = this.tables.partitions.get(partition.toString());
    if (record === undefined) throw new TopicNotFoundError(partition.toString());
    const positions: Position[] = [];
    if (this.expiry?.expireEntries && record.firstExpiringAfter === undefined) {
      record.firstExpiringAfter = record.ledgers[record.ledgers.length - 1]?.ledgerId;
    }
    for (let i = 0; i < count; i++) {
      let current = record.ledgers[record.ledgers.length - 1]!;
      if (current.entries >= BigInt(this.maxEntriesPerLedger)) {
        current = { ledgerId: this.tables.newLedger(partition), entries: 0n };
        record.ledgers.push(current);
      }
      positions.push(Position.of(current.ledgerId, current.entries));
      current.entries += 1n;
      record.msgInCounter += 1;
    }
    return positions;
  }

  /** Writes an entry at a position `allocateUnwritten` handed out: its publisher finishing late. */
  writeAllocated(position: Position, entry: NewEntry, publishTimeMs: number): StoredEntry {
    const stored = storedEntry(position, entry, publishTimeMs);
    this.tables.entries.set(position.toString(), stored);
    if (this.expiry?.expireEntries) {
      this.tables.expiresAtMs.set(
        position.toString(),
        expiresAtSeconds(publishTimeMs, this.expiryMs) * 1_000,
      );
    }
    return stored;
  }

  async state(partition: TopicName): Promise<ManagedLedgerState | undefined> {
    await this.faults.enter('state');
    const record = this.tables.partitions.get(partition.toString());
    return record === undefined ? undefined : snapshot(record);
  }

  async ownerOf(ledgerId: bigint): Promise<TopicName | undefined> {
    await this.faults.enter('ownerOf');
    return this.tables.owners.get(ledgerId);
  }

  async readEntry(position: Position): Promise<StoredEntry | undefined> {
    await this.faults.enter('readEntry');
    const entry = this.live(position);
    const firstKept = this.expiry?.expireEntries
      ? this.tables.partitions.get(this.tables.owners.get(position.ledgerId)?.toString() ?? '')?.firstKept
      : undefined;
    if (firstKept && position.compareTo(firstKept) < 0) return undefined;
    return entry === undefined ? undefined : { ...entry, properties: { ...entry.properties } };
  }

  async readEntries(ledgerId: bigint, firstEntryId: bigint, lastEntryId: bigint): Promise<StoredEntry[]> {
    await this.faults.enter('readEntries');
    const entries: StoredEntry[] = [];
    // Bounded by what the ledger holds, whatever range is asked for.
    const owner = this.tables.owners.get(ledgerId);
    const ledger =
      owner && this.tables.partitions.get(owner.toString())?.ledgers.find((l) => l.ledgerId === ledgerId);
    if (!ledger) return entries;
    const last = lastEntryId < ledger.entries - 1n ? lastEntryId : ledger.entries - 1n;
    for (let entryId = firstEntryId < 0n ? 0n : firstEntryId; entryId <= last; entryId++) {
      const entry = this.live(Position.of(ledgerId, entryId));
      if (entry !== undefined) entries.push({ ...entry, properties: { ...entry.properties } });
    }
    return entries;
  }

  async firstWrittenAfter(
    ledgerId: bigint,
    entryId: bigint,
  ): Promise<{ position: Position; publishTimeMs: number } | undefined> {
    await this.faults.enter('firstWrittenAfter');
    const owner = this.tables.owners.get(ledgerId);
    const ledger =
      owner && this.tables.partitions.get(owner.toString())?.ledgers.find((l) => l.ledgerId === ledgerId);
    if (!ledger) return undefined;
    for (let id = entryId + 1n; id < ledger.entries; id++) {
      const entry = this.live(Position.of(ledgerId, id));
      if (entry) return { position: entry.position, publishTimeMs: entry.publishTimeMs };
    }
    return undefined;
  }

  async detachPartition(partition: TopicName, firstLedgerId: bigint): Promise<void> {
    await this.faults.enter('detachPartition');
    const record = this.tables.partitions.get(partition.toString());
    if (record?.ledgers[0]?.ledgerId === firstLedgerId) this.tables.partitions.delete(partition.toString());
  }

  /** Each entry counts as one stored item (the adapter stores a publish batch as one). */
  async purgeLedger(ledgerId: bigint, maxItems: number): Promise<boolean> {
    await this.faults.enter('purgeLedger');
    const keys = [...this.tables.entries.values()]
      .filter((entry) => entry.position.ledgerId === ledgerId)
      .slice(0, maxItems)
      .map((entry) => entry.position.toString());
    for (const key of keys) {
      this.tables.entries.delete(key);
      this.tables.expiresAtMs.delete(key);
    }
    if (keys.length >= maxItems) return true;
    this.tables.owners.delete(ledgerId);
    return false;
  }

  /** Test view: how many entries of `ledgerId` are stored. */
  storedEntries(ledgerId: bigint): number {
    return [...this.tables.entries.values()].filter((entry) => entry.position.ledgerId === ledgerId).length;
  }
}

function snapshot(record: PartitionRecord): ManagedLedgerState {
  const counter = rateCounterOf(record);
  return {
    partition: record.partition,
    ledgers: record.ledgers.map(({ ledgerId, entries }) => ({ ledgerId, entries })),
    msgInCounter: record.msgInCounter,
    bytesInCounter: record.bytesInCounter,
    ...(counter ? { msgIn: counter } : {}),
    ...(record.lastProducer || record.publishersKept ? { publishers: publishersOf(record) } : {}),
    ...(record.firstKept ? { firstKept: record.firstKept } : {}),
    ...(record.entriesDeleted !== undefined ? { entriesDeleted: record.entriesDeleted } : {}),
    ...(record.bytesDeleted !== undefined ? { bytesDeleted: record.bytesDeleted } : {}),
    subscriptionsVersion: versionOf(record),
  };
}

function rateCounterOf(record: PartitionRecord) {
  if (!record.snapshot) return undefined;
  return {
    count: record.msgInCounter,
    bytes: record.bytesInCounter,
    lastAtMs: record.lastPublishAtMs ?? record.snapshot.atMs,
    snapshot: record.snapshot,
    ...(record.previous ? { previous: record.previous } : {}),
  };
}

function publishersOf(record: PartitionRecord): RecentPublisher[] {
  let publishers = record.publishersKept ?? [];
  if (record.producerBefore !== undefined)
    publishers = withPublisher(publishers, record.producerBefore, record.publishBeforeAtMs ?? 0);
  if (record.lastProducer !== undefined)
    publishers = withPublisher(publishers, record.lastProducer, record.lastPublishAtMs ?? 0);
  return publishers;
}

/** As DynamoDbLedger's: the partition's first ledger names its incarnation. */
function versionOf(record: PartitionRecord): string {
  return `${record.ledgers[0]?.ledgerId}.${record.announcements}`;
}

/** Copies only the fields that are set, as the adapter reads back only the attributes it wrote. */
function storedEntry(position: Position, entry: NewEntry, publishTimeMs: number): StoredEntry {
  return {
    position,
    payload: entry.payload,
    properties: { ...entry.properties },
    publishTimeMs,
    ...(entry.key === undefined ? {} : { key: entry.key }),
    ...(entry.eventTimeMs === undefined ? {} : { eventTimeMs: entry.eventTimeMs }),
    ...(entry.deliverAtMs === undefined ? {} : { deliverAtMs: entry.deliverAtMs }),
    ...(entry.binary ? { binary: true } : {}),
    ...(entry.producerName === undefined ? {} : { producerName: entry.producerName }),
    ...(entry.sequenceId === undefined ? {} : { sequenceId: entry.sequenceId }),
  };
}
