/**
 * A cumulative counter (messages and bytes) that can answer a rate without a write per message:
 * the writer that bumps it anyway (a publish's id allocation, a claim's head write, a redelivery's
 * counter) also keeps a snapshot of it, renewed by the first bump of every RATE_SNAPSHOT_MS, and
 * the one before. A rate is the counter's growth since a snapshot at least MIN_RATE_WINDOW_MS old,
 * divided by that time: a window of 10 to 120 s while it is bumped every minute; after an idle
 * spell, the window reaches back to the last snapshot (the growth since is what was bumped since,
 * so an idle counter's rate falls towards 0).
 * Pulsar's rates are over its stats interval (statsUpdateFrequencyInSecs, 60 s); these are over a
 * window of the same order, stated with every answer.
 */
export interface RateSnapshot {
  readonly atMs: number;
  readonly count: number;
  readonly bytes: number;
}

export interface RateCounter {
  readonly count: number;
  readonly bytes: number;
  /** The time of the last bump. */
  readonly lastAtMs: number;
  /** The counter as it was at the first bump of the current period (before that bump). */
  readonly snapshot: RateSnapshot;
  /** The snapshot before. */
  readonly previous?: RateSnapshot;
}

/** A snapshot is renewed by the first bump at least this long after it. */
export const RATE_SNAPSHOT_MS = 60_000;
/** A rate is never taken over less than this (a snapshot younger than it gives way to the one before). */
export const MIN_RATE_WINDOW_MS = 10_000;

/** Whether a bump at `nowMs` renews the snapshot (it is missing or RATE_SNAPSHOT_MS old). */
export function snapshotDue(counter: RateCounter | undefined, nowMs: number): boolean {
  return counter === undefined || nowMs - counter.snapshot.atMs >= RATE_SNAPSHOT_MS;
}

/** The counter after `count` messages of `bytes` bytes at `nowMs` (pure). */
export function bump(
  counter: RateCounter | undefined,
  count: number,
  bytes: number,
  nowMs: number,
): RateCounter {
  const base = counter ?? {
    count: 0,
    bytes: 0,
    lastAtMs: nowMs,
    snapshot: { atMs: nowMs, count: 0, bytes: 0 },
  };
  const renewed = snapshotDue(counter, nowMs);
  return {
    count: base.count + count,
    bytes: base.bytes + bytes,
    lastAtMs: Math.max(base.lastAtMs, nowMs),
    snapshot: renewed ? { atMs: nowMs, count: base.count, bytes: base.bytes } : base.snapshot,
    ...(renewed
      ? counter
        ? { previous: counter.snapshot }
        : {}
      : base.previous
        ? { previous: base.previous }
        : {}),
  };
}

/** A measured rate: messages and bytes per second over the window that ends now. */
export interface MeasuredRate {
  readonly perSecond: number;
  readonly bytesPerSecond: number;
  readonly windowMs: number;
}

/**
 * The counter's rate at `nowMs` over the window since its snapshot (or the one before, when the
 * snapshot is younger than MIN_RATE_WINDOW_MS). A counter younger than that (no snapshot before)
 * is taken over MIN_RATE_WINDOW_MS all the same: 100 messages published 5 ms ago are 10 msg/s,
 * not 20,000. Undefined for no counter.
 */
export function rateOf(counter: RateCounter | undefined, nowMs: number): MeasuredRate | undefined {
  if (!counter) return undefined;
  const base =
    nowMs - counter.snapshot.atMs < MIN_RATE_WINDOW_MS && counter.previous
      ? counter.previous
      : counter.snapshot;
  const windowMs = Math.max(nowMs - base.atMs, MIN_RATE_WINDOW_MS);
  return {
    perSecond: ((counter.count - base.count) * 1_000) / windowMs,
    bytesPerSecond: ((counter.bytes - base.bytes) * 1_000) / windowMs,
    windowMs,
  };
}

/** Compact form for storage: `[count, bytes, lastAt, snapAt, snapCount, snapBytes(, prevAt, prevCount, prevBytes)]`. */
export function encodeRateCounter(counter: RateCounter): number[] {
  const { snapshot: s, previous: p } = counter;
  return [
    counter.count,
    counter.bytes,
    counter.lastAtMs,
    s.atMs,
    s.count,
    s.bytes,
    ...(p ? [p.atMs, p.count, p.bytes] : []),
  ];
}

export function decodeRateCounter(encoded: readonly number[] | undefined): RateCounter | undefined {
  if (!encoded || encoded.length < 6) return undefined;
  const [count, bytes, lastAtMs, atMs, snapCount, snapBytes, prevAt, prevCount, prevBytes] = encoded as [
    number,
    number,
    number,
    number,
    number,
    number,
    number?,
    number?,
    number?,
  ];
  return {
    count,
    bytes,
    lastAtMs,
    snapshot: { atMs, count: snapCount, bytes: snapBytes },
    ...(prevAt !== undefined
      ? { previous: { atMs: prevAt, count: prevCount ?? 0, bytes: prevBytes ?? 0 } }
      : {}),
  };
}
