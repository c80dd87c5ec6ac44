import { carveRun, type DeliveryRun, runEnd, runPositions, sliceRun } from '../../domain/delivery-run.ts';
import { DeadLetterRefusedError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { HeadRecord, PageState, TrackerEntry } from '../../ports/dispatch-store.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import { type ByteBudget, ByteTally, budgetLeft } from './byte-budget.ts';
import type {
  Delivery,
  DispatchConsumer,
  EngineContext,
  KeySharedMember,
  PartitionCursor,
} from './engine-context.ts';
import { routesTo } from './key-shared-routing.ts';
import {
  isAcknowledged,
  type LocatedRun,
  locateRun,
  type PageMap,
  pageKey,
  type RunHome,
  readPagesOf,
  runPagesOf,
  withRunsReplaced,
  writeRuns,
} from './pending-state.ts';

/**
 * Pulsar's redelivery tracker, durable: `R#` items in due-time order, each naming a run whose
 * delivery is to be looked at again (released: hand it out again; held: its ack timeout). The run
 * is the truth; a tracker entry is an index, put before the write that makes it true, so a crash
 * leaves at worst a stale entry, which the pickup deletes.
 */

export interface PickUpRequest {
  readonly cursor: PartitionCursor;
  readonly consumer: DispatchConsumer;
  readonly record: HeadRecord;
  readonly max: number;
  readonly members?: readonly KeySharedMember[];
  /** What the answer can still carry; the pickup stops before the first delivery over it. */
  readonly budget?: ByteBudget;
}

/**
 * Key_Shared: how many more pages of due tracker entries a pickup reads when a full page held
 * only entries due for other members (at a blocked member's entries, the others' redeliveries wait at most
 * this many pages behind).
 */
export const KEY_SHARED_FURTHER_PAGES = 4;

/** What a pickup handed out, and the head it ended on. */
export interface PickUpResult {
  readonly deliveries: Delivery[];
  readonly timers: number[];
  readonly record: HeadRecord | undefined;
  /**
   * The head it ended on was read anew (a strong read, or the answer of a compare-and-set it lost),
   * not the one handed in nor what its own writes made of it: whatever the caller judged on the
   * head it handed in (the consumer's room under its cap) is to be judged again on this one.
   */
  readonly reread: boolean;
  /** The answer's byte budget could not carry the next due redelivery: it stays due. */
  readonly full: boolean;
}

/**
 * Hands out due redeliveries (in due-time, then log order), each with the count of its earlier
 * deliveries; deletes stale tracker entries; when nothing more is due, moves the head's due time
 * to the next entry. It writes only on the head handed in (and what its own writes made of it):
 * when an entry looks stale there and a strong read finds a newer head, it stops and answers that
 * head (`reread`), so its caller judges the consumer's cap again before anything more is taken (a
 * take on that head would hand out past a room judged on the older one). With a byte budget, it
 * stops (`full`) at the first redelivery the answer cannot carry, leaving it due. An entry past
 * maxRedeliverCount goes to the dead-letter producer; its refusal (DeadLetterRefusedError) ends
 * the pickup and is thrown only when nothing was taken before it, so a delivery recorded as held
 * is always returned. Cost: one Query (Key_Shared: up to KEY_SHARED_FURTHER_PAGES more past entries
 * due for other members), the pages of the runs (one read each), one write per run taken (head or
 * page), one tracker write per entry put or deleted.
 */
export async function pickUpDue(ctx: EngineContext, request: PickUpRequest): Promise<PickUpResult> {
  return new TrackerPickup(ctx, request).run();
}

/** How one due tracker entry went for a pickup: go on with the next, or stop the page. */
type EntryStep = 'next' | 'stop';

/** One pickup's state across the due entries it looks at. */
class TrackerPickup {
  private readonly deliveries: Delivery[] = [];
  private readonly timers: number[] = [];
  private record: HeadRecord | undefined;
  private reread = false;
  private allSettled = false;
  private full = false;
  // The head handed in may be an eventually consistent read: an entry it makes look stale is
  // judged again on a strong read before it is deleted (an old head does not know the run a
  // newer claim released, and deleting that run's entry would lose it).
  private confirmed = false;
  private pages: PageMap = new Map();
  private readonly now: number;
  private readonly limit: number;

  constructor(
    private readonly ctx: EngineContext,
    private readonly request: PickUpRequest,
  ) {
    this.record = request.record;
    this.now = ctx.clock.nowMs();
    this.limit = Math.max(request.max, 10);
  }

  async run(): Promise<PickUpResult> {
    const { ctx, request } = this;
    const limit = this.limit;
    const { cursorId } = request.cursor;
    let due = await ctx.store.dueTracker(cursorId, this.now, limit);
    this.allSettled = due.length < limit;
    /** Key_Shared: further pages of due entries still to look through (see below). */
    let furtherPages = request.cursor.type === 'Key_Shared' ? KEY_SHARED_FURTHER_PAGES : 0;
    while (due.length > 0) {
      const { stopped, othersOnly } = await this.takePage(due);
      // Key_Shared: a full page of entries due for other members only (one at its cap of
      // unacknowledged entries, or slow) must not hide this member's redeliveries behind it: look a
      // few pages further (bounded, KEY_SHARED_FURTHER_PAGES per call; only while others lag).
      if (stopped || !this.record || !othersOnly || due.length < limit || furtherPages <= 0) break;
      furtherPages--;
      due = await ctx.store.dueTracker(cursorId, this.now, limit, {
        after: due[due.length - 1] as TrackerEntry,
      });
    }
    if (this.allSettled && this.record) await this.moveDueTime(this.record);
    return {
      deliveries: this.deliveries,
      timers: this.timers,
      record: this.record,
      reread: this.reread,
      full: this.full,
    };
  }

  /** The entries of one page of due entries, in order, until one stops the pickup. */
  private async takePage(due: readonly TrackerEntry[]): Promise<{ stopped: boolean; othersOnly: boolean }> {
    const read = await readPagesOf(
      this.ctx.store,
      this.request.cursor.cursorId,
      due.flatMap((entry) => [
        ...runPagesOf(entry.position),
        Position.of(entry.position.ledgerId, entry.position.entryId + BigInt(entry.n - 1)),
      ]),
    );
    this.pages = new Map([...this.pages, ...read]);
    let othersOnly = true;
    for (const entry of due) {
      if (!this.record) break;
      if (this.deliveries.length >= this.request.max) return this.stop(othersOnly);
      const outcome = await this.takeOne(this.record, entry);
      if (outcome === 'stop') return this.stop(othersOnly);
      if (outcome.kind !== 'notMine') othersOnly = false;
      if ((await this.settle(entry, outcome)) === 'stop') return { stopped: true, othersOnly };
    }
    return { stopped: false, othersOnly };
  }

  private stop(othersOnly: boolean): { stopped: boolean; othersOnly: boolean } {
    this.allSettled = false;
    return { stopped: true, othersOnly };
  }

  /** Takes one due entry on the head; 'stop' when the pickup ends here (a newer head, a refusal). */
  private async takeOne(record: HeadRecord, entry: TrackerEntry): Promise<TakeOutcome | 'stop'> {
    const { ctx, request } = this;
    try {
      const take = (current: HeadRecord) =>
        takeTrackerEntry(ctx, {
          ...request,
          record: current,
          pages: this.pages,
          entry,
          max: request.max - this.deliveries.length,
          nowMs: this.now,
          ...(request.budget ? { budget: budgetLeft(request.budget, this.deliveries) } : {}),
        });
      const outcome = await take(record);
      if (outcome.kind === 'stale' && !this.confirmed) {
        this.confirmed = true;
        const current = await ctx.store.readHead(request.cursor.cursorId);
        if (current?.version !== record.version) {
          // A newer head (or none): the caller judges it before anything is taken on it.
          this.record = current;
          this.reread = true;
          return 'stop';
        }
      }
      return outcome;
    } catch (error) {
      // What is taken is held by the consumer already: hand it out. The refused entry stays due;
      // a timer for it wakes the next receive, which answers the refusal.
      if (!(error instanceof DeadLetterRefusedError) || this.deliveries.length === 0) throw error;
      this.timers.push(entry.dueAtMs);
      return 'stop';
    }
  }

  /** Records what taking one entry did; 'stop' when the pickup ends after it. */
  private async settle(entry: TrackerEntry, outcome: TakeOutcome): Promise<EntryStep> {
    // The answer cannot carry the next redelivery: the rest stays due (see the check below).
    this.full = outcome.kind === 'full' || (outcome.kind === 'taken' && outcome.full === true);
    if (outcome.kind === 'taken') {
      this.deliveries.push(...outcome.deliveries);
      this.timers.push(...outcome.timers);
      this.record = outcome.record;
      this.pages = outcome.pages;
    } else if (outcome.kind === 'stale' || outcome.kind === 'deadLettered') {
      await this.ctx.store.deleteTracker(this.request.cursor.cursorId, [entry]);
    } else {
      this.allSettled = false;
      if (outcome.kind === 'conflict') return 'stop';
    }
    if (this.full) {
      this.allSettled = false;
      return 'stop';
    }
    return 'next';
  }

  /** Nothing more is due: the head's due time moves to the earliest entry left, due or not. */
  private async moveDueTime(record: HeadRecord): Promise<void> {
    const { cursorId } = this.request.cursor;
    // A pending entry stays due until it is taken or swept.
    const next = await this.ctx.store.nextTrackerDue(cursorId, -1);
    if (record.head.trackerDueAtMs === next) return;
    const { trackerDueAtMs: _old, ...rest } = record.head;
    const head = next === undefined ? rest : { ...rest, trackerDueAtMs: next };
    const written = await this.ctx.store.casHead(cursorId, record.version, head);
    this.reread = !written.ok;
    this.record = written.ok ? { ...record, head, version: record.version + 1 } : written.current;
  }
}

/** One stretch of a tracker entry's range covered by one run, and what that run says of it now. */
export interface TrackerSegment {
  /**
   * due: the run is released and due, or held past its ack timeout, with the entry's count;
   * pending: the run does not say so yet (a write in flight, or one that died);
   * stale: it never will (handed out again since, released for another time, acknowledged).
   */
  readonly verdict: 'due' | 'pending' | 'stale';
  readonly located?: LocatedRun;
  readonly from: bigint;
  readonly n: number;
}

/**
 * What the runs say of a tracker entry now, stretch by stretch. An entry is put before the write
 * that makes it true, so a run that does not say so yet may be a write still in flight: only what
 * can never become true again is stale.
 */
export function judgeTrackerEntry(
  head: HeadRecord['head'],
  pages: PageMap,
  entry: TrackerEntry,
  nowMs: number,
): TrackerSegment[] {
  const segments: TrackerSegment[] = [];
  for (let i = 0; i < entry.n; i++) {
    const position = Position.of(entry.position.ledgerId, entry.position.entryId + BigInt(i));
    const located = isAcknowledged(head, pages, position) ? undefined : locateRun(head, pages, position);
    let verdict: TrackerSegment['verdict'];
    if (isAcknowledged(head, pages, position)) verdict = 'stale';
    else if (!located || located.run.deliveries < entry.deliveries) verdict = 'pending';
    else if (located.run.deliveries > entry.deliveries) verdict = 'stale';
    else if (located.run.state.kind === 'released')
      verdict = located.run.state.dueAtMs > nowMs ? 'stale' : 'due';
    else verdict = (located.run.state.timeoutAtMs ?? Infinity) > nowMs ? 'pending' : 'due';
    const last = segments[segments.length - 1];
    if (last && last.verdict === verdict && last.located?.run === located?.run) {
      segments[segments.length - 1] = { ...last, n: last.n + 1 };
    } else {
      segments.push({ verdict, ...(located ? { located } : {}), from: position.entryId, n: 1 });
    }
  }
  return segments;
}

type TakeOutcome =
  | {
      readonly kind: 'taken';
      readonly deliveries: Delivery[];
      readonly timers: number[];
      readonly record: HeadRecord;
      readonly pages: PageMap;
      /** It stopped at a delivery the byte budget could not carry (the rest stays due). */
      readonly full?: boolean;
    }
  /** Due, but the answer cannot carry its first delivery: leave it due for the next receive. */
  | { readonly kind: 'full' }
  /** The run no longer is in the state the entry names: delete the entry. */
  | { readonly kind: 'stale' }
  /** Published to the dead-letter topic and acknowledged: delete the entry (never judge it again). */
  | { readonly kind: 'deadLettered' }
  /** Key_Shared: due, but for another member (or this one is recently joined). */
  | { readonly kind: 'notMine' }
  /** Its run does not say so yet (a write in flight, or one that died): leave it. */
  | { readonly kind: 'pending' }
  /** The head or page changed meanwhile: leave the entry for the next receive. */
  | { readonly kind: 'conflict' };

type TakeRequest = PickUpRequest & {
  readonly pages: PageMap;
  readonly entry: TrackerEntry;
  readonly nowMs: number;
};

async function takeTrackerEntry(ctx: EngineContext, request: TakeRequest): Promise<TakeOutcome> {
  const { cursor, consumer, record, pages, entry, nowMs } = request;
  const segments = judgeTrackerEntry(record.head, pages, entry, nowMs);
  const chosen = segments.find((segment) => segment.verdict === 'due');
  if (!chosen?.located)
    return segments.some((segment) => segment.verdict === 'pending')
      ? { kind: 'pending' }
      : { kind: 'stale' };
  const { run, home } = chosen.located;
  const slice = sliceRun(run, chosen.from, chosen.from + BigInt(chosen.n)) as DeliveryRun;
  const unacked = runPositions(slice);
  // What this entry still stands for beyond the stretch taken here keeps an entry of its own.
  const others: TrackerEntry[] = segments
    .filter((segment) => segment !== chosen && segment.verdict !== 'stale')
    .map((segment) => ({
      ...entry,
      position: Position.of(entry.position.ledgerId, segment.from),
      n: segment.n,
    }));
  const entries = await readEntriesAt(ctx, unacked);
  const deadLetter = consumer.deadLetter;
  if (deadLetter && run.deliveries > deadLetter.maxRedeliverCount) {
    // Handed out again it would pass maxRedeliverCount: Pulsar's dead-letter producer takes it.
    const stored = unacked.flatMap((position) => entries.get(position.toString()) ?? []);
    if (stored.length < unacked.length) return { kind: 'conflict' };
    await deadLetter.publish(stored, run.deliveries);
    await ctx.store.putTracker(cursor.cursorId, others);
    await ctx.store.acknowledge(cursor.cursorId, unacked);
    return { kind: 'deadLettered' };
  }
  const { taken, full } = takeableFrom(request, unacked, entries, run.deliveries);
  if (taken.length === 0 && full) return { kind: 'full' };
  if (taken.length === 0) return { kind: cursor.type === 'Key_Shared' ? 'notMine' : 'conflict' };
  const held = await holdTaken(ctx, { request, run, home, slice, others, taken });
  return held.kind === 'taken' ? { ...held, full } : held;
}

/**
 * The unacknowledged positions of the run this call may take, in order, with their entries; `full`
 * when it stopped at one the byte budget could not carry.
 */
function takeableFrom(
  request: TakeRequest,
  unacked: readonly Position[],
  entries: ReadonlyMap<string, StoredEntry>,
  redeliveryCount: number,
): { taken: { position: Position; entry: StoredEntry }[]; full: boolean } {
  const { cursor, consumer, record } = request;
  const taken: { position: Position; entry: StoredEntry }[] = [];
  const tally = new ByteTally(request.budget);
  for (const position of unacked) {
    if (taken.length >= request.max) break;
    const stored = entries.get(position.toString());
    if (!stored) break; // not visible yet: take what comes before it
    if (
      cursor.type === 'Key_Shared' &&
      request.members &&
      !routesTo(request.members, consumer.consumerId, stored, record.head)
    ) {
      break;
    }
    if (!tally.admits({ position, redeliveryCount, entry: stored })) break;
    taken.push({ position, entry: stored });
  }
  return { taken, full: tally.full };
}

/**
 * Records what was taken as held by the consumer (count + 1, its ack timeout in the tracker), in
 * the one conditional write of the run's home (head or page), and deletes the tracker entry.
 */
async function holdTaken(
  ctx: EngineContext,
  input: {
    readonly request: TakeRequest;
    readonly run: DeliveryRun;
    readonly home: RunHome;
    readonly slice: DeliveryRun;
    readonly others: readonly TrackerEntry[];
    readonly taken: readonly { position: Position; entry: StoredEntry }[];
  },
): Promise<TakeOutcome> {
  const { request, run, home, taken } = input;
  const { cursor, consumer, record, pages, entry, nowMs } = request;
  const takenIds = new Set(taken.map(({ position }) => position.entryId));
  const timeoutMs = consumer.ackTimeoutMs(run.deliveries);
  const heldState: DeliveryRun['state'] = {
    kind: 'held',
    consumerId: consumer.consumerId,
    deliveredAtMs: nowMs,
    ...(timeoutMs > 0 ? { timeoutAtMs: nowMs + timeoutMs } : {}),
  };
  const replacement = carveRun(run, takenIds, () => ({ deliveries: run.deliveries + 1, state: heldState }));
  const lastTaken = (taken[taken.length - 1] as { position: Position }).position.entryId;
  const trackerEntries = trackerAfterTake({ entry, slice: input.slice, others: input.others, lastTaken });
  for (const piece of replacement) {
    if (piece.state === heldState && heldState.kind === 'held' && heldState.timeoutAtMs !== undefined) {
      trackerEntries.push({
        dueAtMs: heldState.timeoutAtMs,
        position: Position.of(piece.ledgerId, piece.entryId),
        deliveries: piece.deliveries,
        n: piece.n,
      });
    }
  }
  await ctx.store.putTracker(cursor.cursorId, trackerEntries);
  const written = await writeRuns(ctx.store, cursor.cursorId, {
    record,
    home,
    replaced: [run],
    by: replacement,
  });
  if (!written) return { kind: 'conflict' };
  await ctx.store.deleteTracker(cursor.cursorId, [entry]);
  const deliveries = taken.map(({ position, entry: stored }) => ({
    position,
    redeliveryCount: run.deliveries,
    entry: stored,
  }));
  const timers = trackerEntries.map((e) => e.dueAtMs);
  if (home.kind === 'head') {
    const head = { ...record.head, runs: withRunsReplaced(record.head.runs, [run], replacement) };
    return {
      kind: 'taken',
      deliveries,
      timers,
      record: { ...record, head, version: record.version + 1 },
      pages,
    };
  }
  const page: PageState = {
    ...home.page,
    runs: withRunsReplaced(home.page.runs, [run], replacement),
    version: home.page.version + 1,
  };
  return { kind: 'taken', deliveries, timers, record, pages: new Map(pages).set(pageKey(page), page) };
}

/** The tracker entries that stay: the others, and the rest of this entry's slice past what was taken. */
function trackerAfterTake(input: {
  readonly entry: TrackerEntry;
  readonly slice: DeliveryRun;
  readonly others: readonly TrackerEntry[];
  readonly lastTaken: bigint;
}): TrackerEntry[] {
  const { entry, slice, lastTaken } = input;
  const trackerEntries: TrackerEntry[] = [...input.others];
  const sliceEnd = runEnd(slice);
  if (lastTaken + 1n < sliceEnd) {
    // The rest of this entry's slice keeps its state and its due time.
    trackerEntries.push({
      dueAtMs: entry.dueAtMs,
      position: Position.of(slice.ledgerId, lastTaken + 1n),
      deliveries: entry.deliveries,
      n: Number(sliceEnd - lastTaken - 1n),
    });
  }
  return trackerEntries;
}

/** The stored entries at `positions`, strongly consistent (they are before the read position). */
export async function readEntriesAt(
  ctx: EngineContext,
  positions: readonly Position[],
): Promise<Map<string, StoredEntry>> {
  const found = new Map<string, StoredEntry>();
  const byLedger = new Map<bigint, bigint[]>();
  for (const position of positions) {
    byLedger.set(position.ledgerId, [...(byLedger.get(position.ledgerId) ?? []), position.entryId]);
  }
  for (const [ledgerId, ids] of byLedger) {
    const first = ids.reduce((a, b) => (a < b ? a : b));
    const last = ids.reduce((a, b) => (a > b ? a : b));
    for (const entry of await ctx.ledger.readEntries(ledgerId, first, last)) {
      found.set(entry.position.toString(), entry);
    }
  }
  return found;
}
