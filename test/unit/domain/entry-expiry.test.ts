import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ENTRY_EXPIRY_MS,
  expiresAtSeconds,
  expiryAllowedBy,
  expiryBeyondWalkMs,
  needsRenewal,
  PUBLISH_ORDER_SLACK_MS,
  renewalDueAtMs,
  walkMayStopAt,
} from '../../../shared/domain/entry-expiry.ts';

const DAY = 86_400_000;
const E = 14 * DAY;
const NOW = 1_700_000_000_000;

describe('entry expiry rules', () => {
  it('the default expiry is 14 days', () => {
    expect(DEFAULT_ENTRY_EXPIRY_MS).toBe(E);
  });

  it.each([
    [NOW, NOW / 1_000 + E / 1_000],
    [NOW + 1, NOW / 1_000 + E / 1_000 + 1], // rounded up: never earlier than the expiry
    [NOW + 999, NOW / 1_000 + E / 1_000 + 1],
  ])('expiresAtSeconds(%d) is %d', (fromMs, seconds) => {
    expect(expiresAtSeconds(fromMs, E)).toBe(seconds);
  });

  it.each([
    [NOW + 7 * DAY - 1, true],
    [NOW + 7 * DAY, false],
    [NOW, true],
  ])('a batch expiring at %d needs renewal: %s (within half the expiry)', (expiresAtMs, renew) => {
    expect(needsRenewal(expiresAtMs, NOW, E)).toBe(renew);
  });

  it.each([
    [NOW - 7 * DAY + PUBLISH_ORDER_SLACK_MS, true],
    [NOW - 7 * DAY + PUBLISH_ORDER_SLACK_MS - 1, false],
    [NOW, true],
  ])('a walk may stop at a batch published at %d: %s', (publishTimeMs, stop) => {
    expect(walkMayStopAt(publishTimeMs, NOW, E)).toBe(stop);
  });

  it('what a walk did not reach expires from the stop batch, or from the walk, less the slack', () => {
    expect(expiryBeyondWalkMs(NOW - DAY, NOW, E)).toBe(NOW - DAY - PUBLISH_ORDER_SLACK_MS + E);
    expect(expiryBeyondWalkMs(undefined, NOW, E)).toBe(NOW - PUBLISH_ORDER_SLACK_MS + E);
  });

  it('the next walk is due a quarter of the expiry before the earliest expiry', () => {
    expect(renewalDueAtMs(NOW + E, E)).toBe(NOW + E - 3.5 * DAY);
  });

  it.each([
    [0, 0, E, true],
    [60, -1, E, true],
    [E / 4 / 60_000, -1, E, true],
    [E / 4 / 60_000 + 1, -1, E, false],
    [-1, -1, E, false],
    [-1, 100, E, false],
    [0, 0, 0, false],
  ])('a default of %d minutes / %d MB lets batches expire (expiry %d ms): %s', (minutes, mb, expiryMs, allowed) => {
    expect(expiryAllowedBy({ retentionTimeInMinutes: minutes, retentionSizeInMB: mb }, expiryMs)).toBe(
      allowed,
    );
  });
});
