import { describe, expect, it } from 'vitest';
import {
  AckTimeoutPolicy,
  ackTimeoutRedeliveryDelayMs,
  InvalidAckTimeoutError,
  validateAckTimeoutMs,
} from '../../../shared/domain/ack-timeout.ts';
import {
  FixedRedeliveryBackoff,
  MultiplierRedeliveryBackoff,
} from '../../../shared/domain/redelivery-backoff.ts';

const pip130Backoff = MultiplierRedeliveryBackoff.builder()
  .minDelayMs(1000)
  .maxDelayMs(60_000)
  .multiplier(2)
  .build();

describe('validateAckTimeoutMs', () => {
  it.each([[0], [1000], [1001], [10_000], [12 * 3600 * 1000]])('accepts %i', (ms) => {
    expect(validateAckTimeoutMs(ms)).toBe(ms);
  });

  it.each([
    [1],
    [999],
    [-1],
    [-1000],
    [1000.5],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
  ])('rejects %d', (ms) => {
    expect(() => validateAckTimeoutMs(ms)).toThrow(InvalidAckTimeoutError);
    expect(() => validateAckTimeoutMs(ms)).toThrow(`Invalid ackTimeoutMs "${ms}"`);
  });
});

describe('ackTimeoutRedeliveryDelayMs (PIP-130)', () => {
  // PIP-130's table: ack timeout 10 s, backoff from 1 s doubling to 60 s.
  it.each([
    [0, 11_000],
    [1, 12_000],
    [2, 14_000],
    [3, 18_000],
    [4, 26_000],
    [5, 42_000],
    [6, 70_000],
    [7, 70_000],
  ])('redelivery count %i waits %i ms', (count, expectedMs) => {
    expect(ackTimeoutRedeliveryDelayMs(10_000, pip130Backoff, count)).toBe(expectedMs);
  });

  it('is the ack timeout alone without a backoff', () => {
    expect(ackTimeoutRedeliveryDelayMs(10_000, undefined, 0)).toBe(10_000);
    expect(ackTimeoutRedeliveryDelayMs(10_000, undefined, 9)).toBe(10_000);
  });

  it('adds any backoff', () => {
    expect(ackTimeoutRedeliveryDelayMs(5000, FixedRedeliveryBackoff.of(250), 3)).toBe(5250);
  });

  it.each([[0], [999]])('refuses ack timeout %i', (ms) => {
    expect(() => ackTimeoutRedeliveryDelayMs(ms, pip130Backoff, 1)).toThrow(InvalidAckTimeoutError);
  });
});

describe('AckTimeoutPolicy', () => {
  it('computes delays when enabled', () => {
    // Arrange
    const policy = AckTimeoutPolicy.of(10_000, pip130Backoff);

    // Act & Assert
    expect(policy.isEnabled).toBe(true);
    expect(policy.redeliveryDelayMs(2)).toBe(14_000);
  });

  it('gives no delay when disabled', () => {
    expect(AckTimeoutPolicy.of(0).isEnabled).toBe(false);
    expect(AckTimeoutPolicy.of(0, pip130Backoff).redeliveryDelayMs(2)).toBeUndefined();
    expect(AckTimeoutPolicy.DISABLED.redeliveryDelayMs(0)).toBeUndefined();
  });

  it('validates the timeout', () => {
    expect(() => AckTimeoutPolicy.of(500)).toThrow(InvalidAckTimeoutError);
  });
});
