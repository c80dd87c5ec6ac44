import { describe, expect, it } from 'vitest';
import { bump, MIN_RATE_WINDOW_MS, RATE_SNAPSHOT_MS, rateOf } from '../../../shared/domain/rate-counter.ts';

const T0 = 1_700_000_000_000;

describe('rateOf', () => {
  it('a counter younger than the minimum window is taken over the minimum window, never over milliseconds', () => {
    const counter = bump(undefined, 100, 1_000, T0);

    expect(rateOf(counter, T0)).toEqual({ perSecond: 10, bytesPerSecond: 100, windowMs: MIN_RATE_WINDOW_MS });
    expect(rateOf(counter, T0 + 5)?.perSecond).toBe(10);
    expect(rateOf(counter, T0 + 20_000)?.perSecond).toBe(5);
  });

  it('a young snapshot gives way to the one before; an idle counter falls towards 0', () => {
    let counter = bump(undefined, 60, 60, T0);
    counter = bump(counter, 30, 30, T0 + RATE_SNAPSHOT_MS);

    // 1 s after the renewal: over the previous snapshot (61 s, 90 messages).
    expect(rateOf(counter, T0 + RATE_SNAPSHOT_MS + 1_000)?.perSecond).toBeCloseTo(90 / 61, 9);
    // An hour later: what was bumped since the last snapshot, over the hour.
    expect(rateOf(counter, T0 + RATE_SNAPSHOT_MS + 3_600_000)?.perSecond).toBeCloseTo(30 / 3_600, 9);
    expect(rateOf(undefined, T0)).toBeUndefined();
  });
});
