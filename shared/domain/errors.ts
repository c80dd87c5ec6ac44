/**
 * The errors of ackline. One root, {@link AcklineError}; families by HTTP meaning, which the HTTP
 * layer maps to a status by `instanceof` (never by name); specific errors below their family.
 * Every message says what is wrong and quotes the offending input.
 */

/** Options accepted by every ackline error. */
export interface AcklineErrorOptions {
  /** The lower-level error that caused this one. */
  readonly cause?: unknown;
}

/** Root of every error ackline raises on purpose. Not in a family below: an internal error (500). */
export class AcklineError extends Error {
  constructor(message: string, options?: AcklineErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
}

// Families (HTTP status in brackets, as mapped by shared/http).

/** The request is malformed or a value is out of range (400). */
export class ValidationError extends AcklineError {}

/** The caller is not authenticated (401). */
export class UnauthorizedError extends AcklineError {}

/** The caller is authenticated but not allowed (403). */
export class ForbiddenError extends AcklineError {}

/** A consumer's role may no longer produce on its dead-letter topic: nothing was dead-lettered (403). */
export class DeadLetterRefusedError extends ForbiddenError {}

/** The named thing does not exist (404). */
export class NotFoundError extends AcklineError {}

/** The method is not allowed on the resource (405). */
export class MethodNotAllowedError extends AcklineError {}

/** The request asks for what the server does not accept, e.g. a partition count out of range (406, as Pulsar). */
export class NotAcceptableError extends AcklineError {}

/** The request conflicts with the current state, e.g. it already exists (409). */
export class ConflictError extends AcklineError {}

/** The resource is not in a state that allows the request (412), as Pulsar answers. */
export class PreconditionFailedError extends AcklineError {}

/** The request or message is larger than allowed (413). */
export class PayloadTooLargeError extends AcklineError {}

// Specific errors.

/** A topic name, or one of its parts, does not follow Pulsar's naming rules. */
export class InvalidTopicNameError extends ValidationError {}

/**
 * A position, message id or ledger/entry id is not a valid non-negative 64-bit id.
 * @example
 * try { MessageId.parse('1:x:-1'); } catch (error) { console.log(error instanceof InvalidPositionError); } // true
 */
export class InvalidPositionError extends ValidationError {}

/**
 * A redelivery backoff's parameters are out of range or of the wrong type.
 * @example
 * try { FixedRedeliveryBackoff.builder().delayMs(-1).build(); }
 * catch (error) { console.log(error instanceof InvalidRedeliveryBackoffError); } // true
 */
export class InvalidRedeliveryBackoffError extends ValidationError {}

/** No redelivery backoff is registered under the given class name. */
export class UnknownRedeliveryBackoffClassError extends ValidationError {}

/** A redelivery backoff class name is registered twice. */
export class DuplicateRedeliveryBackoffClassError extends ConflictError {}

/** An ack timeout is neither 0 (disabled) nor a whole number of milliseconds >= 1000. */
export class InvalidAckTimeoutError extends ValidationError {}

/** A subscription type is not one of Pulsar's (Exclusive, Failover, Shared, Key_Shared). */
export class InvalidSubscriptionTypeError extends ValidationError {}

/** A position names no entry of the topic partition (its ledger is unknown or it was never written). */
export class PositionNotFoundError extends NotFoundError {}

/**
 * A ledger layout breaks an invariant (ledger ids not ascending, negative entry counts, no ledger).
 * Internal: the layout comes from storage, not from a user, so this maps to 500.
 */
export class InvalidLedgerLayoutError extends AcklineError {}

/**
 * A function invocation that did not answer: the function threw, timed out or crashed, or the
 * invocation was refused. Not in a family: it never answers an HTTP request.
 */
export class FunctionInvocationError extends AcklineError {}
