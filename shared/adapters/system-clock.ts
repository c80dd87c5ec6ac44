import type { Clock } from '../ports/clock.ts';

/** Wall-clock time; the only place outside tests that reads Date.now(). */
export const systemClock: Clock = { nowMs: () => Date.now() };
