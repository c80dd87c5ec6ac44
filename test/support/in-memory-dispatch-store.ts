import type { DeliveryRun } from '../../shared/domain/delivery-run.ts';
import {
  type DispatchHead,
  decodeDispatchHead,
  decodeRuns,
  encodeDispatchHead,
  encodeRuns,
} from '../../shared/domain/dispatch-head.ts';
import { Position } from '../../shared/domain/position.ts';
import { bump, type RateCounter, snapshotDue } from '../../shared/domain/rate-counter.ts';
import {
  type CasOutcome,
  type DeliveryCounterName,
  DISPATCH_PAGE_SIZE,
  type DispatchStore,
  type HeadRecord,
  type PageRef,
  type PageState,
  type TrackerEntry,
} from '../../shared/ports/dispatch-store.ts';

interface StoredPage {
  acked: Set<number>;
  runs?: string;
  floor?: number;
  version: number;
  lastAckedAtMs?: number;
  /** The write token of the compare-and-set that last wrote `runs` (see writeTokenOf). */
  token?: number;
}

interface StoredCursor {
  head?: { text: string; version: number; aheadAck?: Position; token?: number };
  pages: Map<string, StoredPage>;
  tracker: Map<string, TrackerEntry>;
  counters?: Partial<Record<DeliveryCounterName, RateCounter>>;
}

/** Counts what the store was asked, as DynamoDB bills it (a failed conditional write is a write). */
export interface DispatchStoreUsage {
  reads: number;
  writes: number;
  failedConditionalWrites: number;
  /** Largest encoded head, in bytes (the write-unit check). */
  largestHeadBytes: number;
  /** Eventually consistent head reads answered with an earlier version, by how many versions behind (index 1 to STALE_VERSIONS). */
  staleHeadReads: number[];
}

/** How many earlier versions of a head a lagging replica may still answer. */
export const STALE_VERSIONS = 4;

/**
 * Asked at every eventually consistent head read: how many versions behind the answer is (0 or
 * false: the current one; `true`: three, the oldest a replica answered before issue 21 let the
 * simulation pick any of the last STALE_VERSIONS).
 */
export type StaleRead = () => boolean | number;

function pageKey(ledgerId: bigint, page: bigint): string {
  return `${ledgerId}#${page}`;
}

function trackerKey(entry: TrackerEntry): string {
  return [
    entry.dueAtMs.toString().padStart(15, '0'),
    entry.position.ledgerId.toString().padStart(20, '0'),
    entry.position.entryId.toString().padStart(20, '0'),
    entry.deliveries,
    entry.n,
  ].join('#');
}

/**
 * The write token of one compare-and-set request: the DynamoDB adapter draws a random one per
 * request, and the SDK resends that same request when it retries. Here a request is its value
 * argument (the head or the page's next state) with the version it expects: the same object and
 * version passed again (a retry of the call, as the simulation makes one) is the same request; an
 * equal object from another call is not.
 */
const writeTokens = new WeakMap<object, Map<number, number>>();
let lastWriteToken = 0;
function writeTokenOf(request: object, expectedVersion: number): number {
  const byVersion = writeTokens.get(request) ?? new Map<number, number>();
  writeTokens.set(request, byVersion);
  let token = byVersion.get(expectedVersion);
  if (token === undefined) {
    token = ++lastWriteToken;
    byVersion.set(expectedVersion, token);
  }
  return token;
}

/**
 * DispatchStore in memory, with DynamoDB's semantics for what the engine relies on: every method
 * is one atomic request on one item (or one Query), compare-and-set writes that are billed when
 * they fail, commutative ack sets, values copied in and out (no shared references). Items are kept
 * encoded as the DynamoDB adapter keeps them, so a value the codec cannot carry fails here too.
 */
export class InMemoryDispatchStore implements DispatchStore {
  private readonly cursors = new Map<string, StoredCursor>();
  /** Per cursor, the heads a replica behind may still answer (oldest first, at most STALE_VERSIONS). */
  private readonly earlierHeads = new Map<string, NonNullable<StoredCursor['head']>[]>();

  /**
   * @param staleRead asked at every eventually consistent head read: how many versions behind a
   *   lagging replica answers (true: three; DynamoDB makes no promise of how far behind; fewer
   *   when the head has fewer earlier versions). Default: never stale.
   */
  constructor(private readonly staleRead: StaleRead = () => false) {}
  readonly usage: DispatchStoreUsage = {
    reads: 0,
    writes: 0,
    failedConditionalWrites: 0,
    largestHeadBytes: 0,
    staleHeadReads: [],
  };

  private cursor(cursorId: string): StoredCursor {
    let cursor = this.cursors.get(cursorId);
    if (!cursor) {
      cursor = { pages: new Map(), tracker: new Map() };
      this.cursors.set(cursorId, cursor);
    }
    return cursor;
  }

  private keepEarlier(cursorId: string, cursor: StoredCursor): void {
    if (!cursor.head) return;
    const earlier = this.earlierHeads.get(cursorId) ?? [];
    earlier.push(cursor.head);
    if (earlier.length > STALE_VERSIONS) earlier.shift();
    this.earlierHeads.set(cursorId, earlier);
  }

  private writeHead(cursor: StoredCursor, head: DispatchHead, version: number, token?: number): void {
    const text = encodeDispatchHead(head);
    this.usage.largestHeadBytes = Math.max(this.usage.largestHeadBytes, Buffer.byteLength(text));
    cursor.head = {
      text,
      version,
      ...(cursor.head?.aheadAck ? { aheadAck: cursor.head.aheadAck } : {}),
      ...(token !== undefined ? { token } : {}),
    };
  }

  private headRecord(cursor: StoredCursor): HeadRecord | undefined {
    if (!cursor.head) return undefined;
    return {
      head: decodeDispatchHead(cursor.head.text),
      version: cursor.head.version,
      ...(cursor.head.aheadAck ? { aheadAck: cursor.head.aheadAck } : {}),
    };
  }

  async createHead(cursorId: string, head: DispatchHead): Promise<boolean> {
    const cursor = this.cursor(cursorId);
    this.usage.writes++;
    if (cursor.head) {
      this.usage.failedConditionalWrites++;
      return false;
    }
    this.writeHead(cursor, head, 1);
    return true;
  }

  async readHead(
    cursorId: string,
    options: { readonly consistent?: boolean } = {},
  ): Promise<HeadRecord | undefined> {
    this.usage.reads++;
    const cursor = this.cursors.get(cursorId);
    if (!cursor) return undefined;
    const earlier = this.earlierHeads.get(cursorId) ?? [];
    if (options.consistent !== false || earlier.length === 0) return this.headRecord(cursor);
    const asked = this.staleRead();
    const behind = Math.min(asked === true ? 3 : Number(asked), earlier.length);
    if (behind <= 0) return this.headRecord(cursor);
    this.usage.staleHeadReads[behind] = (this.usage.staleHeadReads[behind] ?? 0) + 1;
    return this.headRecord({
      ...cursor,
      head: earlier[earlier.length - behind] as NonNullable<StoredCursor['head']>,
    });
  }

  async casHead(
    cursorId: string,
    expectedVersion: number,
    head: DispatchHead,
  ): Promise<CasOutcome<HeadRecord>> {
    const cursor = this.cursor(cursorId);
    this.usage.writes++;
    const token = writeTokenOf(head, expectedVersion);
    if (cursor.head?.version !== expectedVersion) {
      this.usage.failedConditionalWrites++;
      // Refused for this very request's earlier attempt (a retry after a timeout): it applied.
      if (cursor.head?.token === token && cursor.head.text === encodeDispatchHead(head)) return { ok: true };
      return { ok: false, current: this.headRecord(cursor) };
    }
    this.keepEarlier(cursorId, cursor);
    this.writeHead(cursor, head, expectedVersion + 1, token);
    if (process.env.ACKLINE_STORE_TRACE) console.log('head', expectedVersion + 1, encodeDispatchHead(head));
    return { ok: true };
  }

  async raiseAheadAck(cursorId: string, position: Position): Promise<void> {
    const cursor = this.cursor(cursorId);
    this.usage.writes++;
    if (!cursor.head) return;
    if (cursor.head.aheadAck && cursor.head.aheadAck.compareTo(position) >= 0) {
      this.usage.failedConditionalWrites++;
      return;
    }
    this.keepEarlier(cursorId, cursor);
    cursor.head = { ...cursor.head, aheadAck: position, version: cursor.head.version + 1 };
  }

  async readPages(cursorId: string, pages: readonly PageRef[]): Promise<PageState[]> {
    this.usage.reads += pages.length;
    const cursor = this.cursors.get(cursorId);
    return pages.map(({ ledgerId, page }) => {
      const stored = cursor?.pages.get(pageKey(ledgerId, page));
      return {
        ledgerId,
        page,
        acked: new Set(stored?.acked ?? []),
        runs: stored?.runs ? decodeRuns(JSON.parse(stored.runs)) : [],
        ...(stored?.floor !== undefined ? { floor: stored.floor } : {}),
        version: stored?.version ?? 0,
        ...(stored?.lastAckedAtMs !== undefined ? { lastAckedAtMs: stored.lastAckedAtMs } : {}),
      };
    });
  }

  async casPage(
    cursorId: string,
    { ledgerId, page }: PageRef,
    expectedVersion: number,
    next: { readonly runs: readonly DeliveryRun[]; readonly floor?: number; readonly clearAcks?: boolean },
  ): Promise<boolean> {
    const cursor = this.cursor(cursorId);
    this.usage.writes++;
    const key = pageKey(ledgerId, page);
    const stored = cursor.pages.get(key);
    const token = writeTokenOf(next, expectedVersion);
    const runs = JSON.stringify(encodeRuns(next.runs));
    if ((stored?.version ?? 0) !== expectedVersion) {
      this.usage.failedConditionalWrites++;
      // Refused for this very request's earlier attempt (a retry after a timeout): it applied.
      return stored?.token === token && stored.runs === runs;
    }
    const acked = next.clearAcks ? new Set<number>() : (stored?.acked ?? new Set<number>());
    const updated: StoredPage = {
      acked,
      runs,
      version: expectedVersion + 1,
      token,
      ...(stored?.lastAckedAtMs !== undefined ? { lastAckedAtMs: stored.lastAckedAtMs } : {}),
    };
    if (next.floor !== undefined) updated.floor = next.floor;
    else if (stored?.floor !== undefined) updated.floor = stored.floor;
    cursor.pages.set(key, updated);
    if (process.env.ACKLINE_STORE_TRACE) console.log('page', key, updated.version, updated.runs);
    return true;
  }

  async acknowledge(cursorId: string, positions: readonly Position[], atMs?: number): Promise<void> {
    const cursor = this.cursor(cursorId);
    const byPage = new Map<string, number[]>();
    for (const position of positions) {
      const key = pageKey(position.ledgerId, position.entryId / DISPATCH_PAGE_SIZE);
      byPage.set(key, [...(byPage.get(key) ?? []), Number(position.entryId % DISPATCH_PAGE_SIZE)]);
    }
    for (const [key, offsets] of byPage) {
      this.usage.writes++;
      const stored = cursor.pages.get(key) ?? { acked: new Set<number>(), version: 0 };
      for (const offset of offsets) stored.acked.add(offset);
      if (atMs !== undefined) stored.lastAckedAtMs = atMs;
      cursor.pages.set(key, stored);
    }
  }

  async addToCounters(
    cursorId: string,
    additions: Partial<Record<DeliveryCounterName, { readonly count: number; readonly bytes: number }>>,
    atMs: number,
  ): Promise<void> {
    const entries = Object.entries(additions) as [DeliveryCounterName, { count: number; bytes: number }][];
    if (entries.length === 0) return;
    const cursor = this.cursor(cursorId);
    const counters = { ...(cursor.counters ?? {}) };
    this.usage.writes++;
    for (const [name, { count, bytes }] of entries) {
      const old = counters[name];
      // As DynamoDbDispatchStore: ADD, then (first of a minute) a second write renewing the snapshot.
      if (snapshotDue(old, atMs)) this.usage.writes++;
      counters[name] = bump(old, count, bytes, atMs);
    }
    cursor.counters = counters;
  }

  async readCounters(cursorId: string): Promise<Partial<Record<DeliveryCounterName, RateCounter>>> {
    this.usage.reads++;
    return { ...(this.cursors.get(cursorId)?.counters ?? {}) };
  }

  async putTracker(cursorId: string, entries: readonly TrackerEntry[]): Promise<void> {
    const cursor = this.cursor(cursorId);
    for (const entry of entries) {
      this.usage.writes++;
      cursor.tracker.set(trackerKey(entry), { ...entry });
      if (process.env.ACKLINE_STORE_TRACE) console.log('tracker+', trackerKey(entry));
    }
  }

  async dueTracker(
    cursorId: string,
    nowMs: number,
    limit: number,
    options: { readonly after?: TrackerEntry } = {},
  ): Promise<TrackerEntry[]> {
    this.usage.reads++;
    const cursor = this.cursors.get(cursorId);
    if (!cursor) return [];
    const after = options.after ? trackerKey(options.after) : undefined;
    return [...cursor.tracker.entries()]
      .filter(([key, entry]) => entry.dueAtMs <= nowMs && (after === undefined || key > after))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit)
      .map(([, entry]) => ({ ...entry }));
  }

  async nextTrackerDue(cursorId: string, afterMs: number): Promise<number | undefined> {
    this.usage.reads++;
    const cursor = this.cursors.get(cursorId);
    let next: number | undefined;
    for (const entry of cursor?.tracker.values() ?? []) {
      if (entry.dueAtMs > afterMs && (next === undefined || entry.dueAtMs < next)) next = entry.dueAtMs;
    }
    return next;
  }

  async deleteTracker(cursorId: string, entries: readonly TrackerEntry[]): Promise<void> {
    const cursor = this.cursor(cursorId);
    for (const entry of entries) {
      this.usage.writes++;
      cursor.tracker.delete(trackerKey(entry));
      if (process.env.ACKLINE_STORE_TRACE) console.log('tracker-', trackerKey(entry));
    }
  }

  async deletePages(cursorId: string, pages: readonly PageRef[]): Promise<void> {
    const cursor = this.cursors.get(cursorId);
    for (const { ledgerId, page } of pages) {
      this.usage.writes++;
      cursor?.pages.delete(pageKey(ledgerId, page));
    }
  }

  async deleteCursor(cursorId: string): Promise<void> {
    this.usage.writes++;
    this.cursors.delete(cursorId);
    this.earlierHeads.delete(cursorId);
  }

  /** The cursor counts as one item per page and tracker entry, plus its head. */
  async purgeCursor(cursorId: string, maxItems: number): Promise<boolean> {
    const cursor = this.cursors.get(cursorId);
    if (!cursor) return false;
    this.usage.reads++;
    const items = 1 + cursor.pages.size + cursor.tracker.size;
    this.usage.writes += Math.min(items, maxItems);
    if (items > maxItems) {
      // Pages and tracker entries go first here; the head last (any order is the adapter's).
      let left = maxItems;
      for (const key of [...cursor.pages.keys()]) if (left-- > 0) cursor.pages.delete(key);
      for (const key of [...cursor.tracker.keys()]) if (left-- > 0) cursor.tracker.delete(key);
      return true;
    }
    this.cursors.delete(cursorId);
    this.earlierHeads.delete(cursorId);
    return false;
  }

  /** Test view: whether any item of the cursor is stored. */
  hasCursor(cursorId: string): boolean {
    return this.cursors.has(cursorId);
  }

  /** Test view: every tracker entry of a cursor, in key order. */
  trackerOf(cursorId: string): TrackerEntry[] {
    const cursor = this.cursors.get(cursorId);
    return [...(cursor?.tracker.entries() ?? [])].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, e]) => e);
  }
}

/** Every position of a page, for tests. */
export function pagePositions(ledgerId: bigint, page: bigint): Position[] {
  return Array.from({ length: Number(DISPATCH_PAGE_SIZE) }, (_, i) =>
    Position.of(ledgerId, page * DISPATCH_PAGE_SIZE + BigInt(i)),
  );
}
