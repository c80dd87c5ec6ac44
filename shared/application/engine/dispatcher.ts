import { runCovers } from '../../domain/delivery-run.ts';
import type { DispatchHead } from '../../domain/dispatch-head.ts';
import { DeadLetterRefusedError, NotFoundError } from '../../domain/errors.ts';
import { ConsumerFencedError, decideOwnership, type Ownership } from '../../domain/ownership.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { HeadRecord, TrackerEntry } from '../../ports/dispatch-store.ts';
import { type ByteBudget, budgetLeft } from './byte-budget.ts';
import { consumerRoom } from './consumer-cap.ts';
import {
  bytesOf,
  type Delivery,
  type DispatchConsumer,
  type EngineContext,
  type KeySharedMember,
  MAX_DISPATCH,
  type PartitionCursor,
} from './engine-context.ts';
import { type ClaimOutcome, claimFirstDeliveries } from './first-deliveries.ts';
import { joinPending } from './key-shared-routing.ts';
import { type MineLeft, pickUpDue } from './redelivery-tracker.ts';
import { replayStep } from './replay.ts';

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
       * The ack-timeout tracker entries of what was handed out after which the consumer's next
       * delivery would pass its maxRedeliverCount: for the caller to have the server dead-letter
       * them when due (a dead-letter timer), whether or not the consumer polls again.
       */
      readonly deadLetterTimers: readonly TrackerEntry[];
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
      /**
       * The answer's byte budget could not carry the next delivery: this call stopped before it
       * (it stays where it was, for the next receive).
       */
      readonly full: boolean;
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
  /**
   * What the answer can carry, in bytes: the call hands out deliveries, in order, only while the
   * next one fits, and stops before the first that does not (nothing is recorded as held that the
   * answer cannot carry). None: no limit.
   */
  readonly budget?: ByteBudget;
}

/**
 * Pulsar's dispatcher for one receive on one partition: due redeliveries first (the redelivery
 * tracker), then an Exclusive/Failover rewind's replay, then first deliveries from the read
 * position. Everything handed out is recorded as held by the consumer, in the same single-item
 * compare-and-set that moves the read position, before it is returned: a crash between two
 * requests loses nothing (I2) and counts exactly (I4). Each step stops at `max` and before the
 * first delivery the request's byte budget cannot carry.
 * Cost (first deliveries, nothing contended): the head (1 eventually consistent read, half a unit;
 * a strong one more when it finds nothing to do), the entries from the read position (1 Query,
 * none when this process has them), the claim (1 write); plus, rarely, a spill, the layout when nothing is
 * at the read position, the pages when an ack by id raced ahead of dispatch.
 * @throws NotFoundError when the cursor is gone; ConsumerFencedError (I6).
 */
export async function dispatch(ctx: EngineContext, request: DispatchRequest): Promise<DispatchResult> {
  return new DispatchCall(ctx, request).run();
}

/** What one attempt of a dispatch call concluded: try again, stop with what it has, or an answer. */
type AttemptOutcome = 'retry' | 'done' | { readonly kind: 'blocked' } | { readonly kind: 'standby' };

/** One dispatch call's state across its attempts: the head it works on and what it handed out. */
class DispatchCall {
  private record: HeadRecord | undefined;
  /** The head was read strongly (or written) by this call. */
  private fresh = false;
  private readonly delivered: Delivery[] = [];
  /** Deliveries not made by a claim (tracker pickups, replays): counted beside the head. */
  private readonly outside: Delivery[] = [];
  private readonly timers: number[] = [];
  private readonly deadLetterTimers: TrackerEntry[] = [];
  private atEnd = false;
  private contended = false;
  /** A step stopped at a delivery the byte budget could not carry. */
  private full = false;
  private readonly max: number;

  constructor(
    private readonly ctx: EngineContext,
    private readonly request: DispatchRequest,
  ) {
    this.max = Math.min(MAX_DISPATCH, Math.max(1, Math.floor(request.max)));
  }

  private get cursor(): PartitionCursor {
    return this.request.cursor;
  }

  /** What the answer can still carry after what this call handed out (none: no limit). */
  private budgetLeft(): { budget?: ByteBudget } {
    const left = budgetLeft(this.request.budget, this.delivered);
    return left ? { budget: left } : {};
  }

  async run(): Promise<DispatchResult> {
    const { ctx, cursor } = this;
    // An eventually consistent read (half a read unit): an earlier head only makes the claim's
    // compare-and-set fail, and that failure answers the current head. A step that would end with
    // nothing done on such a head (nothing to read, window full, standby, deleted) reads it again,
    // strongly, before it concludes: a ring it consumed must not be wasted on an old view.
    this.record = await ctx.store.readHead(cursor.cursorId, { consistent: false });
    if (!this.record) await this.readFresh();
    for (let attempt = 0; attempt <= ctx.limits.casAttempts && this.record; attempt++) {
      if (attempt === ctx.limits.casAttempts) {
        // Out of attempts: one more only when nothing was done and the head was never fresh.
        if (this.delivered.length > 0 || this.fresh) break;
        await this.readFresh();
        if (!this.record) break;
      }
      const outcome = await this.attempt(this.record, attempt);
      if (outcome === 'retry') continue;
      if (outcome === 'done') break;
      return outcome;
    }
    return this.finish();
  }

  private async attempt(record: HeadRecord, attempt: number): Promise<AttemptOutcome> {
    const room = await this.capRoom(record);
    if (room <= 0) return this.delivered.length > 0 ? 'done' : { kind: 'blocked' };
    const limit = Math.min(this.max, this.delivered.length + room);
    const now = this.ctx.clock.nowMs();
    let ownerChanges: Partial<DispatchHead> = {};
    if (isCumulativeAckType(this.cursor.type)) {
      const owned = await this.ownership(record, now);
      if (owned.kind === 'outcome') return owned.outcome;
      ownerChanges = owned.changes;
    }
    // Key_Shared: a member is joining that this receive's member list does not have yet (read
    // before it registered): handing out now could give its keys to others after its join mark.
    // Not a race another consumer won (not `contended`): the subscribe rings the doorbell once it
    // has registered the member (subscribeConsumer), so the receive waits for that ring.
    if (this.cursor.type === 'Key_Shared' && joinPending(record.head, this.request.members, now)) {
      return 'done';
    }
    // During an Exclusive/Failover replay the tracker waits: the replay hands out, in order,
    // whatever the tracker would (held runs, released ones when due) before anything else.
    const replaying = record.head.replayFrom !== undefined && isCumulativeAckType(this.cursor.type);
    if (!replaying && record.head.trackerDueAtMs !== undefined && record.head.trackerDueAtMs <= now) {
      const picked = await this.pickUpDue(record, limit, now);
      if (picked !== 'go on') return picked;
    }
    const current = this.record;
    if (!current) return 'done';
    if (current.head.replayFrom && isCumulativeAckType(this.cursor.type)) return this.replay(current, limit);
    // Key_Shared: entries routed at a time still ahead of this clock (another container's) are not
    // due to this pickup yet; a first delivery now could overtake them.
    if (this.cursor.type === 'Key_Shared' && (current.head.routedAtMs ?? 0) > now) {
      return this.waitForTracker('raced');
    }
    return this.claim({ record: current, limit, ownerChanges, attempt });
  }

  /**
   * Exclusive/Failover: whether this consumer owns the partition now (with the lease renewal to
   * write with its claim), or what the attempt concludes (a takeover written, standby, refused).
   */
  private async ownership(
    record: HeadRecord,
    now: number,
  ): Promise<
    | { readonly kind: 'owner'; readonly changes: Partial<DispatchHead> }
    | { readonly kind: 'outcome'; readonly outcome: AttemptOutcome }
  > {
    let ownership: Ownership;
    try {
      ownership = decideOwnership(record.head, this.request.consumer, this.cursor.type, now);
    } catch (error) {
      // A refusal only on the current head: an old one may name the owner this consumer
      // replaced a moment ago (a 409 to the subscription's new Exclusive owner).
      if (error instanceof ConsumerFencedError && !this.fresh) {
        await this.readFresh();
        return { kind: 'outcome', outcome: 'retry' };
      }
      throw error;
    }
    if (ownership.kind === 'standby') {
      const standby = this.fresh || (await this.confirm());
      return { kind: 'outcome', outcome: standby ? { kind: 'standby' } : 'retry' };
    }
    if (ownership.kind === 'takeover') {
      const taken = await this.ctx.store.casHead(this.cursor.cursorId, record.version, ownership.head);
      this.record = taken.ok
        ? { ...record, head: ownership.head, version: record.version + 1 }
        : taken.current;
      this.fresh = true;
      return { kind: 'outcome', outcome: 'retry' };
    }
    return { kind: 'owner', changes: ownership.renewal ?? {} };
  }

  /**
   * Due redeliveries from the tracker; 'done' when the call stops with what it has, 'retry' when
   * the pickup ended on a head it read anew.
   */
  private async pickUpDue(
    record: HeadRecord,
    limit: number,
    now: number,
  ): Promise<'done' | 'retry' | 'go on'> {
    let picked: Awaited<ReturnType<typeof pickUpDue>>;
    try {
      picked = await pickUpDue(this.ctx, {
        cursor: this.cursor,
        consumer: this.request.consumer,
        record,
        max: limit - this.delivered.length,
        ...(this.request.members ? { members: this.request.members } : {}),
        ...this.budgetLeft(),
      });
    } catch (error) {
      // A refused dead letter after a lost race: what an earlier attempt took is held, return it
      // (with a timer, so the next receive looks again and answers the refusal).
      if (error instanceof DeadLetterRefusedError && this.delivered.length > 0) {
        this.timers.push(now);
        return 'done';
      }
      throw error;
    }
    this.delivered.push(...picked.deliveries);
    this.outside.push(...picked.deliveries);
    this.timers.push(...picked.timers);
    this.deadLetterTimers.push(...picked.deadLetterTimers);
    this.record = picked.record;
    if (picked.full) this.full = true;
    if (!this.record || this.full || this.delivered.length >= limit) return 'done';
    if (picked.reread) {
      // The pickup ended on a newer head (a strong read, a lost compare-and-set's answer), which
      // the claim would write on: judge the consumer's room on it first (a room judged on an
      // eventually consistent head versions behind let a consumer pass its cap).
      this.fresh = true;
      return 'retry';
    }
    if (picked.mineLeft === 'raced' && this.delivered.length === 0 && !(await this.confirm())) {
      return 'retry'; // a race the pickup lost: look again on the current head
    }
    if (picked.mineLeft) return this.waitForTracker(picked.mineLeft);
    return 'go on';
  }

  /**
   * Key_Shared: an entry due for this member stayed in the tracker (or may have: see
   * PickUpResult.mineLeft), so no first delivery now: a later message of its key would overtake it
   * (I3). The call ends with what it has. With nothing after a race, as after a lost claim
   * (`contended`), the receive looks again in a moment; when its entries lie past what a pickup
   * reads (other members' due entries in front), it waits for a ring (a publish, a timer,
   * maintenance), so an event-driven consumer does not invoke itself again and again meanwhile.
   */
  private waitForTracker(why: MineLeft): 'done' {
    if (this.delivered.length === 0 && why === 'raced') this.contended = true;
    return 'done';
  }

  /** An Exclusive/Failover rewind's replay, in order. */
  private async replay(record: HeadRecord, limit: number): Promise<AttemptOutcome> {
    const replayed = await replayStep(this.ctx, {
      cursor: this.cursor,
      consumer: this.request.consumer,
      record,
      max: limit - this.delivered.length,
      ...this.budgetLeft(),
    });
    this.delivered.push(...replayed.deliveries);
    this.outside.push(...replayed.deliveries);
    this.timers.push(...replayed.timers);
    if (replayed.kind === 'replayed') this.deadLetterTimers.push(...(replayed.deadLetterTimers ?? []));
    if (replayed.kind === 'conflict') {
      this.record = replayed.current;
      this.fresh = true;
      return 'retry';
    }
    if (replayed.full) this.full = true;
    if (this.delivered.length === 0 && !this.full && !this.fresh && !(await this.confirm())) return 'retry';
    return 'done';
  }

  /** First deliveries from the read position. */
  private async claim(input: {
    readonly record: HeadRecord;
    readonly limit: number;
    readonly ownerChanges: Partial<DispatchHead>;
    readonly attempt: number;
  }): Promise<AttemptOutcome> {
    const { cursor, request } = this;
    const claimed = await claimFirstDeliveries(this.ctx, {
      cursor,
      consumer: request.consumer,
      record: input.record,
      max: input.limit - this.delivered.length,
      ownerChanges: input.ownerChanges,
      ...(request.members ? { members: request.members } : {}),
      ...this.budgetLeft(),
    });
    if (claimed.kind === 'conflict') {
      this.record = claimed.current;
      this.fresh = true;
      if (
        this.delivered.length === 0 &&
        giveUpAfterLostClaim(cursor, request.consumer, claimed, this.record)
      ) {
        this.contended = true;
        return 'done';
      }
      await this.ctx.pauseAfterConflict?.(input.attempt);
      return 'retry';
    }
    this.delivered.push(...claimed.deliveries);
    this.timers.push(...claimed.timers);
    if (claimed.full) this.full = true;
    if (this.delivered.length === 0 && !this.full && !this.fresh && !(await this.confirm())) return 'retry';
    this.atEnd = claimed.atEnd && this.delivered.length === 0;
    return 'done';
  }

  private async finish(): Promise<DispatchResult> {
    const { ctx, cursor, delivered } = this;
    if (!this.record && delivered.length === 0) {
      throw new NotFoundError(
        `The subscription of cursor ${cursor.cursorId} on ${cursor.partition.toString()} was deleted`,
      );
    }
    await countOutside(ctx, cursor, this.outside);
    ctx.handedTo?.(cursor, this.request.consumer.consumerId, delivered.length);
    const head = this.record?.head;
    const caughtUp =
      this.atEnd &&
      head !== undefined &&
      head.replayFrom === undefined &&
      (head.trackerDueAtMs === undefined || head.trackerDueAtMs > ctx.clock.nowMs());
    return {
      kind: 'delivered',
      deliveries: delivered,
      timers: this.timers,
      deadLetterTimers: this.deadLetterTimers,
      caughtUp,
      contended: this.contended,
      full: this.full,
    };
  }

  private async readFresh(): Promise<void> {
    this.record = await this.ctx.store.readHead(this.cursor.cursorId);
    this.fresh = true;
  }

  /** Reads the head strongly; true when the head read before was already the current one. */
  private async confirm(): Promise<boolean> {
    const seen = this.record?.version;
    await this.readFresh();
    return this.record !== undefined && this.record.version === seen;
  }

  /**
   * Shared/Key_Shared: how many more this call may hand out within the consumer's cap, judged on
   * the head it is about to write on (an eventually consistent head may be versions behind: its
   * shorter window let a consumer pass its cap several times over). What this call handed out
   * already counts against it.
   */
  private async capRoom(current: HeadRecord): Promise<number> {
    if (isCumulativeAckType(this.cursor.type)) return Number.POSITIVE_INFINITY;
    const { consumerId } = this.request.consumer;
    const want = this.max - this.delivered.length;
    return (
      (await consumerRoom(this.ctx, this.cursor, { head: current.head, consumerId, wanted: want })) -
      this.delivered.length
    );
  }
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
