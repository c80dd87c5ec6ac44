import {
  carveRun,
  type DeliveryRun,
  runEnd,
  runPositions,
  runStart,
  sliceRun,
} from '../../domain/delivery-run.ts';
import { DeadLetterRefusedError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { HeadRecord, PageState, TrackerEntry } from '../../ports/dispatch-store.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import { type ByteBudget, ByteTally, budgetLeft } from './byte-budget.ts';
import { deadLetterEntries } from './dead-letter-claim.ts';
import type {
  Delivery,
  DispatchConsumer,
  EngineContext,
  KeySharedMember,
  PartitionCursor,
} from './engine-context.ts';
import { keysHeldByOthers, recentlyJoined } from './key-shared-draining.ts';
import { KeysLeftBehind } from './key-shared-order.ts';
import { routesTo } from './key-shared-routing.ts';
import {
  isAcknowledged,
  type LocatedRun,
  locateRun,
  type PageMap,
  pageKey,
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

/** Why a Key_Shared member's entries may be left due in the tracker (see PickUpResult.mineLeft). */
export type MineLeft = 'raced' | 'unseen';

/** What a pickup handed out, and the head it ended on. */
export interface PickUpResult {
  readonly deliveries: Delivery[];
  readonly timers: number[];
  /**
   * Of the tracker entries put for the ack timeouts of what was handed out, those after which the
   * consumer's next delivery would pass its maxRedeliverCount: the server dead-letters them when
   * due (a dead-letter timer), whether or not the consumer polls again.
   */
  readonly deadLetterTimers: TrackerEntry[];
  readonly record: HeadRecord | undefined;
  /**
   * The head it ended on was read anew (a strong read, or the answer of a compare-and-set it lost),
   * not the one handed in nor what its own writes made of it: whatever the caller judged on the
   * head it handed in (the consumer's room under its cap) is to be judged again on this one.
   */
  readonly reread: boolean;
  /**
   * Key_Shared: an entry due for this member may be left in the tracker, so its first deliveries
   * wait (a later message of that key must not overtake it, I3): `raced`, it was not taken for a
   * lost race or an entry not readable yet (look again at once); `unseen`, the call's max, or due
   * entries beyond what a pickup reads (look again when something rings). Undefined: none.
   */
  readonly mineLeft?: MineLeft;
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
 * is always returned. On Key_Shared a member takes its own stretch of an entry behind another
 * member's, and nothing of a key after an entry of that key it left in the tracker (I3, see
 * KeysLeftBehind). Cost: one Query (Key_Shared: up to KEY_SHARED_FURTHER_PAGES more past entries
 * due for other members), the pages of the runs (one read each), one entries Query per entry
 * judged due, one write per run taken (head or page), one tracker write per entry put or deleted;
 * a recently joined Key_Shared member also reads what the others hold (keysHeldByOthers).
 */
export async function pickUpDue(ctx: EngineContext, request: PickUpRequest): Promise<PickUpResult> {
  return new TrackerPickup(ctx, request).run();
}

/** One pickup's state across the pages of due entries it reads. */
class TrackerPickup {
  private readonly deliveries: Delivery[] = [];
  private readonly timers: number[] = [];
  private readonly deadLetterTimers: TrackerEntry[] = [];
  private record: HeadRecord | undefined;
  private reread = false;
  private allSettled = true;
  private mineLeft: MineLeft | undefined;
  /** A due redelivery the answer's byte budget could not carry: it stays due. */
  private full = false;
  /**
   * The head handed in may be an eventually consistent read: an entry it makes look stale is
   * judged again on a strong read before it is deleted (an old head does not know the run a newer
   * claim released, and deleting that run's entry would lose it).
   */
  private confirmed = false;
  private pages: PageMap = new Map();
  private readonly now: number;
  /** Key_Shared: this member's keys left in the tracker by this pickup (none taken after them). */
  private left: KeysLeftBehind | undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly request: PickUpRequest,
  ) {
    this.record = request.record;
    this.now = ctx.clock.nowMs();
  }

  async run(): Promise<PickUpResult> {
    const { ctx, request } = this;
    const { cursor } = request;
    const limit = Math.max(request.max, 10);
    let due = await ctx.store.dueTracker(cursor.cursorId, this.now, limit);
    if (due.length > 0) this.left = await this.keysLeftBehind();
    if (due.length >= limit) this.allSettled = false;
    /** Key_Shared: further pages of due entries still to look through (see below). */
    let furtherPages = cursor.type === 'Key_Shared' ? KEY_SHARED_FURTHER_PAGES : 0;
    while (due.length > 0) {
      const stopped = await this.takePage(due);
      if (stopped || !this.record || due.length < limit) break;
      // Key_Shared: a full page of entries due for other members (one at its cap of unacknowledged
      // entries, or slow) must not hide this member's entries behind it: look a few pages further
      // (bounded, KEY_SHARED_FURTHER_PAGES per call; only while others lag).
      if (furtherPages <= 0) {
        this.leave('unseen'); // due entries not looked at: some may be this member's
        break;
      }
      furtherPages--;
      due = await ctx.store.dueTracker(cursor.cursorId, this.now, limit, {
        after: due[due.length - 1] as TrackerEntry,
      });
    }
    if (this.allSettled && this.record) await this.moveDueTime(this.record);
    return {
      deliveries: this.deliveries,
      timers: this.timers,
      deadLetterTimers: this.deadLetterTimers,
      record: this.record,
      reread: this.reread,
      full: this.full,
      ...(cursor.type === 'Key_Shared' && this.mineLeft ? { mineLeft: this.mineLeft } : {}),
    };
  }

  /**
   * Key_Shared: what keeps this member's entries in order in this pickup (see KeysLeftBehind); for
   * a recently joined member, with the keys other members hold before its join mark.
   */
  private async keysLeftBehind(): Promise<KeysLeftBehind | undefined> {
    const { cursor, members, consumer } = this.request;
    if (cursor.type !== 'Key_Shared' || !members || !this.record) return undefined;
    const joined = recentlyJoined(members, consumer.consumerId, this.record);
    if (!joined) return new KeysLeftBehind();
    const upTo = joined.joinedAfter;
    const input = { cursor, record: this.record, consumerId: consumer.consumerId, upTo };
    return new KeysLeftBehind({ upTo, heldByOthers: await keysHeldByOthers(this.ctx, input) });
  }

  /** Takes what it may of one page of due entries; true when the pickup stopped there. */
  private async takePage(due: readonly TrackerEntry[]): Promise<boolean> {
    const { ctx, request } = this;
    const read = await readPagesOf(
      ctx.store,
      request.cursor.cursorId,
      due.flatMap((entry) => [
        ...runPagesOf(entry.position),
        Position.of(entry.position.ledgerId, entry.position.entryId + BigInt(entry.n - 1)),
      ]),
    );
    this.pages = new Map([...this.pages, ...read]);
    for (const entry of due) {
      if (!this.record) return true;
      if (this.deliveries.length >= request.max) return this.stop('unseen');
      const outcome = await this.takeOne(this.record, entry);
      if (outcome === 'stop') return this.stop('raced');
      if ('mineLeft' in outcome && outcome.mineLeft) this.leave(outcome.mineLeft);
      if (outcome.kind === 'full') return this.stopFull();
      if (outcome.kind === 'taken') {
        this.deliveries.push(...outcome.deliveries);
        this.timers.push(...outcome.timers);
        this.deadLetterTimers.push(...outcome.deadLetterTimers);
        this.record = outcome.record;
        this.pages = outcome.pages;
        // The answer cannot carry the next redelivery: the rest stays due.
        if (outcome.full) return this.stopFull();
      } else if (outcome.kind === 'stale') {
        await ctx.store.deleteTracker(request.cursor.cursorId, [entry]);
      } else if (outcome.kind === 'deadLettered') {
        await ctx.store.deleteTracker(request.cursor.cursorId, [entry]);
        if (!outcome.record) {
          // The step moved the head's due time for its claim: go on from a head read anew.
          this.record = await ctx.store.readHead(request.cursor.cursorId);
          this.reread = true;
          return this.stop('raced');
        }
        this.record = outcome.record;
      } else {
        this.allSettled = false;
        if (outcome.kind === 'conflict') return this.stop('raced');
      }
    }
    return false;
  }

  /**
   * One entry taken (or judged) on `record`; 'stop' when the pickup ends here: a stale-looking
   * entry on a head that a strong read finds was not the current one, or a refused dead letter
   * after something was taken (held by the consumer already: hand it out; the refused entry stays
   * due and a timer for it wakes the next receive, which answers the refusal).
   */
  private async takeOne(record: HeadRecord, entry: TrackerEntry): Promise<TakeOutcome | 'stop'> {
    const { ctx, request } = this;
    let outcome: TakeOutcome;
    try {
      outcome = await takeTrackerEntry(ctx, {
        ...request,
        record,
        pages: this.pages,
        entry,
        max: request.max - this.deliveries.length,
        nowMs: this.now,
        ...(this.left ? { left: this.left } : {}),
        ...(request.budget ? { budget: budgetLeft(request.budget, this.deliveries) } : {}),
      });
    } catch (error) {
      if (!(error instanceof DeadLetterRefusedError) || this.deliveries.length === 0) throw error;
      this.timers.push(entry.dueAtMs);
      return 'stop';
    }
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
  }

  /** Ends the pickup before every due entry was looked at. */
  private stop(why: MineLeft): true {
    this.allSettled = false;
    this.leave(why);
    return true;
  }

  /** Ends the pickup at a due redelivery the answer's byte budget cannot carry (it stays due). */
  private stopFull(): true {
    this.full = true;
    return this.stop('unseen');
  }

  /** Notes that entries of this member's may stay due (a race wins over what was not looked at). */
  private leave(why: MineLeft): void {
    if (this.mineLeft !== 'raced') this.mineLeft = why;
  }

  /** Everything due was settled: the head's due time moves to the earliest entry left, due or not. */
  private async moveDueTime(record: HeadRecord): Promise<void> {
    // A pending entry stays due until it is taken or swept.
    const next = await this.ctx.store.nextTrackerDue(this.request.cursor.cursorId, -1);
    if (record.head.trackerDueAtMs === next) return;
    const { trackerDueAtMs: _old, ...rest } = record.head;
    const head = next === undefined ? rest : { ...rest, trackerDueAtMs: next };
    const written = await this.ctx.store.casHead(this.request.cursor.cursorId, record.version, head);
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
      readonly deadLetterTimers: TrackerEntry[];
      readonly record: HeadRecord;
      readonly pages: PageMap;
      /** Key_Shared: entries of this member's stayed in the tracker (see PickUpResult). */
      readonly mineLeft?: MineLeft;
      /** It stopped at a delivery the byte budget could not carry (the rest stays due). */
      readonly full?: boolean;
    }
  /** Due, but the answer cannot carry its first delivery: leave it due for the next receive. */
  | { readonly kind: 'full' }
  /** The run no longer is in the state the entry names: delete the entry. */
  | { readonly kind: 'stale' }
  /**
   * Published to the dead-letter topic and acknowledged: delete the entry (never judge it again).
   * `record`: the head the step ended on (undefined: it wrote the head in a way it did not follow).
   */
  | { readonly kind: 'deadLettered'; readonly record: HeadRecord | undefined }
  /** Key_Shared: nothing this member may take now (another member's, or recently joined). */
  | { readonly kind: 'notMine'; readonly mineLeft?: MineLeft }
  /** Its run does not say so yet (a write in flight, or one that died): leave it. */
  | { readonly kind: 'pending' }
  /** The head or page changed meanwhile: leave the entry for the next receive. */
  | { readonly kind: 'conflict' };

type TakeRequest = PickUpRequest & {
  readonly pages: PageMap;
  readonly entry: TrackerEntry;
  readonly nowMs: number;
  /** Key_Shared: this member's keys the pickup left in the tracker so far (see KeysLeftBehind). */
  readonly left?: KeysLeftBehind;
};

/** A due stretch of a tracker entry, with its run. */
type DueSegment = TrackerSegment & { readonly located: LocatedRun };

async function takeTrackerEntry(ctx: EngineContext, request: TakeRequest): Promise<TakeOutcome> {
  const { cursor, consumer, record, pages, entry, nowMs } = request;
  const segments = judgeTrackerEntry(record.head, pages, entry, nowMs);
  const due = segments.filter(
    (segment): segment is DueSegment => segment.verdict === 'due' && !!segment.located,
  );
  const first = due[0];
  if (!first)
    return segments.some((segment) => segment.verdict === 'pending')
      ? { kind: 'pending' }
      : { kind: 'stale' };
  // Key_Shared reads every due stretch of the entry (still one Query: an entry lies in one ledger),
  // so a member takes its own stretch behind another member's and knows the keys it leaves.
  const entries = await readEntriesAt(ctx, (request.left ? due : [first]).flatMap(segmentPositions));
  const deadLetter = consumer.deadLetter;
  if (deadLetter && first.located.run.deliveries > deadLetter.maxRedeliverCount) {
    // Handed out again it would pass maxRedeliverCount: Pulsar's dead-letter producer takes it,
    // once, whatever the number of consumers racing for this entry (the step claims it first).
    const unacked = segmentPositions(first);
    const stored = unacked.flatMap((position) => entries.get(position.toString()) ?? []);
    if (stored.length < unacked.length || stored.length === 0) return { kind: 'conflict' };
    await ctx.store.putTracker(cursor.cursorId, othersOf(segments, first, entry));
    const step = { cursor, record, located: first.located, entries: stored, deadLetter };
    const done = await deadLetterEntries(ctx, step);
    if (done.kind === 'lost') return { kind: 'conflict' };
    return { kind: 'deadLettered', record: done.record };
  }
  const { chosen, taken, left, full } = request.left
    ? chooseStretch(request, due, entries)
    : {
        chosen: first,
        ...takeableFrom(request, segmentPositions(first), entries, first.located.run.deliveries),
      };
  if (taken.length === 0 && full) return { kind: 'full' };
  // Other stretches of this entry get entries of their own, due now: a look again finds them. On
  // Key_Shared, chooseStretch says whether any of them is this member's.
  const othersDue = segments.some((segment) => segment !== chosen && segment.verdict === 'due');
  const mineLeft: MineLeft | undefined = request.left ? left : othersDue ? 'raced' : left;
  const leftMine = mineLeft ? { mineLeft } : {};
  if (taken.length === 0) {
    return cursor.type === 'Key_Shared' ? { kind: 'notMine', ...leftMine } : { kind: 'conflict' };
  }
  const slice = sliceRun(chosen.located.run, chosen.from, chosen.from + BigInt(chosen.n)) as DeliveryRun;
  const others = othersOf(segments, chosen, entry);
  const held = await holdTaken(ctx, { request, located: chosen.located, slice, others, taken });
  return held.kind === 'taken' ? { ...held, ...leftMine, full } : held;
}

/** The positions of a stretch of a tracker entry (acknowledged ones make stretches of their own). */
function segmentPositions(segment: TrackerSegment & { readonly located: LocatedRun }): Position[] {
  const slice = sliceRun(segment.located.run, segment.from, segment.from + BigInt(segment.n));
  return slice ? runPositions(slice) : [];
}

/**
 * What the entry still stands for beyond the stretch `chosen`: tracker entries of their own, put
 * before the stretch is taken (their keys are not read here: on Key_Shared a due one may be this
 * member's).
 */
function othersOf(
  segments: readonly TrackerSegment[],
  chosen: TrackerSegment,
  entry: TrackerEntry,
): TrackerEntry[] {
  return segments
    .filter((segment) => segment !== chosen && segment.verdict !== 'stale')
    .map((segment) => ({
      ...entry,
      position: Position.of(entry.position.ledgerId, segment.from),
      n: segment.n,
    }));
}

/**
 * Key_Shared: the first due stretch of the entry that has something this member may take now, and
 * what it takes of it; this member's entries in the stretches after it stay in the tracker (their
 * keys are held back for the rest of the pickup, `left`: `raced`, they get entries of their own, due
 * now). None has anything: the first stretch, nothing taken.
 */
function chooseStretch(
  request: TakeRequest,
  due: readonly DueSegment[],
  entries: ReadonlyMap<string, StoredEntry>,
): { chosen: DueSegment; taken: TakenEntry[]; left?: MineLeft; full: boolean } {
  let chosen: DueSegment | undefined;
  let result: { taken: TakenEntry[]; left?: MineLeft; full: boolean } = { taken: [], full: false };
  let leftAfter = false;
  for (const segment of due) {
    const positions = segmentPositions(segment);
    if (chosen) {
      leftAfter = leaveMine(request, positions, entries) || leftAfter;
      continue;
    }
    const looked = takeableFrom(request, positions, entries, segment.located.run.deliveries);
    const takes = looked.taken.length > 0 || looked.full;
    // Entries of this member's held back in a stretch before the chosen one stay left too.
    const left = result.left === 'raced' ? 'raced' : (looked.left ?? result.left);
    result = { ...(takes ? looked : result), ...(left ? { left } : {}) };
    if (takes) chosen = segment;
  }
  return { chosen: chosen ?? (due[0] as DueSegment), ...result, ...(leftAfter ? { left: 'raced' } : {}) };
}

/** Notes this member's entries among `positions` as left in the tracker; true when it has any. */
function leaveMine(
  request: TakeRequest,
  positions: readonly Position[],
  entries: ReadonlyMap<string, StoredEntry>,
): boolean {
  const { left, members, consumer, record } = request;
  if (!left || !members) return false;
  let mine = false;
  for (const position of positions) {
    const stored = entries.get(position.toString());
    if (!stored) left.leaveUnread();
    else if (routesTo(members, consumer.consumerId, stored, record.head)) left.leave(stored);
    else continue;
    mine = true;
  }
  return mine;
}

type TakenEntry = { position: Position; entry: StoredEntry };

/**
 * The unacknowledged positions of the run this call may take, in order, with their entries: on
 * Key_Shared those routed to this member and not held back behind an earlier entry of their key
 * left in the tracker by this pickup (others' stay where they are, in the tracker), up to the
 * call's max. `left`: an entry this member may take was not taken: `unseen`, past the max;
 * `raced`, an entry not readable yet, after which nothing is taken (its key is not known), or one
 * held back. `full`: it stopped at one the byte budget could not carry.
 */
function takeableFrom(
  request: TakeRequest,
  unacked: readonly Position[],
  entries: ReadonlyMap<string, StoredEntry>,
  redeliveryCount: number,
): { taken: TakenEntry[]; left?: MineLeft; full: boolean } {
  const { cursor, consumer, record } = request;
  const taken: TakenEntry[] = [];
  const tally = new ByteTally(request.budget);
  let heldBack: MineLeft | undefined;
  for (const position of unacked) {
    const stored = entries.get(position.toString());
    if (!stored) {
      request.left?.leaveUnread();
      return { taken, left: 'raced', full: false }; // not visible yet: take what comes before it
    }
    if (
      cursor.type === 'Key_Shared' &&
      request.members &&
      !routesTo(request.members, consumer.consumerId, stored, record.head)
    ) {
      continue;
    }
    const waits = request.left?.holdsBack(stored);
    if (waits) {
      // Behind an entry this pickup left: look again at once; behind another member's held one:
      // when something rings (its acknowledgement moves nothing here).
      heldBack = heldBack === 'raced' || waits === 'behind' ? 'raced' : 'unseen';
      continue;
    }
    if (taken.length >= request.max) {
      request.left?.leave(stored);
      return { taken, left: 'unseen', full: false };
    }
    if (!tally.admits({ position, redeliveryCount, entry: stored })) {
      request.left?.leave(stored);
      return { taken, left: 'unseen', full: true };
    }
    taken.push({ position, entry: stored });
  }
  return { taken, ...(heldBack ? { left: heldBack } : {}), full: false };
}

/**
 * Records what was taken as held by the consumer (count + 1, its ack timeout in the tracker), in
 * the one conditional write of the run's home (head or page), and deletes the tracker entry; what
 * the entry stood for and was not taken (another member's entries, past the max) keeps entries of
 * its own, put first.
 */
async function holdTaken(
  ctx: EngineContext,
  input: {
    readonly request: TakeRequest;
    readonly located: LocatedRun;
    readonly slice: DeliveryRun;
    readonly others: readonly TrackerEntry[];
    readonly taken: readonly TakenEntry[];
  },
): Promise<TakeOutcome> {
  const { request, taken } = input;
  const { run, home } = input.located;
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
  const trackerEntries = [...input.others, ...untakenOf(replacement, input.slice, entry)];
  const ackTimeouts = ackTimeoutEntries(replacement, heldState);
  trackerEntries.push(...ackTimeouts);
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
  const outcome = {
    kind: 'taken' as const,
    deliveries,
    timers: trackerEntries.map((e) => e.dueAtMs),
    // Its next hand-out would pass maxRedeliverCount: the server dead-letters it when this is due.
    deadLetterTimers:
      consumer.deadLetter && run.deliveries + 1 > consumer.deadLetter.maxRedeliverCount ? ackTimeouts : [],
  };
  if (home.kind === 'head') {
    const head = { ...record.head, runs: withRunsReplaced(record.head.runs, [run], replacement) };
    return { ...outcome, record: { ...record, head, version: record.version + 1 }, pages };
  }
  const page: PageState = {
    ...home.page,
    runs: withRunsReplaced(home.page.runs, [run], replacement),
    version: home.page.version + 1,
  };
  return { ...outcome, record, pages: new Map(pages).set(pageKey(page), page) };
}

/** The ack timeouts of the pieces now held (`heldState`), as tracker entries. */
function ackTimeoutEntries(pieces: readonly DeliveryRun[], heldState: DeliveryRun['state']): TrackerEntry[] {
  if (heldState.kind !== 'held' || heldState.timeoutAtMs === undefined) return [];
  const timeoutAtMs = heldState.timeoutAtMs;
  return pieces
    .filter((piece) => piece.state === heldState)
    .map((piece) => ({
      dueAtMs: timeoutAtMs,
      position: runStart(piece),
      deliveries: piece.deliveries,
      n: piece.n,
    }));
}

/** The stretches of the entry's slice that were not taken: they keep its state and due time. */
function untakenOf(pieces: readonly DeliveryRun[], slice: DeliveryRun, entry: TrackerEntry): TrackerEntry[] {
  return pieces.flatMap((piece) => {
    if (piece.deliveries !== slice.deliveries) return [];
    const part = sliceRun(piece, slice.entryId, runEnd(slice));
    return part
      ? [
          {
            dueAtMs: entry.dueAtMs,
            position: runStart(part),
            deliveries: entry.deliveries,
            n: part.n,
            ...(entry.consumerId !== undefined ? { consumerId: entry.consumerId } : {}),
          },
        ]
      : [];
  });
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
