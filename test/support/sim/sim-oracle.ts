import { heldAgainstCap } from '../../../shared/application/engine/consumer-cap.ts';
import type {
  Delivery,
  EngineContext,
  PartitionCursor,
} from '../../../shared/application/engine/engine-context.ts';
import {
  isAcknowledged,
  locateRun,
  readPagesOf,
  runPagesOf,
} from '../../../shared/application/engine/pending-state.ts';
import { pendingSummary } from '../../../shared/application/engine/pending-summary.ts';
import type { DispatchHead } from '../../../shared/domain/dispatch-head.ts';
import { Position } from '../../../shared/domain/position.ts';
import type { DispatchStore } from '../../../shared/ports/dispatch-store.ts';
import type { Ledger } from '../../../shared/ports/ledger.ts';
import type { ManualClock } from '../manual-clock.ts';
import type { SimCounters } from './sim-counters.ts';
import { SimDeadLetters } from './sim-dead-letters.ts';
import { ACK_TIMEOUT_MS, type Mutation, type SimScript } from './sim-script.ts';

/**
 * The simulation's oracle: the clients' view of what happened (what was published, delivered to
 * whom with which count, acknowledged when, reset, nacked), and the checks of I1 to I7 and the
 * dead-letter rules against it, made as each delivery comes and once the subscription drained.
 * The drivers (delivery-simulation.ts) record into it and ask it to check.
 */

export class Violation extends Error {}

export function fail(invariant: string, detail: string): never {
  throw new Violation(`${invariant}: ${detail}`);
}

export interface Observed {
  readonly consumer: string;
  readonly position: string;
  readonly redeliveryCount: number;
  readonly atMs: number;
  readonly startSeq: number;
  readonly key: string | undefined;
}

/** A consumer as its client sees it. */
export interface ClientConsumer {
  id: string;
  generation: number;
  state: 'open' | 'closing' | 'gone';
  held: Delivery[];
  lastCallMs: number;
  joinedAfter?: Position;
  /** A receive of this consumer lost its answer: an ordered consumer rewinds before going on. */
  mustRewind: boolean;
  /** The second release pass after its close ran. */
  releasedAgain?: boolean;
}

/**
 * A reset started: entries from `to` on are unacknowledged again and handed out as first
 * deliveries (count 0, in order). `doneSeq` is undefined while it may still apply (it runs, or it
 * died and the round is not over).
 */
export interface ResetMark {
  readonly to: Position;
  readonly startSeq: number;
  doneSeq?: number;
}

/** A receive of this round, with how many entries it took from spilled pages into its consumer's count. */
export interface PageTakes {
  readonly consumer: string;
  fromPages: number;
}

export interface PublishedEntry {
  readonly position: Position;
  readonly key: string;
  readonly deliverAtMs?: number;
}

/** What the oracle reads the truth from (strongly consistent, outside any schedule). */
export interface OracleWorld {
  readonly script: SimScript;
  readonly clock: ManualClock;
  readonly store: DispatchStore;
  readonly ledger: Ledger;
  readonly cursor: PartitionCursor;
  readonly limits: EngineContext['limits'];
  readonly consumers: ClientConsumer[];
  readonly counters: SimCounters;
  readonly mutation: Mutation | undefined;
}

/** A delivery's call: when it started (seq and clock). */
export interface CallStart {
  readonly startSeq: number;
  readonly now: number;
}

export class SimOracle {
  readonly published: PublishedEntry[] = [];
  /** position -> seq at which an ack call returned */
  readonly acked = new Map<string, number>();
  readonly adminAcked = new Set<string>();
  /** Admin acks started (one that died may still have applied). */
  readonly adminAttempted = new Set<string>();
  readonly observed: Observed[] = [];
  /** Resets started. */
  readonly resets: ResetMark[] = [];
  /** position -> earliest next delivery */
  readonly nackGuards = new Map<string, number>();
  /**
   * This round's receives (a round's calls all run at the same time), each with how many entries
   * it took from spilled pages into its consumer's count (I7's allowance, see the receive's check).
   */
  readonly receivesThisRound: PageTakes[] = [];
  readonly owners: string[] = [];
  /** Whether redelivery counts are still checked exactly (no receive died with its claim applied). */
  exactCounts = true;
  /** The dead letters the consumers publish (one policy for all), checked as they come. */
  readonly deadLetters: SimDeadLetters;
  private seq = 0;

  constructor(private readonly world: OracleWorld) {
    this.deadLetters = new SimDeadLetters(world.script.deadLetter, fail);
  }

  /** Exclusive or Failover: one consumer at a time, in order. */
  get ordered(): boolean {
    return this.world.script.type === 'Exclusive' || this.world.script.type === 'Failover';
  }

  /** Shared or Key_Shared: consumers side by side. */
  get shared(): boolean {
    return this.world.script.type === 'Shared' || this.world.script.type === 'Key_Shared';
  }

  /** The seq of the last call that started or returned. */
  get seqNow(): number {
    return this.seq;
  }

  /** A call starts or returns: the next seq. */
  done(): number {
    this.seq++;
    return this.seq;
  }

  /** A reset of `position` that may be applying now, or that overlapped a call started at `since`. */
  resetOverlaps(position: Position, since: number): boolean {
    return this.resets.some(
      (r) => r.to.compareTo(position) <= 0 && (r.doneSeq === undefined || r.doneSeq > since),
    );
  }

  /** The last seq a finished reset of `position` ended at (counts and first-delivery order restart). */
  resetBarrier(position: Position): number {
    return this.resets.reduce(
      (barrier, r) => (r.to.compareTo(position) <= 0 ? Math.max(barrier, r.doneSeq ?? Infinity) : barrier),
      -1,
    );
  }

  /** Records an acknowledgement that returned at `at`, unless a reset may have cleared it. */
  recordAck(position: Position, startSeq: number, at: number): void {
    const key = position.toString();
    if (this.resetOverlaps(position, startSeq)) return;
    if (!this.acked.has(key)) this.acked.set(key, at);
  }

  finishReset(reset: ResetMark, at: number): void {
    reset.doneSeq = at;
    this.deadLetters.replayFrom(reset.to);
    for (const key of [...this.acked.keys()]) {
      if (reset.to.compareTo(positionOfText(key)) <= 0) this.acked.delete(key);
    }
  }

  /** Checks one delivery of a receive of `c` (I1, I3's keys, I4, I5) and records it. */
  observeDelivery(c: ClientConsumer, delivery: Delivery, { startSeq, now }: CallStart): void {
    const position = delivery.position.toString();
    const ackSeq = this.acked.get(position);
    if (ackSeq !== undefined && ackSeq < startSeq && !this.resetOverlaps(delivery.position, ackSeq)) {
      fail(
        'I1',
        `${position} was acknowledged (seq ${ackSeq}) before the receive of ${c.id} started (seq ${startSeq})`,
      );
    }
    const guard = this.nackGuards.get(position);
    if (guard !== undefined && delivery.redeliveryCount > 0 && now < guard) {
      fail('I5', `${position} redelivered at ${now}, before its nack backoff ended at ${guard}`);
    }
    const meta = this.published.find((p) => p.position.toString() === position);
    if (meta?.deliverAtMs !== undefined && now < meta.deliverAtMs && this.shared) {
      fail('I5', `${position} delivered at ${now}, before its deliverAt ${meta.deliverAtMs}`);
    }
    this.checkRedeliveryCount(delivery, startSeq);
    this.countDelivery(delivery, now);
    if (this.world.script.type === 'Key_Shared' && meta) {
      const holder = this.world.consumers.find(
        (other) =>
          other !== c && other.state === 'open' && other.held.some((h) => (h.entry.key ?? '') === meta.key),
      );
      if (holder) fail('I3', `key ${meta.key} handed to ${c.id} while ${holder.id} holds it`);
    }
    this.observed.push({
      consumer: c.id,
      position,
      redeliveryCount: delivery.redeliveryCount,
      atMs: now,
      startSeq,
      key: meta?.key,
    });
    c.held.push(delivery);
  }

  /** A delivery in the counters: a count of 2 or more, an ack timeout that fired. */
  countDelivery(delivery: Delivery, now: number): void {
    const position = delivery.position.toString();
    if (delivery.redeliveryCount >= 2) this.world.counters.redeliveredTwice++;
    if (!this.world.script.ackTimeout || delivery.redeliveryCount === 0) return;
    const last = this.observed.findLast((o) => o.position === position);
    const holder = last && this.world.consumers.find((other) => other.id === last.consumer);
    const stillHeld = holder?.held.some((h) => h.position.toString() === position);
    if (last && stillHeld && now - last.atMs >= ACK_TIMEOUT_MS) this.world.counters.ackTimeoutsFired++;
  }

  /** I4: a delivery's count grows with each delivery since the last reset of it (exactly, while counts are). */
  checkRedeliveryCount(delivery: Delivery, startSeq: number): void {
    const position = delivery.position.toString();
    const barrier = this.resetBarrier(delivery.position);
    const earlier = this.observed.filter((o) => o.position === position && o.startSeq > barrier);
    const last = earlier[earlier.length - 1];
    // A receive that overlapped a reset of this entry may have handed it out on either side of it.
    if (last && startSeq > barrier && delivery.redeliveryCount <= last.redeliveryCount) {
      fail(
        'I4',
        `${position} delivered with count ${delivery.redeliveryCount} after an earlier delivery with count ${last.redeliveryCount}`,
      );
    }
    if (this.exactCounts && delivery.redeliveryCount !== earlier.length) {
      fail(
        'I4',
        `${position} delivered with count ${delivery.redeliveryCount} after ${earlier.length} earlier deliveries`,
      );
    }
  }

  /**
   * I7: a consumer holds at most its cap (what is past its ack timeout does not count). With other
   * receives of it running alongside, also what they and this one took from spilled pages: a page's
   * write is not conditioned on the head each receive judged its room on, so a take there and a
   * claim elsewhere may both count on the same room.
   */
  async checkConsumerCap(c: ClientConsumer): Promise<void> {
    const direct: EngineContext = {
      store: this.world.store,
      ledger: this.world.ledger,
      clock: this.world.clock,
      limits: this.world.limits,
    };
    const holds = heldAgainstCap(await pendingSummary(direct, this.world.cursor)).get(c.id) ?? 0;
    const alongside = this.receivesThisRound.filter((other) => other.consumer === c.id);
    const fromPages = alongside.length > 1 ? alongside.reduce((sum, other) => sum + other.fromPages, 0) : 0;
    if (holds > this.world.script.maxUnackedPerConsumer + fromPages) {
      fail(
        'I7',
        `${c.id} holds ${holds} entries, past its cap of ${this.world.script.maxUnackedPerConsumer}` +
          (fromPages > 0 ? ` and the ${fromPages} its receives running alongside took from pages` : ''),
      );
    }
  }

  /** No delivery on Shared/Key_Shared passes the dead-letter policy's maxRedeliverCount. */
  checkDeadLetterCount(delivery: Delivery): void {
    const { deadLetter } = this.world.script;
    if (deadLetter === undefined || !this.shared) return;
    if (delivery.redeliveryCount > deadLetter) {
      fail(
        'DL',
        `${delivery.position.toString()} delivered with count ${delivery.redeliveryCount}, past maxRedeliverCount ${deadLetter}`,
      );
    }
  }

  /** I3, Key_Shared: a first delivery never overtakes an earlier message of its key (see waitingBefore). */
  async checkKeyOrder(delivery: Delivery, consumerId: string): Promise<void> {
    const waiting = await waitingBefore(this.world.store, this.world.cursor, this.published, delivery);
    if (waiting) {
      fail(
        'I3',
        `${delivery.position.toString()} (key ${delivery.entry.key}) handed to ${consumerId} while ${waiting.toString()} waits for its first delivery`,
      );
    }
  }

  /** I6: only the latest owner receives; I3: first deliveries come in order. */
  checkOrderedDeliveries(c: ClientConsumer, delivered: boolean): void {
    if (delivered) {
      const previous = this.owners.indexOf(c.id);
      if (previous !== -1 && previous !== this.owners.length - 1) {
        fail('I6', `${c.id} received after ${this.owners[this.owners.length - 1]} took over`);
      }
      if (previous === -1) this.owners.push(c.id);
    }
    const firsts = this.observed
      .filter((o) => o.redeliveryCount === 0 && o.startSeq > this.resetBarrier(positionOfText(o.position)))
      .map((o) => o.position);
    const ordered = [...firsts].sort((a, b) => comparePositionText(a, b));
    if (firsts.join() !== ordered.join()) fail('I3', `first deliveries out of order: ${firsts.join(' ')}`);
  }

  /** I2, once the faults stopped and the subscription drained (on `head`): everything is acknowledged, and rightly. */
  checkDrained(head: DispatchHead | undefined): void {
    for (const p of this.published) {
      const key = p.position.toString();
      if (!head || head.markDelete.compareTo(p.position) < 0) {
        fail(
          'I2',
          `${key} is still unacknowledged after the faults stopped (mark-delete ${head?.markDelete.toString()})`,
        );
      }
      if (
        !this.adminAttempted.has(key) &&
        !this.observed.some((o) => o.position === key) &&
        !this.deadLetters.has(key)
      ) {
        fail('I2', `${key} was acknowledged without ever being delivered or acknowledged by the admin`);
      }
    }
    // An id allocated and never written at the very end holds back only mark-delete until an entry
    // is written after it (then it is acknowledged once that entry is abandonedIdMs old).
    const last = this.published
      .map((p) => p.position)
      .sort((a, b) => a.compareTo(b))
      .pop();
    if (last && head && head.markDelete.compareTo(last) < 0) {
      fail(
        'I2',
        `mark-delete stopped at ${head.markDelete.toString()} before the last entry ${last.toString()} (an unwritten id holds it back)`,
      );
    }
  }
}

export function positionOfText(text: string): Position {
  return Position.parseStored(text);
}

export function comparePositionText(a: string, b: string): number {
  const [la, ea] = a.split(':').map(BigInt) as [bigint, bigint];
  const [lb, eb] = b.split(':').map(BigInt) as [bigint, bigint];
  return la !== lb ? (la < lb ? -1 : 1) : ea < eb ? -1 : ea > eb ? 1 : 0;
}

/**
 * An earlier message of `delivery`'s key (not delayed) that still waits in the tracker for its
 * first delivery (a released run never handed out), read from the store as it is now.
 */
async function waitingBefore(
  store: DispatchStore,
  cursor: PartitionCursor,
  published: readonly { position: Position; key: string; deliverAtMs?: number }[],
  delivery: Delivery,
): Promise<Position | undefined> {
  const record = await store.readHead(cursor.cursorId);
  const key = delivery.entry.key;
  if (!record || key === undefined) return undefined;
  const earlier = published.filter(
    (p) => p.key === key && p.deliverAtMs === undefined && p.position.compareTo(delivery.position) < 0,
  );
  const pages = await readPagesOf(
    store,
    cursor.cursorId,
    earlier.flatMap((p) => runPagesOf(p.position)),
  );
  return earlier.find((p) => {
    if (isAcknowledged(record.head, pages, p.position)) return false;
    const run = locateRun(record.head, pages, p.position)?.run;
    return run?.state.kind === 'released' && run.deliveries === 0;
  })?.position;
}
