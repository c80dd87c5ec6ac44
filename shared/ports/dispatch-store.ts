import type { DeliveryRun } from '../domain/delivery-run.ts';
import type { DispatchHead } from '../domain/dispatch-head.ts';
import type { Position } from '../domain/position.ts';
import type { RateCounter } from '../domain/rate-counter.ts';

/** Entries per page: a page's acks and runs stay under 1 KB, so each write costs one write unit. */
export const DISPATCH_PAGE_SIZE = 100n;

/** The head as read: its value, its version (for compare-and-set) and the highest early ack by id. */
export interface HeadRecord {
  readonly head: DispatchHead;
  readonly version: number;
  /**
   * The highest position acknowledged by id while it was at or after the read position (never
   * dispatched yet): a claim over it must read the acks of the pages it hands out.
   */
  readonly aheadAck?: Position;
}

/** One page of a cursor (DISPATCH_PAGE_SIZE entries of one ledger): its acks and its spilled runs. */
export interface PageState {
  readonly ledgerId: bigint;
  readonly page: bigint;
  /** Offsets (entryId - page * size) individually acknowledged. */
  readonly acked: ReadonlySet<number>;
  /** Every offset up to and including it is acknowledged (a tombstone: size - 1). */
  readonly floor?: number;
  /** Runs spilled from the head that start in this page, ordered by position. */
  readonly runs: readonly DeliveryRun[];
  /** 0 while the page's run document was never written. */
  readonly version: number;
  /** When an acknowledgement last landed on the page (epoch ms), if one said. */
  readonly lastAckedAtMs?: number;
}

export interface PageRef {
  readonly ledgerId: bigint;
  readonly page: bigint;
}

/**
 * An entry of the redelivery tracker: the run of `n` entries from `position` whose `deliveries`-th
 * hand-out state is to be looked at again at `dueAtMs` (released: handed out again; held: its ack
 * timeout). Its key is made of all these fields: putting it twice makes one item, and two calls
 * racing to put different runs from one position make two.
 */
export interface TrackerEntry {
  readonly dueAtMs: number;
  readonly position: Position;
  readonly deliveries: number;
  readonly n: number;
  /**
   * A released run's last holder (the consumer that nacked it, or that went): not part of the
   * key, kept on the item the release writes anyway (a few bytes more, no request more), so the
   * scheduled view names the consumer an entry last went to (issue 24). Absent on entries put
   * before it existed and on entries nobody held (delayed, routed).
   */
  readonly consumerId?: string;
}

/** The delivery counters kept beside a cursor's head. */
export type DeliveryCounterName = 'out' | 'redelivered';

/** Whether a compare-and-set wrote; when not, the current state (AWS returns it with the failure). */
export type CasOutcome<T> = { readonly ok: true } | { readonly ok: false; readonly current: T | undefined };

/**
 * A subscription cursor's durable state on one partition, as the delivery engine keeps it (see
 * docs/design/delivery-engine.md#items): the head, the pages (acks and spilled runs) and the redelivery
 * tracker, all in the cursor's own partition of one table. Every method is one request, or says
 * how many; every state change is one single-item write, conditional where it says so.
 */
export interface DispatchStore {
  /** Creates the head unless one exists. Cost: one conditional write. @returns false when it existed. */
  createHead(cursorId: string, head: DispatchHead): Promise<boolean>;
  /**
   * Strongly consistent unless `consistent` is false: then it may answer an earlier version of the
   * head (DynamoDB's eventually consistent read), for half the cost. Cost: one read unit, or half.
   */
  readHead(cursorId: string, options?: { readonly consistent?: boolean }): Promise<HeadRecord | undefined>;
  /**
   * Replaces the head if its version is still `expectedVersion` (the new version is one more).
   * Cost: one write, billed whether or not it applies.
   */
  casHead(cursorId: string, expectedVersion: number, head: DispatchHead): Promise<CasOutcome<HeadRecord>>;
  /**
   * Raises the head's early-ack mark to `position` unless it is already at or past it, and with it
   * the head's version (a claim made on a head read before the raise fails its compare-and-set).
   * Cost: one write.
   */
  raiseAheadAck(cursorId: string, position: Position): Promise<void>;
  /** Strongly consistent; a page never written reads as empty, version 0. Cost: one read per page. */
  readPages(cursorId: string, pages: readonly PageRef[]): Promise<PageState[]>;
  /**
   * Replaces a page's runs and floor if its version is still `expectedVersion` (0: never written),
   * leaving its acks alone. Cost: one write, billed whether or not it applies.
   */
  casPage(
    cursorId: string,
    page: PageRef,
    expectedVersion: number,
    next: { readonly runs: readonly DeliveryRun[]; readonly floor?: number; readonly clearAcks?: boolean },
  ): Promise<boolean>;
  /**
   * Adds the positions to their pages' acks (commutative, idempotent), and, with `atMs`, records it
   * as the page's last acknowledgement time in the same write. Cost: one write per page touched.
   */
  acknowledge(cursorId: string, positions: readonly Position[], atMs?: number): Promise<void>;
  /**
   * Adds to the cursor's named delivery counters (item `S`): deliveries made outside a claim's
   * head write (`out`: redeliveries, delayed and routed entries, replays) and redeliveries
   * (`redelivered`). The counters' rate snapshots are renewed by the first addition of a minute.
   * Cost: one write (ADD, commutative), and one more (conditional) once a minute.
   */
  addToCounters(
    cursorId: string,
    additions: Partial<Record<DeliveryCounterName, { readonly count: number; readonly bytes: number }>>,
    atMs: number,
  ): Promise<void>;
  /** The cursor's delivery counters (none: never added to). Cost: one read. */
  readCounters(cursorId: string): Promise<Partial<Record<DeliveryCounterName, RateCounter>>>;
  /** Cost: one write per entry (idempotent). */
  putTracker(cursorId: string, entries: readonly TrackerEntry[]): Promise<void>;
  /**
   * Entries due at or before `nowMs`, by due time then position, at most `limit`; with `after`,
   * only those that come after that entry in this order (the next page). Cost: one strong Query.
   */
  dueTracker(
    cursorId: string,
    nowMs: number,
    limit: number,
    options?: { readonly after?: TrackerEntry },
  ): Promise<TrackerEntry[]>;
  /** The earliest due time after `afterMs`, if any. Cost: one strong Query. */
  nextTrackerDue(cursorId: string, afterMs: number): Promise<number | undefined>;
  /** Cost: one write per entry. */
  deleteTracker(cursorId: string, entries: readonly TrackerEntry[]): Promise<void>;
  /** Deletes the pages (their acks, runs, floors); a page never written is no error. Cost: one delete per page. */
  deletePages(cursorId: string, pages: readonly PageRef[]): Promise<void>;
  /** Every item of the cursor. Cost: linear in its items. */
  deleteCursor(cursorId: string): Promise<void>;
  /**
   * Deletes up to `maxItems` items of the cursor (a deletion job's step; the next call carries on).
   * Cost: one Query of keys and one write per item deleted.
   * @returns true when items may remain (call again).
   */
  purgeCursor(cursorId: string, maxItems: number): Promise<boolean>;
}
