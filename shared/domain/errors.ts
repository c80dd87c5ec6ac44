/**
 * The errors of ackline. One root, {@link AcklineError}; families by HTTP meaning, which the HTTP
 * layer maps to a status by `instanceof` (never by name). A specific error extends its family and
 * lives with its concept (InvalidTopicNameError in topic-name.ts, ConsumerFencedError in
 * ownership.ts, the catalog's in catalog-errors.ts).
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

/**
 * The request cannot be served now, and nothing was done: a retry may succeed (503), e.g. one
 * whose answer could no longer arrive in time.
 */
export class ServiceUnavailableError extends AcklineError {}
