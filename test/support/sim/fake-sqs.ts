import { NotFoundError } from '../../../shared/domain/errors.ts';
import type { DeliveryQueue, SubscriptionQueue } from '../../../shared/ports/delivery-queue.ts';

/** SQS's visibility timeout of a doorbell queue: a ring received and not deleted comes back after it. */
export const RING_VISIBILITY_MS = 30_000;
/** SQS's longest long poll. */
const MAX_WAIT_MS = 20_000;

/** How often each of SQS's misbehaviours happens, out of 1 (seeded: the same script, the same ones). */
export interface SqsOdds {
  /** A SendMessage whose message never arrives (a ring lost on the way). */
  readonly lose: number;
  /** A message delivered twice (SQS standard queues deliver at least once). */
  readonly duplicate: number;
  /** A receive that takes only some of the visible messages (SQS samples its servers; order is not kept). */
  readonly partial: number;
  /** A short poll (under a second) that answers nothing though messages are there. */
  readonly falseEmpty: number;
  /** A delete that does not happen (the receipt's visibility lapsed first): the ring comes back later. */
  readonly undeleted: number;
}

/** What the fake did, for the workload counters. */
export interface SqsTally {
  rings: number;
  lost: number;
  duplicated: number;
  partialReceives: number;
  falseEmpties: number;
  undeleted: number;
  longPollsWaited: number;
  emptyReceives: number;
}

interface Ring {
  visibleAtMs: number;
}

/** The time of one invocation: its clock, and how its waits move it. */
export interface InvocationTime {
  nowMs(): number;
  /** The invocation waited `ms` (a long poll): its clock moves on by that much. */
  wait(ms: number): void;
}

/**
 * Standard SQS queues as the doorbells meet them, on AWS's documented semantics: at-least-once
 * delivery (duplicates), no order, messages lost on the way (a ring is a hint; a lost SendMessage
 * is not retried by anyone), `DelaySeconds` in whole seconds (ringAt rounds up), a visibility
 * timeout (a ring received and not deleted comes back after RING_VISIBILITY_MS), short polls that
 * sample servers and may answer nothing, long polls of whole seconds up to 20 that end at the
 * first visible message. Time is each invocation's own (`InvocationTime`): a long poll moves the
 * waiting invocation's clock, not the others'. Seeded: `random` decides each misbehaviour.
 */
export class FakeSqs {
  private readonly queues = new Map<string, Ring[]>();
  readonly tally: SqsTally = {
    rings: 0,
    lost: 0,
    duplicated: 0,
    partialReceives: 0,
    falseEmpties: 0,
    undeleted: 0,
    longPollsWaited: 0,
    emptyReceives: 0,
  };

  constructor(
    private readonly odds: SqsOdds,
    private readonly random: () => number,
  ) {}

  /** The DeliveryQueue one invocation sees (its time). */
  portFor(time: () => InvocationTime): DeliveryQueue {
    return {
      maxDelaySeconds: 900,
      create: async (queue) => {
        if (!this.queues.has(queue.cursorId)) this.queues.set(queue.cursorId, []);
      },
      delete: async (queue) => {
        this.queues.delete(queue.cursorId);
      },
      deadLetterCount: async () => 0,
      ring: async (queue, delaySeconds) => this.ring(queue, delaySeconds, time().nowMs()),
      waitForRing: async (queue, waitMs) => this.waitForRing(queue, waitMs, time()),
      drainRings: async (queue) => this.take(queue, time().nowMs()),
    };
  }

  /** Rings waiting (visible or not) on `cursorId`'s queue. */
  waiting(cursorId: string): number {
    return this.queues.get(cursorId)?.length ?? 0;
  }

  private queueOf(queue: SubscriptionQueue): Ring[] {
    const rings = this.queues.get(queue.cursorId);
    if (!rings) throw new NotFoundError(`Queue of cursor ${queue.cursorId} not found`);
    return rings;
  }

  private chance(odds: number): boolean {
    return odds > 0 && this.random() < odds;
  }

  private ring(queue: SubscriptionQueue, delaySeconds: number, nowMs: number): void {
    const rings = this.queueOf(queue);
    this.tally.rings++;
    if (this.chance(this.odds.lose)) {
      this.tally.lost++;
      return;
    }
    const visibleAtMs = nowMs + delaySeconds * 1_000;
    rings.push({ visibleAtMs });
    if (this.chance(this.odds.duplicate)) {
      this.tally.duplicated++;
      rings.push({ visibleAtMs: visibleAtMs + Math.floor(this.random() * 3) * 1_000 });
    }
  }

  /** Receives what is visible (maybe only some), deletes it (maybe not all): how many it took. */
  private take(queue: SubscriptionQueue, nowMs: number): number {
    const rings = this.queueOf(queue);
    let visible = rings.filter((ring) => ring.visibleAtMs <= nowMs);
    if (visible.length > 1 && this.chance(this.odds.partial)) {
      this.tally.partialReceives++;
      visible = visible.slice(0, 1 + Math.floor(this.random() * (visible.length - 1)));
    }
    for (const ring of visible) {
      if (this.chance(this.odds.undeleted)) {
        // Received, not deleted: visible again once its visibility timeout lapses.
        this.tally.undeleted++;
        ring.visibleAtMs = nowMs + RING_VISIBILITY_MS;
        continue;
      }
      rings.splice(rings.indexOf(ring), 1);
    }
    return visible.length;
  }

  /** As SqsDeliveryQueue waits: whole seconds of long poll (floored); under a second, short poll, wait, short poll. */
  private waitForRing(queue: SubscriptionQueue, waitMs: number, time: InvocationTime): boolean {
    const rings = this.queueOf(queue);
    const waitSeconds = Math.min(MAX_WAIT_MS / 1_000, Math.max(0, Math.floor(waitMs / 1_000)));
    if (waitSeconds === 0) {
      if (this.shortPoll(queue, time.nowMs())) return true;
      if (waitMs <= 0) return false;
      time.wait(Math.min(waitMs, 1_000));
      return this.shortPoll(queue, time.nowMs());
    }
    const now = time.nowMs();
    if (this.take(queue, now) > 0) return true;
    // A long poll of whole seconds ends at the first message that becomes visible within it.
    const wait = waitSeconds * 1_000;
    const next = rings.map((ring) => ring.visibleAtMs).filter((at) => at <= now + wait);
    this.tally.longPollsWaited++;
    if (next.length === 0) {
      time.wait(wait);
      this.tally.emptyReceives++;
      return false;
    }
    time.wait(Math.min(...next) - now);
    return this.take(queue, time.nowMs()) > 0;
  }

  /** A short poll: it samples a subset of SQS's servers, and may miss what is there. */
  private shortPoll(queue: SubscriptionQueue, nowMs: number): boolean {
    if (this.chance(this.odds.falseEmpty)) {
      this.tally.falseEmpties++;
      return false;
    }
    const took = this.take(queue, nowMs) > 0;
    if (!took) this.tally.emptyReceives++;
    return took;
  }
}
