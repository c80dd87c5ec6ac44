/**
 * The source of wall-clock time, injected so that the domain and the use cases never read
 * `Date.now()` themselves and tests can drive time by hand.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
}
