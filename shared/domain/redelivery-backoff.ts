import { ValidationError } from './errors.ts';
import { quote } from './quote.ts';

/**
 * A redelivery backoff's parameters are out of range or of the wrong type.
 * @example
 * try { FixedRedeliveryBackoff.builder().delayMs(-1).build(); }
 * catch (error) { console.log(error instanceof InvalidRedeliveryBackoffError); } // true
 */
export class InvalidRedeliveryBackoffError extends ValidationError {}

/** A JSON value, as a backoff's parameters are stored and sent. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** The stored and wire form of a backoff: its class name and its parameters. */
export interface RedeliveryBackoffJson {
  readonly className: string;
  readonly params: { readonly [key: string]: JsonValue };
}

/**
 * How long to wait before redelivering a message, by how many times it was already redelivered
 * (Pulsar's `RedeliveryBackoff`, PIP-106). Implementations are pure and immutable.
 */
export interface RedeliveryBackoff {
  /** The delay in milliseconds before the next redelivery; `redeliveryCount` is 0 for the first. */
  next(redeliveryCount: number): number;
  /** The form the registry rebuilds this backoff from (see `RedeliveryBackoffRegistry.fromJson`). */
  toJSON(): RedeliveryBackoffJson;
}

/** Class name of {@link MultiplierRedeliveryBackoff} in JSON. */
export const MULTIPLIER_REDELIVERY_BACKOFF = 'MultiplierRedeliveryBackoff';
/** Class name of {@link FixedRedeliveryBackoff} in JSON. */
export const FIXED_REDELIVERY_BACKOFF = 'FixedRedeliveryBackoff';

/** Pulsar's default `minDelayMs` of a MultiplierRedeliveryBackoff: 10 s. */
export const DEFAULT_MIN_DELAY_MS = 10_000;
/** Pulsar's default `maxDelayMs` of a MultiplierRedeliveryBackoff: 10 min. */
export const DEFAULT_MAX_DELAY_MS = 600_000;
/** Pulsar's default `multiplier` of a MultiplierRedeliveryBackoff: doubling. */
export const DEFAULT_MULTIPLIER = 2;
/** Pulsar's default `negativeAckRedeliveryDelay`: 1 min. */
export const DEFAULT_FIXED_DELAY_MS = 60_000;

/**
 * `min(minDelayMs * multiplier^redeliveryCount, maxDelayMs)`, truncated to whole milliseconds,
 * as Pulsar's `MultiplierRedeliveryBackoff`. A count <= 0, or `minDelayMs` 0, gives `minDelayMs`.
 * Finite for every count: once the delay reaches `maxDelayMs` it stays there.
 *
 * @example
 * const backoff = MultiplierRedeliveryBackoff.builder().minDelayMs(1000).maxDelayMs(60_000).build();
 * backoff.next(0); // 1000
 * backoff.next(3); // 8000
 */
export class MultiplierRedeliveryBackoff implements RedeliveryBackoff {
  private constructor(
    readonly minDelayMs: number,
    readonly maxDelayMs: number,
    readonly multiplier: number,
    /**
     * 0 to 1 (ackline, beyond Pulsar: apache/pulsar #20965): each delay is `next(count)` plus a
     * random share of up to `jitter` of it, so consumers that failed together do not come back
     * together. It only ever adds delay: `next` stays the earliest, never early; the latest is
     * `next(count) * (1 + jitter)`, which may pass maxDelayMs by up to that share.
     */
    readonly jitter: number = 0,
  ) {}

  /** A builder with Pulsar's defaults: 10000 ms, 600000 ms, multiplier 2. */
  static builder(): MultiplierRedeliveryBackoffBuilder {
    return new MultiplierRedeliveryBackoffBuilder();
  }

  /**
   * Validates and builds; the builder calls this.
   * @throws InvalidRedeliveryBackoffError when a delay is negative or not a whole number of ms,
   * maxDelayMs < minDelayMs, or the multiplier is not a finite number > 1.
   */
  static create(
    minDelayMs: number,
    maxDelayMs: number,
    multiplier: number,
    jitter = 0,
  ): MultiplierRedeliveryBackoff {
    if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) {
      throw new InvalidRedeliveryBackoffError(
        `Invalid MultiplierRedeliveryBackoff: jitter ${quote(jitter)} must be a number from 0 to 1`,
      );
    }
    checkDelayMs(minDelayMs, 'minDelayMs');
    checkDelayMs(maxDelayMs, 'maxDelayMs');
    if (maxDelayMs < minDelayMs) {
      throw new InvalidRedeliveryBackoffError(
        `Invalid MultiplierRedeliveryBackoff: maxDelayMs ${quote(maxDelayMs)} must be >= minDelayMs ${quote(minDelayMs)}`,
      );
    }
    if (typeof multiplier !== 'number' || !Number.isFinite(multiplier) || multiplier <= 1) {
      throw new InvalidRedeliveryBackoffError(
        `Invalid MultiplierRedeliveryBackoff: multiplier ${quote(multiplier)} must be a finite number > 1`,
      );
    }
    return new MultiplierRedeliveryBackoff(minDelayMs, maxDelayMs, multiplier, jitter);
  }

  /** Constant time. A fractional count is truncated; NaN and counts <= 0 give `minDelayMs`. */
  next(redeliveryCount: number): number {
    const count = Math.trunc(redeliveryCount);
    if (!(count > 0) || this.minDelayMs === 0) {
      return this.minDelayMs;
    }
    const delayMs = this.minDelayMs * this.multiplier ** count;
    // NaN cannot happen (min > 0, multiplier > 1), but never hand a non-number to a timer.
    if (!(delayMs < this.maxDelayMs)) {
      return this.maxDelayMs;
    }
    return Math.floor(delayMs);
  }

  /**
   * The delay for `redeliveryCount` with its jitter drawn: `random01` in [0, 1) picks within
   * [next(count), latest(count)]. Pure: the caller draws the random number.
   */
  nextWithJitter(redeliveryCount: number, random01: number): number {
    const earliest = this.next(redeliveryCount);
    const share = Math.min(Math.max(random01, 0), 1);
    return Math.min(earliest + Math.floor(earliest * this.jitter * share), this.latest(redeliveryCount));
  }

  /** The latest delay jitter may give for `redeliveryCount` (`next` when jitter is 0). */
  latest(redeliveryCount: number): number {
    const earliest = this.next(redeliveryCount);
    return earliest + Math.floor(earliest * this.jitter);
  }

  toJSON(): RedeliveryBackoffJson {
    const params = { minDelayMs: this.minDelayMs, maxDelayMs: this.maxDelayMs, multiplier: this.multiplier };
    // Without jitter, the form Pulsar's clients and older ackline stored.
    return {
      className: MULTIPLIER_REDELIVERY_BACKOFF,
      params: this.jitter > 0 ? { ...params, jitter: this.jitter } : params,
    };
  }
}

/**
 * Builds a {@link MultiplierRedeliveryBackoff}; `build()` validates.
 * @example MultiplierRedeliveryBackoff.builder().minDelayMs(1000).maxDelayMs(60_000).multiplier(2).build();
 */
export class MultiplierRedeliveryBackoffBuilder {
  private minMs = DEFAULT_MIN_DELAY_MS;
  private maxMs = DEFAULT_MAX_DELAY_MS;
  private factor = DEFAULT_MULTIPLIER;
  private spread = 0;

  /**
   * The delay of the first redelivery (count 0); default {@link DEFAULT_MIN_DELAY_MS}.
   * @example MultiplierRedeliveryBackoff.builder().minDelayMs(1000);
   */
  minDelayMs(delayMs: number): this {
    this.minMs = delayMs;
    return this;
  }

  /**
   * The longest delay, whatever the count; default {@link DEFAULT_MAX_DELAY_MS}.
   * @example MultiplierRedeliveryBackoff.builder().maxDelayMs(60_000);
   */
  maxDelayMs(delayMs: number): this {
    this.maxMs = delayMs;
    return this;
  }

  /**
   * How much each redelivery multiplies the delay; default {@link DEFAULT_MULTIPLIER}.
   * @example MultiplierRedeliveryBackoff.builder().multiplier(2);
   */
  multiplier(multiplier: number): this {
    this.factor = multiplier;
    return this;
  }

  /**
   * A random share, 0 to 1, of each delay added to it (never taken off); default 0.
   * @example MultiplierRedeliveryBackoff.builder().minDelayMs(1000).jitter(0.2); // 1000 to 1200 ms
   */
  jitter(jitter: number): this {
    this.spread = jitter;
    return this;
  }

  /** @throws InvalidRedeliveryBackoffError see {@link MultiplierRedeliveryBackoff.create}. */
  build(): MultiplierRedeliveryBackoff {
    return MultiplierRedeliveryBackoff.create(this.minMs, this.maxMs, this.factor, this.spread);
  }
}

/**
 * The same delay for every redelivery, like Pulsar's `negativeAckRedeliveryDelay`.
 *
 * @example
 * FixedRedeliveryBackoff.of(5000).next(7); // 5000
 */
export class FixedRedeliveryBackoff implements RedeliveryBackoff {
  private constructor(readonly delayMs: number) {}

  /** @throws InvalidRedeliveryBackoffError when `delayMs` is negative or not a whole number. */
  static of(delayMs: number): FixedRedeliveryBackoff {
    checkDelayMs(delayMs, 'delayMs', FIXED_REDELIVERY_BACKOFF);
    return new FixedRedeliveryBackoff(delayMs);
  }

  /** A builder whose default delay is Pulsar's `negativeAckRedeliveryDelay` default, 60000 ms. */
  static builder(): FixedRedeliveryBackoffBuilder {
    return new FixedRedeliveryBackoffBuilder();
  }

  next(_redeliveryCount: number): number {
    return this.delayMs;
  }

  toJSON(): RedeliveryBackoffJson {
    return { className: FIXED_REDELIVERY_BACKOFF, params: { delayMs: this.delayMs } };
  }
}

/**
 * Builds a {@link FixedRedeliveryBackoff}; `build()` validates.
 * @example FixedRedeliveryBackoff.builder().delayMs(5000).build();
 */
export class FixedRedeliveryBackoffBuilder {
  private delay = DEFAULT_FIXED_DELAY_MS;

  /**
   * The delay of every redelivery; default {@link DEFAULT_FIXED_DELAY_MS}.
   * @example FixedRedeliveryBackoff.builder().delayMs(5000);
   */
  delayMs(delayMs: number): this {
    this.delay = delayMs;
    return this;
  }

  /**
   * The backoff.
   * @throws InvalidRedeliveryBackoffError for a negative or non-integer delay.
   * @example const backoff = FixedRedeliveryBackoff.builder().delayMs(5000).build();
   */
  build(): FixedRedeliveryBackoff {
    return FixedRedeliveryBackoff.of(this.delay);
  }
}

function checkDelayMs(value: number, name: string, className = MULTIPLIER_REDELIVERY_BACKOFF): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidRedeliveryBackoffError(
      `Invalid ${className}: ${name} ${quote(value)} must be a non-negative whole number of milliseconds`,
    );
  }
}

/**
 * The delay a backoff gives for `redeliveryCount`, its jitter drawn from `random01` (in [0, 1)):
 * never less than `backoff.next(redeliveryCount)`. Backoffs without jitter give `next`.
 */
export function delayWithJitter(
  backoff: RedeliveryBackoff,
  redeliveryCount: number,
  random01: number,
): number {
  return backoff instanceof MultiplierRedeliveryBackoff
    ? backoff.nextWithJitter(redeliveryCount, random01)
    : backoff.next(redeliveryCount);
}

/** The latest delay a backoff may give for `redeliveryCount` (its `next` when it has no jitter). */
export function latestDelay(backoff: RedeliveryBackoff, redeliveryCount: number): number {
  const withLatest = backoff as RedeliveryBackoff & { latest?: (count: number) => number };
  return typeof withLatest.latest === 'function'
    ? withLatest.latest(redeliveryCount)
    : backoff.next(redeliveryCount);
}
