import { BoundedMap } from '../domain/bounded-map.ts';
import type { Clock } from '../ports/clock.ts';

/**
 * How long a caught-up mark is trusted. A ring wakes one receiver, which may be in another
 * container and may take only part of what is there, or nothing (a Key_Shared member whose keys
 * it is not): a short-polling consumer finds its messages within this long.
 */
export const CAUGHT_UP_TTL_MS = 5_000;

/**
 * Cursors whose last dispatch in this container found the subscription caught up (nothing written
 * past the read position, nothing due in the tracker, no replay): a receive on such a cursor with a
 * second or more to wait long-polls its doorbell (at least a second: an SQS short poll may miss a
 * ring that is there) before it reads the cursor, since every publish and timer rings; one with
 * less reads the cursor (see glossary.md#caught-up-mark). Trusted for CAUGHT_UP_TTL_MS; forgotten
 * by a dispatch that found more, a ring taken, a wait on several partitions, stale rings drained,
 * and a cursor reset made here.
 */
export class CaughtUpMarks {
  /** Cursor id -> until when the mark is trusted (epoch ms). */
  private readonly untilMs = new BoundedMap<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs = CAUGHT_UP_TTL_MS,
  ) {}

  has(cursorId: string): boolean {
    return this.remainingMs(cursorId) > 0;
  }

  /** How much longer the mark is trusted (0: no mark, or expired). */
  remainingMs(cursorId: string): number {
    const untilMs = this.untilMs.get(cursorId);
    return untilMs === undefined ? 0 : Math.max(0, untilMs - this.clock.nowMs());
  }

  mark(cursorId: string): void {
    this.untilMs.set(cursorId, this.clock.nowMs() + this.ttlMs);
  }

  forget(cursorId: string): void {
    this.untilMs.delete(cursorId);
  }
}

/**
 * Each cursor's unacknowledged entries per consumer, as this container counted them for the
 * dispatcher's per-consumer cap (engine/consumer-cap.ts), adjusted by what it handed out and saw
 * settled since. Counting reads the window's pages, so it is done only past a window of the cap,
 * and counted again only when older than the age the caller allows.
 */
export class UnackedCounts {
  private readonly counted = new BoundedMap<string, { counts: Map<string, number>; atMs: number }>();

  constructor(private readonly clock: Clock) {}

  /** The cursor's count, counted again (by `count`) when the remembered one is `maxAgeMs` old. */
  async recent(
    cursorId: string,
    maxAgeMs: number,
    count: () => Promise<ReadonlyMap<string, number>>,
  ): Promise<ReadonlyMap<string, number>> {
    const known = this.counted.get(cursorId);
    const now = this.clock.nowMs();
    if (known && now - known.atMs < maxAgeMs) return known.counts;
    const counts = new Map(await count());
    this.counted.set(cursorId, { counts, atMs: now });
    return counts;
  }

  /**
   * What this container handed out since it counted adds to the count; what it saw settled
   * (acknowledged or negatively acknowledged, a negative `count`) takes from it, never below 0.
   * Nothing when the cursor was not counted here.
   */
  add(cursorId: string, consumerId: string, count: number): void {
    const known = this.counted.get(cursorId);
    if (known && count !== 0) {
      known.counts.set(consumerId, Math.max(0, (known.counts.get(consumerId) ?? 0) + count));
    }
  }
}

/**
 * What one container (a Lambda execution environment, a process of the embedded stack) notes
 * between calls to spare itself requests: hints, never the truth. Losing any of them (a cold
 * start, an eviction past 10,000 entries) costs a request, never a wrong answer; another
 * container has its own. Built once per container in the composition root and reached by the use
 * cases as `ports.hints`; two UseCasePorts with two ContainerHints over the same stores are two
 * containers. In memory only. The caches of what the stores hold are decorators around the ports
 * (CachingTopicCatalog, CachingConsumerRegistry, CachingLedger); see
 * docs/design/delivery-engine.md#per-container-state.
 */
export class ContainerHints {
  /**
   * When this container last renewed each consumer's lease or Key_Shared membership (consumer id
   * -> epoch ms): a renewal is written again only a quarter lease later (consumer-session.ts).
   * Forgotten when the consumer is closed or removed here.
   */
  readonly renewals = new BoundedMap<string, number>();
  /**
   * When this container last marked each cursor's subscription in the activity index (cursor id
   * -> epoch ms): at most once per MARK_EVERY_MS (maintenance/activity.ts). Never forgotten: a
   * mark left out comes at most MARK_EVERY_MS after the last, and maintenance keeps any entry
   * marked that recently.
   */
  readonly activityMarks = new BoundedMap<string, number>();
  /**
   * Whether deduplication is on for a topic (partitioned name -> the answer and when it was read):
   * trusted for DEDUPLICATION_POLICY_TTL_MS (producers/deduplication.ts), so a named producer's
   * publish reads the policies once per topic and 5 s, not twice per publish. A policy change
   * reaches publishers within that long, as Pulsar's policies reach brokers asynchronously.
   */
  readonly deduplication = new BoundedMap<string, { readonly enabled: boolean; readonly atMs: number }>();
  readonly caughtUp: CaughtUpMarks;
  readonly unacked: UnackedCounts;

  constructor(clock: Clock) {
    this.caughtUp = new CaughtUpMarks(clock);
    this.unacked = new UnackedCounts(clock);
  }
}
