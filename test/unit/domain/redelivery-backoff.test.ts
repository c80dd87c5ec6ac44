import { describe, expect, it } from 'vitest';
import {
  FixedRedeliveryBackoff,
  InvalidRedeliveryBackoffError,
  MultiplierRedeliveryBackoff,
} from '../../../shared/domain/redelivery-backoff.ts';

function backoff(minDelayMs: number, maxDelayMs: number, multiplier: number): MultiplierRedeliveryBackoff {
  return MultiplierRedeliveryBackoff.builder()
    .minDelayMs(minDelayMs)
    .maxDelayMs(maxDelayMs)
    .multiplier(multiplier)
    .build();
}

describe('MultiplierRedeliveryBackoff', () => {
  it.each([
    { minDelayMs: 1000, maxDelayMs: 600_000, multiplier: 2, redeliveryCount: -1, delayMs: 1000 },
    { minDelayMs: 1000, maxDelayMs: 600_000, multiplier: 2, redeliveryCount: 0, delayMs: 1000 },
    { minDelayMs: 1000, maxDelayMs: 600_000, multiplier: 2, redeliveryCount: 1, delayMs: 2000 },
    { minDelayMs: 1000, maxDelayMs: 600_000, multiplier: 2, redeliveryCount: 4, delayMs: 16_000 },
    { minDelayMs: 1000, maxDelayMs: 600_000, multiplier: 2, redeliveryCount: 100, delayMs: 600_000 },
    { minDelayMs: 2000, maxDelayMs: 6_000_000, multiplier: 5, redeliveryCount: 1, delayMs: 10_000 },
    { minDelayMs: 2000, maxDelayMs: 6_000_000, multiplier: 5, redeliveryCount: 2, delayMs: 50_000 },
    { minDelayMs: 2000, maxDelayMs: 6_000_000, multiplier: 5, redeliveryCount: 4, delayMs: 1_250_000 },
    { minDelayMs: 2000, maxDelayMs: 6_000_000, multiplier: 5, redeliveryCount: 100, delayMs: 6_000_000 },
    { minDelayMs: 1000, maxDelayMs: 60_000, multiplier: 1.5, redeliveryCount: 1, delayMs: 1500 },
    { minDelayMs: 1000, maxDelayMs: 60_000, multiplier: 1.5, redeliveryCount: 2, delayMs: 2250 },
    { minDelayMs: 1000, maxDelayMs: 60_000, multiplier: 1.5, redeliveryCount: 3, delayMs: 3375 },
    { minDelayMs: 1000, maxDelayMs: 60_000, multiplier: 1.1, redeliveryCount: 1, delayMs: 1100 },
    { minDelayMs: 1, maxDelayMs: 1000, multiplier: 1.5, redeliveryCount: 1, delayMs: 1 }, // 1.5 ms truncates to 1
    { minDelayMs: 3, maxDelayMs: 1000, multiplier: 1.5, redeliveryCount: 3, delayMs: 10 }, // 10.125 ms truncates to 10
    { minDelayMs: 0, maxDelayMs: 1000, multiplier: 2, redeliveryCount: 5, delayMs: 0 },
    { minDelayMs: 500, maxDelayMs: 500, multiplier: 3, redeliveryCount: 7, delayMs: 500 },
    { minDelayMs: 1000, maxDelayMs: 600_000, multiplier: 2, redeliveryCount: 2 ** 31 - 1, delayMs: 600_000 },
    {
      minDelayMs: 1,
      maxDelayMs: Number.MAX_SAFE_INTEGER,
      multiplier: 1.0001,
      redeliveryCount: 2 ** 31 - 1,
      delayMs: Number.MAX_SAFE_INTEGER,
    },
  ])('B($minDelayMs, $maxDelayMs, $multiplier).next($redeliveryCount) = $delayMs', ({
    minDelayMs,
    maxDelayMs,
    multiplier,
    redeliveryCount,
    delayMs,
  }) => {
    expect(backoff(minDelayMs, maxDelayMs, multiplier).next(redeliveryCount)).toBe(delayMs);
  });

  it('uses Pulsar defaults: 10 s doubling up to 10 min', () => {
    // Arrange
    const defaults = MultiplierRedeliveryBackoff.builder().build();

    // Act
    const delays = [0, 1, 2, 3, 4, 5, 6, 7].map((count) => defaults.next(count));

    // Assert
    expect(delays).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000]);
    expect(defaults.next(2 ** 31 - 1)).toBe(600_000);
  });

  it.each([
    [1000, 600_000, 2],
    [7, 1_000_003, 1.37],
    [1, 2 ** 40, 9.5],
  ])('B(%i, %i, %d) never decreases, stays within [min, max] and gives whole ms, for every count', (min, max, multiplier) => {
    // Arrange
    const b = backoff(min, max, multiplier);
    const violations: string[] = [];

    // Act
    let previous = -1;
    for (let count = -3; count < 5000; count++) {
      const delayMs = b.next(count);
      if (!Number.isInteger(delayMs) || delayMs < min || delayMs > max || delayMs < previous) {
        violations.push(`next(${count}) = ${delayMs} after ${previous}`);
      }
      previous = delayMs;
    }

    // Assert
    expect(violations).toEqual([]);
    expect(previous).toBe(max);
  });

  it.each([
    [Number.NaN, 1000],
    [Number.POSITIVE_INFINITY, 600_000],
    [1.9, 2000],
  ])('handles the odd count %d', (count, expected) => {
    expect(backoff(1000, 600_000, 2).next(count)).toBe(expected);
  });

  it.each([
    [-1, 1000, 2, /minDelayMs "-1"/],
    [1000, 999, 2, /maxDelayMs "999" must be >= minDelayMs "1000"/],
    [1000, 2000, 1, /multiplier "1"/],
    [1000, 2000, 0.5, /multiplier/],
    [1000, 2000, -2, /multiplier/],
    [1000, 2000, Number.NaN, /multiplier "NaN"/],
    [1000, 2000, Number.POSITIVE_INFINITY, /multiplier "Infinity"/],
    [Number.NaN, 2000, 2, /minDelayMs "NaN"/],
    [1000, Number.POSITIVE_INFINITY, 2, /maxDelayMs "Infinity"/],
    [10.5, 2000, 2, /minDelayMs "10.5"/],
  ])('build() rejects B(%d, %d, %d)', (min, max, multiplier, reason) => {
    expect(() => backoff(min, max, multiplier)).toThrow(InvalidRedeliveryBackoffError);
    expect(() => backoff(min, max, multiplier)).toThrow(reason);
  });

  it('serialises its class name and parameters', () => {
    expect(backoff(1000, 60_000, 1.5).toJSON()).toEqual({
      className: 'MultiplierRedeliveryBackoff',
      params: { minDelayMs: 1000, maxDelayMs: 60_000, multiplier: 1.5 },
    });
  });
});

describe('FixedRedeliveryBackoff', () => {
  it.each([[0], [1], [5000]])('waits %i ms whatever the count', (delayMs) => {
    // Arrange
    const fixed = FixedRedeliveryBackoff.of(delayMs);

    // Act
    const delays = [-1, 0, 1, 10, 2 ** 31 - 1].map((count) => fixed.next(count));

    // Assert
    expect(delays).toEqual([delayMs, delayMs, delayMs, delayMs, delayMs]);
  });

  it('builds with a builder, defaulting to Pulsar negativeAckRedeliveryDelay (1 min)', () => {
    expect(FixedRedeliveryBackoff.builder().build().next(3)).toBe(60_000);
    expect(FixedRedeliveryBackoff.builder().delayMs(250).build().next(3)).toBe(250);
  });

  it.each([[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY]])('rejects delay %d', (delayMs) => {
    expect(() => FixedRedeliveryBackoff.of(delayMs)).toThrow(InvalidRedeliveryBackoffError);
    expect(() => FixedRedeliveryBackoff.builder().delayMs(delayMs).build()).toThrow(
      /FixedRedeliveryBackoff: delayMs/,
    );
  });

  it('serialises its class name and delay', () => {
    expect(FixedRedeliveryBackoff.of(250).toJSON()).toEqual({
      className: 'FixedRedeliveryBackoff',
      params: { delayMs: 250 },
    });
  });
});
