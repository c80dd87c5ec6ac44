import { ValidationError } from './errors.ts';
import { quote } from './quote.ts';
import type { RedeliveryBackoff } from './redelivery-backoff.ts';

/** An ack timeout is neither 0 (disabled) nor a whole number of milliseconds >= 1000. */
export class InvalidAckTimeoutError extends ValidationError {}

/** Pulsar's smallest ack timeout (`ConsumerBuilder.ackTimeout`): 1 s. */
export const MIN_ACK_TIMEOUT_MS = 1000;

/**
 * Checks a consumer's ack timeout: 0 (disabled, the default) or a whole number of milliseconds of
 * at least {@link MIN_ACK_TIMEOUT_MS}, as Pulsar requires.
 * @returns the ack timeout, unchanged.
 * @throws InvalidAckTimeoutError quoting the value.
 */
export function validateAckTimeoutMs(ackTimeoutMs: number): number {
  if (ackTimeoutMs === 0) {
    return 0;
  }
  if (
    typeof ackTimeoutMs !== 'number' ||
    !Number.isSafeInteger(ackTimeoutMs) ||
    ackTimeoutMs < MIN_ACK_TIMEOUT_MS
  ) {
    throw new InvalidAckTimeoutError(
      `Invalid ackTimeoutMs ${quote(ackTimeoutMs)}: must be 0 (disabled) or a whole number of milliseconds >= ${MIN_ACK_TIMEOUT_MS}`,
    );
  }
  return ackTimeoutMs;
}

/**
 * How long a delivered, unacknowledged message stays invisible before it is redelivered (PIP-130):
 * `ackTimeoutMs + backoff.next(redeliveryCount)`, or `ackTimeoutMs` without a backoff.
 *
 * @param ackTimeoutMs a valid, enabled ack timeout (see {@link validateAckTimeoutMs}).
 * @throws InvalidAckTimeoutError when `ackTimeoutMs` is invalid or 0: with ack timeout disabled
 * nothing is redelivered, so asking for a delay is a mistake.
 */
export function ackTimeoutRedeliveryDelayMs(
  ackTimeoutMs: number,
  backoff: RedeliveryBackoff | undefined,
  redeliveryCount: number,
): number {
  if (validateAckTimeoutMs(ackTimeoutMs) === 0) {
    throw new InvalidAckTimeoutError(
      'Ack timeout is disabled (ackTimeoutMs 0): there is no redelivery delay',
    );
  }
  return backoff === undefined ? ackTimeoutMs : ackTimeoutMs + backoff.next(redeliveryCount);
}

/**
 * A consumer's ack-timeout settings: the timeout and the optional `ackTimeoutRedeliveryBackoff`.
 * Immutable.
 *
 * @example
 * const policy = AckTimeoutPolicy.of(10_000, MultiplierRedeliveryBackoff.builder().minDelayMs(1000).build());
 * policy.redeliveryDelayMs(2); // 14000
 */
export class AckTimeoutPolicy {
  private constructor(
    readonly ackTimeoutMs: number,
    readonly backoff: RedeliveryBackoff | undefined,
  ) {}

  /** Ack timeout disabled: messages are redelivered only on nack or reconnection. */
  static readonly DISABLED = new AckTimeoutPolicy(0, undefined);

  /** @throws InvalidAckTimeoutError see {@link validateAckTimeoutMs}. */
  static of(ackTimeoutMs: number, backoff?: RedeliveryBackoff): AckTimeoutPolicy {
    return new AckTimeoutPolicy(validateAckTimeoutMs(ackTimeoutMs), backoff);
  }

  get isEnabled(): boolean {
    return this.ackTimeoutMs > 0;
  }

  /** The redelivery delay, or `undefined` when ack timeout is disabled. */
  redeliveryDelayMs(redeliveryCount: number): number | undefined {
    return this.isEnabled
      ? ackTimeoutRedeliveryDelayMs(this.ackTimeoutMs, this.backoff, redeliveryCount)
      : undefined;
  }
}
