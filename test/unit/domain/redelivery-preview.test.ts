// Issue 24, criterion 5: a message's next redeliveries under a policy, earliest and latest.
import { describe, expect, it } from 'vitest';
import {
  FixedRedeliveryBackoff,
  MultiplierRedeliveryBackoff,
} from '../../../shared/domain/redelivery-backoff.ts';
import { previewRedeliveries } from '../../../shared/domain/redelivery-preview.ts';

const T = 1_000_000;

describe('previewRedeliveries', () => {
  it('nack with a jittered multiplier backoff: windows add up, and stop at the dead-letter count', () => {
    const backoff = MultiplierRedeliveryBackoff.builder()
      .minDelayMs(1_000)
      .maxDelayMs(4_000)
      .jitter(0.5)
      .build();
    const preview = previewRedeliveries(
      { nackBackoff: backoff, maxRedeliverCount: 3 },
      { fromCount: 0, fromMs: T, count: 10 },
    );
    expect(preview.nack).toEqual([
      { redeliveryCount: 1, earliestMs: T + 1_000, latestMs: T + 1_500 },
      { redeliveryCount: 2, earliestMs: T + 3_000, latestMs: T + 4_500 },
      { redeliveryCount: 3, earliestMs: T + 7_000, latestMs: T + 10_500 },
    ]);
    expect(preview.ackTimeout).toEqual([]);
    expect(preview.deadLetteredAtCount).toBe(4);
  });

  it('ack timeout separately; a fixed nack delay has no jitter; no dead-letter policy: none', () => {
    const preview = previewRedeliveries(
      {
        nackBackoff: FixedRedeliveryBackoff.of(60_000),
        ackTimeoutBackoff: { next: () => 30_000, toJSON: () => ({ className: 'x', params: {} }) },
      },
      { fromCount: 2, fromMs: T, count: 2 },
    );
    expect(preview.nack).toEqual([
      { redeliveryCount: 3, earliestMs: T + 60_000, latestMs: T + 60_000 },
      { redeliveryCount: 4, earliestMs: T + 120_000, latestMs: T + 120_000 },
    ]);
    expect(preview.ackTimeout.map((s) => s.earliestMs)).toEqual([T + 30_000, T + 60_000]);
    expect(preview.deadLetteredAtCount).toBeUndefined();
  });

  it('a redelivery already due starts its list at its due time; the next ones add to it', () => {
    const backoff = MultiplierRedeliveryBackoff.builder().minDelayMs(1_000).maxDelayMs(8_000).build();
    const due = T + 45_000;
    // Released after a nack: its next delivery (count 2) is due at `due`, for either list.
    const released = previewRedeliveries(
      { nackBackoff: backoff, ackTimeoutBackoff: FixedRedeliveryBackoff.of(30_000) },
      { fromCount: 1, fromMs: T, count: 3, dueMs: { nack: due, ackTimeout: due } },
    );
    expect(released.nack).toEqual([
      { redeliveryCount: 2, earliestMs: due, latestMs: due },
      { redeliveryCount: 3, earliestMs: due + 4_000, latestMs: due + 4_000 },
      { redeliveryCount: 4, earliestMs: due + 12_000, latestMs: due + 12_000 },
    ]);
    expect(released.ackTimeout.map((s) => s.earliestMs)).toEqual([due, due + 30_000, due + 60_000]);
    // Held: nacked now, the next is after the backoff; left alone, it comes back at `due`.
    const held = previewRedeliveries(
      { nackBackoff: backoff, ackTimeoutBackoff: FixedRedeliveryBackoff.of(30_000) },
      { fromCount: 0, fromMs: T, count: 2, dueMs: { ackTimeout: due } },
    );
    expect(held.nack.map((s) => [s.redeliveryCount, s.earliestMs])).toEqual([
      [1, T + 1_000],
      [2, T + 3_000],
    ]);
    expect(held.ackTimeout.map((s) => [s.redeliveryCount, s.earliestMs])).toEqual([
      [1, due],
      [2, due + 30_000],
    ]);
  });
});
