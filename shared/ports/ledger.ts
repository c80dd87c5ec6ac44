import type { LedgerInfo } from '../domain/ledger-layout.ts';
import type { Position } from '../domain/position.ts';
import type { TopicName } from '../domain/topic-name.ts';

export type { LedgerInfo };

/** A partition's managed-ledger state: ledgers in order, the last one open. */
export interface ManagedLedgerState {
  readonly partition: TopicName;
  readonly ledgers: readonly LedgerInfo[];
  readonly msgInCounter: number;
  readonly bytesInCounter: number;
}

/** A message to append. */
export interface NewEntry {
  readonly payload: string;
  readonly key?: string;
  readonly properties: Readonly<Record<string, string>>;
  readonly eventTimeMs?: number;
  /** Epoch ms before which the message must not be delivered (delayed delivery). */
  readonly deliverAtMs?: number;
}

export interface StoredEntry extends NewEntry {
  readonly position: Position;
  readonly publishTimeMs: number;
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
   * after `maxEntriesPerLedger` entries; one call may span two ledgers.
   */
  append(partition: TopicName, entries: readonly NewEntry[], publishTimeMs: number): Promise<Position[]>;
  state(partition: TopicName): Promise<ManagedLedgerState | undefined>;
  /** The partition that owns `ledgerId`, if any. */
  ownerOf(ledgerId: bigint): Promise<TopicName | undefined>;
  readEntry(position: Position): Promise<StoredEntry | undefined>;
  /**
   * The written entries of ledger `ledgerId` from `firstEntryId` to `lastEntryId`, both included,
   * in order (BookKeeper's `ReadHandle.read(first, last)`); ids allocated but never written, or past
   * the ledger's end, are absent. Nothing when `firstEntryId > lastEntryId`. For reading a run of a
   * backlog: the storage items holding the range are each read once, not once per entry.
   */
  readEntries(ledgerId: bigint, firstEntryId: bigint, lastEntryId: bigint): Promise<StoredEntry[]>;
  /** Removes the partition's state, ledgers and entries. */
  deletePartition(partition: TopicName): Promise<void>;
}
