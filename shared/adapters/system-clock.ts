import type { Clock } from '../ports/clock.ts';

/** Wall-clock time; the only place outside tests that reads Date.now(). */
export const systemClock: Clock = { nowMs: () => Date.now() };

/** The longest wait after a lost claim, before doubling: about one DynamoDB write's round trip. */
const CONFLICT_PAUSE_BASE_MS = 8;
const CONFLICT_PAUSE_MAX_MS = 64;

/**
 * Full jitter after a lost compare-and-set (AWS's "exponential backoff and jitter"): consumers that
 * lost the same race retry at different moments instead of colliding again in step.
 */
export function pauseAfterConflict(attempt: number): Promise<void> {
  const ceiling = Math.min(CONFLICT_PAUSE_MAX_MS, CONFLICT_PAUSE_BASE_MS * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}

/** Waits `ms` of wall-clock time (see UseCasePorts.sleep). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
