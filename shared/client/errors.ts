/**
 * The errors of the ackline admin client. One root, {@link AcklineAdminError}, which carries the HTTP
 * `statusCode` and the server's `reason` (its `{"reason": "..."}` body, as Pulsar's admin REST API
 * answers). Errors raised before any HTTP answer use status -1, as Pulsar's `PulsarAdminException`.
 */

/** Options accepted by every admin client error. */
export interface AcklineAdminErrorOptions {
  /** The lower-level error that caused this one. */
  readonly cause?: unknown;
  /** The HTTP status text, e.g. `Precondition Failed`; empty when there was no HTTP answer. */
  readonly statusText?: string;
}

/** Status used when no HTTP answer was received (bad argument, network failure). */
export const NO_HTTP_STATUS = -1;

/**
 * Root of every error the admin client throws. The message reads `412 Precondition Failed: <reason>`
 * for an HTTP error, or just the reason when there was no HTTP answer.
 *
 * @example
 * try {
 *   await admin.topics().delete('my-tenant/my-ns/orders');
 * } catch (error) {
 *   if (error instanceof AcklineAdminError && error.statusCode === 404) console.log(error.reason);
 * }
 */
export class AcklineAdminError extends Error {
  /** The HTTP status, or -1 ({@link NO_HTTP_STATUS}) when no HTTP answer was received. */
  readonly statusCode: number;
  /** Why it failed: the server's `reason`, else the HTTP status text. */
  readonly reason: string;
  readonly statusText: string;

  constructor(statusCode: number, reason: string, options?: AcklineAdminErrorOptions) {
    const statusText = options?.statusText ?? '';
    const status = statusCode === NO_HTTP_STATUS ? '' : `${statusCode}${statusText ? ` ${statusText}` : ''}`;
    super(
      status ? `${status}: ${reason}` : reason,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.statusCode = statusCode;
    this.reason = reason;
    this.statusText = statusText;
  }
}

/** An argument was refused before any request was sent (malformed topic name, id or count). */
export class AcklineAdminArgumentError extends AcklineAdminError {
  constructor(reason: string, options?: AcklineAdminErrorOptions) {
    super(NO_HTTP_STATUS, reason, options);
  }
}

/** The admin REST API could not be reached (connection refused, DNS failure, timeout). */
export class AcklineAdminConnectionError extends AcklineAdminError {
  /** The URL that could not be reached. */
  readonly url: string;

  constructor(url: string, reason: string, options?: AcklineAdminErrorOptions) {
    super(NO_HTTP_STATUS, reason, options);
    this.url = url;
  }
}
