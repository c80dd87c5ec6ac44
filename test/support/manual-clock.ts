import type { Clock } from '../../shared/ports/clock.ts';

/** A clock that moves only when a test moves it. Starts at `startMs` (default 0). */
export class ManualClock implements Clock {
  private currentMs: number;

  constructor(startMs = 0) {
    this.currentMs = startMs;
  }

  nowMs(): number {
    return this.currentMs;
  }

  /** Moves time forward by `ms` (>= 0). */
  advance(ms: number): void {
    if (!(ms >= 0)) {
      throw new RangeError(`ManualClock cannot go backwards (advance(${ms}))`);
    }
    this.currentMs += ms;
  }

  /** Sets the time; tests may set it backwards on purpose to simulate clock skew. */
  set(ms: number): void {
    this.currentMs = ms;
  }
}
