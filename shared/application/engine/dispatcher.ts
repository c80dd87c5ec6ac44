import { type DeliveryRun, runCovers, runEnd } from '../../domain/delivery-run.ts';
import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { ConflictError, DeadLetterRefusedError, NotFoundError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import { bump } from '../../domain/rate-counter.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { HeadRecord, TrackerEntry } from '../../ports/dispatch-store.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import { consumerRoom } from './consumer-cap.ts';
import { windowSize } from './dispatcher-window.ts';
import type {
  Delivery,
  DispatchConsumer,
  EngineContext,
  KeySharedMember,
  PartitionCursor,
} from './engine-context.ts';
import { foldStep } from './fold.ts';
import { routesTo } from './key-shared-routing.ts';
import { isAcknowledged, nextInLedger, type PageMap, readPagesOf, spillIfFull } from './pending-state.ts';
import { pickUpDue } from './redelivery-tracker.ts';
import { replayStep } from './replay.ts';
import { finishReset, resetOverdue } from './reset-cursor.ts';

/** Most entries one receive hands out from one partition (a run stays within two pages). */
export const MAX_DISPATCH = 100;
/** Ids a dead publisher allocated that one receive acknowledges at most (the next one goes on). */
const MAX_ABANDONED_PER_CALL = 10_000;
/** An owner's lease is written again only when less than this is left of a full lease. */
const OWNER_RENEW_AFTER_MS = 5_000;
/** How many replaced owners the head remembers, to refuse their calls (I6). */
const FENCED_REMEMBERED = 4;

/** A replaced Exclusive/Failover owner, or a second Exclusive consumer: its calls are refused (409). */
export class ConsumerFencedError extends ConflictError {}

export type DispatchResult =
  /**
   * Messages handed out (possibly none: nothing is due, or the step lost every race this time),
   * and the due times of the timers it set (delayed entries, ack timeouts), for the caller to ring.
   */
  | {
      readonly kind: 'delivered';
      readonly deliveries: readonly Delivery[];
      readonly timers: readonly number[];
      /**
       * Nothing more for any consumer of the subscription at this moment: the read position is at
       * the end of what is written, nothing in the tracker is due and no replay is under way. Only
       * a publish or a timer (each rings the doorbell) changes that.
       */
      readonly caughtUp: boolean;
      /**
       * Shared/Key_Shared: nothing handed out because another consumer claimed the entries at the
       * read position first. More may be waiting behind them: look again soon (see
       * giveUpAfterLostClaim), not after a whole long poll.
       */
      readonly contended: boolean;
    }
  /** Failover: another consumer is active; this one waits. */
  | { readonly kind: 'standby' }
  /**
   * Shared/Key_Shared: the consumer holds its cap of unacknowledged entries (Pulsar's
   * maxUnackedMessagesPerConsumer, see consumerRoom); nothing is handed to it until it acknowledges.
   */
  | { readonly kind: 'blocked' };

export interface DispatchRequest {
  readonly cursor: PartitionCursor;
  readonly consumer: DispatchConsumer;
  /** 1..MAX_DISPATCH */
  readonly max: number;
  /** Key_Shared: the live members (this consumer among them), sorted by id. */
  readonly members?: readonly KeySharedMember[];
}

/**
 * Pulsar's dispatcher for one receive on one partition: due redeliveries first (the redelivery
 * tracker), then an Exclusive/Failover rewind's replay, then first deliveries from the read
 * position. Everything handed out is recorded as held by the consumer, in the same single-item
 * compare-and-set that moves the read position, before it is returned: a crash between two
 * requests loses nothing (I2) and counts exactly (I4).
 * Cost (first deliveries, nothing contended): the head (1 eventually consistent read, half a unit;
 * a strong one more when it finds nothing to do), the entries from the read position (1 Query,
 * none when this process has them), the claim (1 write); plus, rarely, a spill, the layout when nothing is
 * at the read position, the pages when an ack by id raced ahead of dispatch.
 * @throws NotFoundError when the cursor is gone; ConsumerFencedError (I6).
 */
export async function dispatch(ctx: EngineContext, request: DispatchRequest): Promise<DispatchResult> {
  const { cursor, consumer } = request;
  const max = Math.min(MAX_DISPATCH, Math.max(1, Math.floor(request.max)));
  // An eventually consistent read (half a read unit): an earlier head only makes the claim's
  // compare-and-set fail, and that failure answers the current head. A step that would end with
  // nothing done on such a head (nothing to read, window full, standby, deleted) reads it again,
  // strongly, before it concludes: a ring it consumed must not be wasted on an old view.
  let record = await ctx.store.readHead(cursor.cursorId, { consistent: false });
  let fresh = false;
  const readFresh = async () => {
    record = await ctx.store.readHead(cursor.cursorId);
    fresh = true;
  };
  /** Reads the head strongly; true when the head read before was already the current one. */
  const confirm = async (): Promise<boolean> => {
    const seen = record?.version;
    await readFresh();
    return record !== undefined && record.version === seen;
  };
  if (!record) await readFresh();
  const delivered: Delivery[] = [];
  /** Deliveries not made by a claim (tracker pickups, replays): counted beside the head. */
  const outside: Delivery[] = [];
  const timers: number[] = [];
  let atEnd = false;
  let contended = false;
  /**
   * Shared/Key_Shared: how many more this call may hand out within the consumer's cap, judged on
   * the head it is about to write on (an eventually consistent head may be versions behind: its
   * shorter window let a consumer pass its cap several times over). What this call handed out
   * already counts against it.
   */
  const capRoom = async (current: HeadRecord): Promise<number> =>
    isCumulativeAckType(cursor.type)
      ? Number.POSITIVE_INFINITY
      : (await consumerRoom(ctx, cursor, current.head, consumer.consumerId, max - delivered.length)) -
        delivered.length;
  for (let attempt = 0; attempt <= ctx.limits.casAttempts && record; attempt++) {
    if (attempt === ctx.limits.casAttempts) {
      // Out of attempts: one more only when nothing was done and the head was never fresh.
      if (delivered.length > 0 || fresh) break;
      await readFresh();
      if (!record) break;
    }
    const room = await capRoom(record);
    if (room <= 0) {
      if (delivered.length > 0) break;
      return { kind: 'blocked' };
    }
    const limit = Math.min(max, delivered.length + room);
    const now = ctx.clock.nowMs();
    let ownerChanges: Partial<DispatchHead> = {};
    if (isCumulativeAckType(cursor.type)) {
      let ownership: Ownership;
      try {
        ownership = decideOwnership(record.head, consumer, cursor.type, now);
      } catch (error) {
        // A refusal only on the current head: an old one may name the owner this consumer
        // replaced a moment ago (a 409 to the subscription's new Exclusive owner).
        if (error instanceof ConsumerFencedError && !fresh) {
          await readFresh();
          continue;
        }
        throw error;
      }
      if (ownership.kind === 'standby') {
        if (fresh || (await confirm())) return { kind: 'standby' };
        continue;
      }
      if (ownership.kind === 'takeover') {
        const taken = await ctx.store.casHead(cursor.cursorId, record.version, ownership.head);
        record = taken.ok ? { ...record, head: ownership.head, version: record.version + 1 } : taken.current;
        fresh = true;
        continue;
      }
      ownerChanges = ownership.renewal ?? {};
    }
    const head = record.head;
    // During an Exclusive/Failover replay the tracker waits: the replay hands out, in order,
    // whatever the tracker would (held runs, released ones when due) before anything else.
    const replaying = head.replayFrom !== undefined && isCumulativeAckType(cursor.type);
    if (!replaying && head.trackerDueAtMs !== undefined && head.trackerDueAtMs <= now) {
      let picked: Awaited<ReturnType<typeof pickUpDue>>;
      try {
        picked = await pickUpDue(ctx, {
          cursor,
          consumer,
          record,
          max: limit - delivered.length,
          ...(request.members ? { members: request.members } : {}),
        });
      } catch (error) {
        // A refused dead letter after a lost race: what an earlier attempt took is held, return it
        // (with a timer, so the next receive looks again and answers the refusal).
        if (error instanceof DeadLetterRefusedError && delivered.length > 0) {
          timers.push(now);
          break;
        }
        throw error;
      }
      delivered.push(...picked.deliveries);
      outside.push(...picked.deliveries);
      timers.push(...picked.timers);
      record = picked.record;
      if (!record || delivered.length >= limit) break;
      if (picked.reread) {
        // The pickup ended on a newer head (a strong read, a lost compare-and-set's answer), which
        // the claim below would write on: judge the consumer's room on it first (a room judged on
        // an eventually consistent head versions behind let a consumer pass its cap).
        fresh = true;
        continue;
      }
    }
    if (record.head.replayFrom && isCumulativeAckType(cursor.type)) {
      const replayed = await replayStep(ctx, { cursor, consumer, record, max: limit - delivered.length });
      delivered.push(...replayed.deliveries);
      outside.push(...replayed.deliveries);
      timers.push(...replayed.timers);
      if (replayed.kind === 'conflict') {
        record = replayed.current;
        fresh = true;
        continue;
      }
      if (delivered.length === 0 && !fresh && !(await confirm())) continue;
      break;
    }
    const claimed = await claimFirstDeliveries(ctx, {
      cursor,
      consumer,
      record,
      max: limit - delivered.length,
      ownerChanges,
      ...(request.members ? { members: request.members } : {}),
    });
    if (claimed.kind === 'conflict') {
      record = claimed.current;
      fresh = true;
      if (delivered.length === 0 && giveUpAfterLostClaim(cursor, consumer, claimed, record)) {
        contended = true;
        break;
      }
      await ctx.pauseAfterConflict?.(attempt);
      continue;
    }
    delivered.push(...claimed.deliveries);
    timers.push(...claimed.timers);
    if (delivered.length === 0 && !fresh && !(await confirm())) continue;
    atEnd = claimed.atEnd && delivered.length === 0;
    break;
  }
  if (!record && delivered.length === 0) {
    throw new NotFoundError(
      `The subscription of cursor ${cursor.cursorId} on ${cursor.partition.toString()} was deleted`,
    );
  }
  await countOutside(ctx, cursor, outside);
  ctx.handedTo?.(cursor, consumer.consumerId, delivered.length);
  const head = record?.head;
  const caughtUp =
    atEnd &&
    head !== undefined &&
    head.replayFrom === undefined &&
    (head.trackerDueAtMs === undefined || head.trackerDueAtMs > ctx.clock.nowMs());
  return { kind: 'delivered', deliveries: delivered, timers, caughtUp, contended };
}

/**
 * A Shared or Key_Shared consumer that lost the claim at the read position to another consumer's
 * first deliveries stops there, with nothing, instead of racing the others again at once: the
 * receive waits on the doorbell a moment (a ring for each publish is waiting there while a
 * backlog lasts) and looks again. Retried at once, the losers of one race collide again at the
 * next read position, each paying a failed conditional write and an entries read; in the bench's
 * lifecycle (4 consumers) this took failed claims from 0.07 to 0.015 a message. A claim lost to
 * anything else (an ack by id, a fold, a tracker pickup) is retried, as are Exclusive and
 * Failover claims, whose one active consumer races only its own acknowledgements.
 */
function giveUpAfterLostClaim(
  cursor: PartitionCursor,
  consumer: DispatchConsumer,
  lost: Extract<ClaimOutcome, { kind: 'conflict' }>,
  current: HeadRecord | undefined,
): boolean {
  const wanted = lost.wanted;
  if (isCumulativeAckType(cursor.type) || !current || !wanted) return false;
  // Held by another consumer now: not this call's own write applied twice (an SDK retry), not a
  // reset or a fold, which moved the read position without handing anything out.
  return current.head.runs.some(
    (run) =>
      run.state.kind === 'held' && run.state.consumerId !== consumer.consumerId && runCovers(run, wanted),
  );
}

/** The byte size a delivery counts for in throughput (its payload, as Pulsar's msgThroughputOut). */
function bytesOf(deliveries: readonly Delivery[]): number {
  return deliveries.reduce((sum, delivery) => sum + Buffer.byteLength(delivery.entry.payload), 0);
}

/**
 * Counts deliveries not made by a claim (whose head write counts them): one write per dispatch call
 * that made any (redeliveries, delayed and routed entries, replays), none otherwise.
 */
async function countOutside(
  ctx: EngineContext,
  cursor: PartitionCursor,
  outside: readonly Delivery[],
): Promise<void> {
  if (outside.length === 0) return;
  const redelivered = outside.filter((delivery) => delivery.redeliveryCount > 0);
  await ctx.store.addToCounters(
    cursor.cursorId,
    {
      out: { count: outside.length, bytes: bytesOf(outside) },
      ...(redelivered.length > 0
        ? { redelivered: { count: redelivered.length, bytes: bytesOf(redelivered) } }
        : {}),
    },
    ctx.clock.nowMs(),
  );
}

/**
 * Exclusive/Failover subscribe: the new consumer becomes the active one when none is alive (a
 * takeover, replaying what a lapsed owner held); with a live owner, an Exclusive subscribe is
 * refused (Pulsar's ConsumerBusy, 409) and a Failover one waits as a standby.
 * Cost: the head, and one write when it takes over.
 * @returns whether the consumer is the active one now.
 */
export async function claimOwnership(
  ctx: EngineContext,
  cursor: PartitionCursor,
  consumer: DispatchConsumer,
): Promise<boolean> {
  for (let attempt = 0; attempt < ctx.limits.casAttempts; attempt++) {
    const record = await ctx.store.readHead(cursor.cursorId);
    if (!record) throw new NotFoundError(`The subscription of cursor ${cursor.cursorId} was deleted`);
    const ownership = decideOwnership(record.head, consumer, cursor.type, ctx.clock.nowMs());
    if (ownership.kind === 'standby') return false;
    if (ownership.kind === 'owner' && !ownership.renewal) return true;
    const head = ownership.kind === 'owner' ? { ...record.head, ...ownership.renewal } : ownership.head;
    if ((await ctx.store.casHead(cursor.cursorId, record.version, head)).ok) return true;
  }
  return false;
}

type Ownership =
  | { readonly kind: 'owner'; readonly renewal?: Partial<DispatchHead> }
  | { readonly kind: 'takeover'; readonly head: DispatchHead }
  | { readonly kind: 'standby' };

/**
 * Exclusive/Failover: the owner renews its lease; a consumer finding no live owner takes over
 * (new epoch, the old owner fenced, a replay from mark-delete so that its held entries come back
 * in order); anyone else waits (Failover) or is refused (Exclusive, or a replaced owner).
 */
export function decideOwnership(
  head: DispatchHead,
  consumer: DispatchConsumer,
  type: PartitionCursor['type'],
  nowMs: number,
): Ownership {
  const me = consumer.consumerId;
  if (head.fenced?.includes(me)) {
    throw new ConsumerFencedError(
      `Consumer ${me} was replaced as the active consumer (epoch ${head.epoch}): subscribe again`,
    );
  }
  if (head.owner?.consumerId === me) {
    if (head.owner.leaseUntilMs - nowMs >= consumer.leaseMs - OWNER_RENEW_AFTER_MS) return { kind: 'owner' };
    return { kind: 'owner', renewal: { owner: { consumerId: me, leaseUntilMs: nowMs + consumer.leaseMs } } };
  }
  if (head.owner && head.owner.leaseUntilMs > nowMs) {
    if (type === 'Exclusive') {
      throw new ConsumerFencedError(`Exclusive subscription already has an active consumer`);
    }
    return { kind: 'standby' };
  }
  const afterMarkDelete = nextInLedger(head.markDelete);
  const dispatchedBefore = head.readPosition.compareTo(afterMarkDelete) > 0;
  const replayFrom =
    head.replayFrom && head.replayFrom.compareTo(afterMarkDelete) < 0 ? head.replayFrom : afterMarkDelete;
  const fenced = head.owner
    ? [...(head.fenced ?? []), head.owner.consumerId].slice(-FENCED_REMEMBERED)
    : head.fenced;
  const { replayFrom: _dropped, ...rest } = head;
  return {
    kind: 'takeover',
    head: {
      ...rest,
      epoch: head.epoch + 1,
      owner: { consumerId: me, leaseUntilMs: nowMs + consumer.leaseMs },
      ...(fenced ? { fenced } : {}),
      ...(dispatchedBefore || head.replayFrom ? { replayFrom } : {}),
    },
  };
}

type ClaimOutcome =
  | {
      readonly kind: 'claimed';
      readonly deliveries: readonly Delivery[];
      readonly timers: readonly number[];
      /** Nothing was found at the read position (it is at the end of what is written). */
      readonly atEnd: boolean;
    }
  | {
      readonly kind: 'conflict';
      readonly current: HeadRecord | undefined;
      /** The first entry the lost compare-and-set would have handed out (none: no claim was tried). */
      readonly wanted?: Position;
    };

interface ClaimRequest {
  readonly cursor: PartitionCursor;
  readonly consumer: DispatchConsumer;
  readonly record: HeadRecord;
  readonly max: number;
  readonly ownerChanges: Partial<DispatchHead>;
  readonly members?: readonly KeySharedMember[];
}

/**
 * First deliveries from the read position, in log order: one compare-and-set of the head moves
 * the read position past what it considered and records it as held by this consumer (delayed
 * entries and, on Key_Shared, entries of other members' keys as released to the tracker).
 */
async function claimFirstDeliveries(ctx: EngineContext, request: ClaimRequest): Promise<ClaimOutcome> {
  const { cursor, consumer, record } = request;
  const head = record.head;
  const now = ctx.clock.nowMs();
  if (head.resetting) {
    // A reset is clearing the pages it rewound over: nothing is handed out until it is done (its
    // resetter died: finish it here).
    if (!resetOverdue(head, now)) return renewOnly(ctx, request, false);
    await finishReset(ctx, cursor);
    return { kind: 'conflict', current: await ctx.store.readHead(cursor.cursorId) };
  }
  const room = await windowRoom(ctx, cursor, head);
  if (room <= 0) {
    // At the cap: fold what was acknowledged (maintenance would, within a minute), then go on
    // with the folded head, or pause while the window really is full (I7).
    const folded = await foldStep(ctx, cursor);
    if (!folded.markDelete) return renewOnly(ctx, request, false);
    return { kind: 'conflict', current: await ctx.store.readHead(cursor.cursorId) };
  }
  const max = Math.min(request.max, room);
  const found = await entriesAtReadPosition(ctx, cursor, head, Math.min(MAX_DISPATCH, max));
  if (found.entries.length === 0 && found.readPosition.equals(head.readPosition)) {
    return renewOnly(ctx, request, true);
  }
  let pages: PageMap = new Map();
  const positions = found.entries.map((entry) => entry.position);
  if (record.aheadAck && positions.some((position) => position.compareTo(record.aheadAck as Position) <= 0)) {
    pages = await readPagesOf(ctx.store, cursor.cursorId, positions);
  }
  const plan = planFirstDeliveries({
    head,
    pages,
    entries: found.entries,
    max,
    consumer,
    type: cursor.type,
    nowMs: now,
    maxNewRuns: ctx.limits.maxHeadRuns,
    ...(request.members ? { members: request.members } : {}),
  });
  const readPosition = plan.nextReadPosition ?? found.readPosition;
  await ctx.store.putTracker(cursor.cursorId, plan.trackerEntries);
  const dues = plan.trackerEntries.map((entry) => entry.dueAtMs);
  const trackerDueAtMs = minDue(head.trackerDueAtMs, ...dues);
  const next: DispatchHead = {
    ...head,
    ...request.ownerChanges,
    readPosition,
    runs: [...head.runs, ...plan.runs].sort((a, b) =>
      a.ledgerId !== b.ledgerId
        ? a.ledgerId < b.ledgerId
          ? -1
          : 1
        : a.entryId < b.entryId
          ? -1
          : a.entryId > b.entryId
            ? 1
            : 0,
    ),
    ...(trackerDueAtMs !== undefined ? { trackerDueAtMs } : {}),
    ...(plan.routedAtMs !== undefined ? { routedAtMs: plan.routedAtMs } : {}),
    // Counted in the claim's own write: first deliveries cost no write of their own.
    ...(plan.deliveries.length > 0
      ? { delivered: bump(head.delivered, plan.deliveries.length, bytesOf(plan.deliveries), now) }
      : {}),
  };
  const written = await ctx.store.casHead(cursor.cursorId, record.version, next);
  if (!written.ok) {
    const wanted = found.entries[0]?.position;
    return { kind: 'conflict', current: written.current, ...(wanted ? { wanted } : {}) };
  }
  await spillIfFull(
    ctx.store,
    cursor.cursorId,
    { ...record, head: next, version: record.version + 1 },
    ctx.limits.maxHeadRuns,
  );
  return { kind: 'claimed', deliveries: plan.deliveries, timers: dues, atEnd: false };
}

async function renewOnly(ctx: EngineContext, request: ClaimRequest, atEnd: boolean): Promise<ClaimOutcome> {
  const nothing: ClaimOutcome = { kind: 'claimed', deliveries: [], timers: [], atEnd };
  if (Object.keys(request.ownerChanges).length === 0) return nothing;
  const next = { ...request.record.head, ...request.ownerChanges };
  const written = await ctx.store.casHead(request.cursor.cursorId, request.record.version, next);
  return written.ok ? nothing : { kind: 'conflict', current: written.current };
}

/**
 * How many more entries first deliveries may hand out before the subscription reaches its cap
 * of unacknowledged entries (Pulsar's maxUnackedMessagesPerSubscription), measured by the window
 * from mark-delete to the read position (windowSize: conservative, a message stuck at mark-delete
 * pauses dispatch once the cap more were dispatched). On Exclusive and Failover the one active
 * consumer holds the whole window, so Pulsar's maxUnackedMessagesPerConsumer caps it too.
 */
async function windowRoom(ctx: EngineContext, cursor: PartitionCursor, head: DispatchHead): Promise<number> {
  const cap = isCumulativeAckType(cursor.type)
    ? Math.min(ctx.limits.maxUnackedPerSubscription, ctx.limits.maxUnackedPerConsumer)
    : ctx.limits.maxUnackedPerSubscription;
  return cap - (await windowSize(ctx, cursor, head));
}

function minDue(...dues: (number | undefined)[]): number | undefined {
  const defined = dues.filter((due): due is number => due !== undefined);
  return defined.length === 0 ? undefined : Math.min(...defined);
}

/**
 * The written entries from the read position on, contiguous, at most `window`: across ledgers
 * rolled over, and past ids allocated but never written once an entry written after them is
 * `abandonedIdMs` old (those are acknowledged here, before the read position passes them).
 * `readPosition` is where those entries start (the head's, or later past rolled ledgers and
 * abandoned ids).
 */
async function entriesAtReadPosition(
  ctx: EngineContext,
  cursor: PartitionCursor,
  head: DispatchHead,
  window: number,
): Promise<{ readPosition: Position; entries: StoredEntry[] }> {
  let readPosition = maxPosition(head.readPosition, nextInLedger(head.markDelete));
  for (let hops = 0; hops < 8; hops++) {
    const read = await ctx.ledger.readEntries(
      readPosition.ledgerId,
      readPosition.entryId,
      readPosition.entryId + BigInt(window) - 1n,
      { consistent: false },
    );
    const entries = contiguousFrom(readPosition, read);
    if (entries.length > 0) return { readPosition, entries };
    const state = await (ctx.recentState ?? ((partition) => ctx.ledger.state(partition)))(cursor.partition);
    const ledgers = state?.ledgers ?? [];
    const index = ledgers.findIndex((ledger) => ledger.ledgerId === readPosition.ledgerId);
    const ledger = ledgers[index];
    if (!ledger) {
      // The read position names a ledger before the first one kept (or none yet): start at the first.
      const first = ledgers.find((candidate) => candidate.ledgerId > readPosition.ledgerId);
      if (!first) return { readPosition, entries: [] };
      readPosition = Position.of(first.ledgerId, 0n);
      continue;
    }
    if (readPosition.entryId >= ledger.entries) {
      const following = ledgers[index + 1];
      if (!following) return { readPosition, entries: [] }; // caught up
      readPosition = Position.of(following.ledgerId, 0n);
      continue;
    }
    // Allocated, not visible: being written, or its publisher died. The first entry written
    // after it (in this ledger, or in a later one when this one was rolled over) tells which.
    let later = read[0] ?? (await ctx.ledger.firstWrittenAfter(readPosition.ledgerId, readPosition.entryId));
    for (const following of ledgers.slice(index + 1)) {
      if (later) break;
      later = await ctx.ledger.firstWrittenAfter(following.ledgerId, -1n);
    }
    if (!later || later.publishTimeMs > ctx.clock.nowMs() - ctx.limits.abandonedIdMs) {
      return { readPosition, entries: [] };
    }
    const abandoned: Position[] = [];
    const holeEnd =
      later.position.ledgerId === readPosition.ledgerId ? later.position.entryId : ledger.entries;
    for (let id = readPosition.entryId; id < holeEnd && abandoned.length < MAX_ABANDONED_PER_CALL; id++) {
      abandoned.push(Position.of(readPosition.ledgerId, id));
    }
    await ctx.store.acknowledge(cursor.cursorId, abandoned);
    readPosition = nextInLedger(abandoned[abandoned.length - 1] as Position);
  }
  return { readPosition, entries: [] };
}

function contiguousFrom(start: Position, read: readonly StoredEntry[]): StoredEntry[] {
  const entries: StoredEntry[] = [];
  let expected = start.entryId;
  for (const entry of [...read].sort((a, b) => Position.compare(a.position, b.position))) {
    if (entry.position.ledgerId !== start.ledgerId || entry.position.entryId !== expected) break;
    entries.push(entry);
    expected += 1n;
  }
  return entries;
}

function maxPosition(a: Position, b: Position): Position {
  return a.compareTo(b) >= 0 ? a : b;
}

export interface FirstDeliveryPlan {
  /** New runs for the head, in position order. */
  readonly runs: DeliveryRun[];
  readonly deliveries: Delivery[];
  readonly trackerEntries: TrackerEntry[];
  /** The read position after what was considered; undefined when nothing was. */
  readonly nextReadPosition?: Position;
  readonly routedAtMs?: number;
}

/**
 * What a claim of first deliveries records (pure): entries in order, acknowledged ones skipped,
 * up to `max` handed to the consumer as one held run per stretch; on Shared and Key_Shared,
 * delayed entries released to the tracker for their deliverAt (Exclusive and Failover ignore
 * deliverAt, as Pulsar does); on Key_Shared, entries of another member's key (or of a recently
 * joined member, Pulsar's rule) released to the tracker for that member.
 */
export function planFirstDeliveries(input: {
  readonly head: DispatchHead;
  readonly pages: PageMap;
  readonly entries: readonly StoredEntry[];
  readonly max: number;
  readonly consumer: DispatchConsumer;
  readonly type: PartitionCursor['type'];
  readonly nowMs: number;
  readonly members?: readonly KeySharedMember[];
  readonly maxNewRuns: number;
}): FirstDeliveryPlan {
  const { head, pages, entries, max, consumer, type, nowMs } = input;
  const runs: DeliveryRun[] = [];
  const deliveries: Delivery[] = [];
  const trackerEntries: TrackerEntry[] = [];
  let routedAtMs: number | undefined;
  let last: Position | undefined;
  const timeoutMs = consumer.ackTimeoutMs(0);
  const held = (): DeliveryRun['state'] => ({
    kind: 'held',
    consumerId: consumer.consumerId,
    deliveredAtMs: nowMs,
    ...(timeoutMs > 0 ? { timeoutAtMs: nowMs + timeoutMs } : {}),
  });
  const append = (position: Position, state: DeliveryRun['state'], deliveries: number) => {
    const previous = runs[runs.length - 1];
    if (
      previous &&
      previous.ledgerId === position.ledgerId &&
      runEnd(previous) === position.entryId &&
      previous.deliveries === deliveries &&
      JSON.stringify(previous.state) === JSON.stringify(state)
    ) {
      runs[runs.length - 1] = { ...previous, n: previous.n + 1 };
    } else {
      runs.push({ ledgerId: position.ledgerId, entryId: position.entryId, n: 1, deliveries, state });
    }
  };
  for (const entry of entries) {
    if (deliveries.length >= max) break;
    // A claim adds at most maxNewRuns runs (delayed and routed entries each may start one), so
    // the head stays within a fixed size whatever the mix of entries.
    if (runs.length >= input.maxNewRuns) break;
    const position = entry.position;
    last = position;
    if (isAcknowledged(head, pages, position)) continue;
    const delayed =
      type !== 'Exclusive' &&
      type !== 'Failover' &&
      entry.deliverAtMs !== undefined &&
      entry.deliverAtMs > nowMs;
    if (delayed) {
      append(position, { kind: 'released', dueAtMs: entry.deliverAtMs as number }, 0);
      continue;
    }
    if (
      type === 'Key_Shared' &&
      input.members &&
      !routesTo(input.members, consumer.consumerId, entry, head)
    ) {
      routedAtMs ??= Math.max(nowMs, head.routedAtMs ?? 0);
      append(position, { kind: 'released', dueAtMs: routedAtMs }, 0);
      continue;
    }
    append(position, held(), 1);
    deliveries.push({ position, redeliveryCount: 0, entry });
  }
  for (const run of runs) {
    if (run.state.kind === 'released') {
      trackerEntries.push({
        dueAtMs: run.state.dueAtMs,
        position: Position.of(run.ledgerId, run.entryId),
        deliveries: 0,
        n: run.n,
      });
    } else if (run.state.timeoutAtMs !== undefined) {
      trackerEntries.push({
        dueAtMs: run.state.timeoutAtMs,
        position: Position.of(run.ledgerId, run.entryId),
        deliveries: 1,
        n: run.n,
      });
    }
  }
  return {
    runs,
    deliveries,
    trackerEntries,
    ...(last ? { nextReadPosition: nextInLedger(last) } : {}),
    ...(routedAtMs !== undefined ? { routedAtMs } : {}),
  };
}
