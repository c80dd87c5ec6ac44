/**
 * The errors of the ackline client SDK and admin client. One root, {@link AcklineClientError}, which
 * carries the HTTP `statusCode` and the server's `reason` (its `{"reason": "..."}` body, as Pulsar's
 * REST APIs answer). Errors raised before any HTTP answer use status -1, as Pulsar's
 * `PulsarAdminException`. Admin calls throw {@link AcklineAdminError} and its subclasses; producers
 * and consumers throw the other subclasses of the root.
 */

/** Options accepted by every client error. */
export interface AcklineClientErrorOptions {
  /** The lower-level error that caused this one. */
  readonly cause?: unknown;
  /** The HTTP status text, e.g. `Precondition Failed`; empty when there was no HTTP answer. */
  readonly statusText?: string;
}

/** Options accepted by every admin client error. */
export type AcklineAdminErrorOptions = AcklineClientErrorOptions;

/** Status used when no HTTP answer was received (bad argument, network failure, closed consumer). */
export const NO_HTTP_STATUS = -1;

/**
 * Root of every error the ackline clients throw. The message reads
 * `412 Precondition Failed: <reason>` for an HTTP error, or just the reason when there was no HTTP
 * answer.
 *
 * @example
 * try {
 *   await consumer.acknowledgeCumulative(message);
 * } catch (error) {
 *   if (error instanceof AcklineClientError && error.statusCode === 412) console.log(error.reason);
 * }
 */
export class AcklineClientError extends Error {
  /** The HTTP status, or -1 ({@link NO_HTTP_STATUS}) when no HTTP answer was received. */
  readonly statusCode: number;
  /** Why it failed: the server's `reason`, else the HTTP status text. */
  readonly reason: string;
  readonly statusText: string;

  constructor(statusCode: number, reason: string, options?: AcklineClientErrorOptions) {
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

/**
 * A producer or consumer setting, or an argument, was refused before any request was sent (Pulsar's
 * `InvalidConfigurationException`): a missing topic, both `negativeAckRedeliveryDelay` and
 * `negativeAckRedeliveryBackoff`, a cumulative acknowledgement on a Shared subscription.
 *
 * @example
 * await client.newConsumer().topic('my-tenant/my-ns/orders').subscribe(); // rejects: no subscriptionName
 */
export class AcklineClientArgumentError extends AcklineClientError {
  constructor(reason: string, options?: AcklineClientErrorOptions) {
    super(NO_HTTP_STATUS, reason, options);
  }
}

/**
 * The ackline service could not be reached (connection refused, DNS failure, timeout).
 *
 * @example
 * if (error instanceof AcklineClientConnectionError) console.log(`retry later: ${error.url}`);
 */
export class AcklineClientConnectionError extends AcklineClientError {
  /** The URL that could not be reached. */
  readonly url: string;

  constructor(url: string, reason: string, options?: AcklineClientErrorOptions) {
    super(NO_HTTP_STATUS, reason, options);
    this.url = url;
  }
}

/**
 * The producer or consumer (or its client) was closed (Pulsar's `AlreadyClosedException`). A
 * `receive()` still waiting when its consumer closes rejects with it.
 *
 * @example
 * const pending = consumer.receive();
 * await consumer.close();
 * await pending; // rejects with AcklineClientClosedError
 */
export class AcklineClientClosedError extends AcklineClientError {
  constructor(reason: string, options?: AcklineClientErrorOptions) {
    super(NO_HTTP_STATUS, reason, options);
  }
}

/**
 * The server answered the produce request but refused this message: its entry in
 * `messagePublishResults` has a non-zero `errorCode`. The other messages of the same request may have
 * been published.
 *
 * @example
 * try {
 *   await producer.send('order 1');
 * } catch (error) {
 *   if (error instanceof AcklinePublishError) console.log(error.errorCode, error.reason);
 * }
 */
export class AcklinePublishError extends AcklineClientError {
  /** The `errorCode` of the message's publish result (never 0). */
  readonly errorCode: number;

  constructor(errorCode: number, reason: string, options?: AcklineClientErrorOptions) {
    super(200, reason, { statusText: 'OK', ...options });
    this.errorCode = errorCode;
  }
}

/**
 * Pulsar's `ProducerFencedException`: this exclusive producer was replaced (another producer took
 * the topic with `ExclusiveWithFencing`, or took it after this one's lease lapsed), or, when
 * creating an `Exclusive` producer, another exclusive producer holds the topic. Nothing was written;
 * the producer stays fenced (every later send rejects with this error).
 *
 * @example
 * try { await producer.send('x'); } catch (error) { if (error instanceof AcklineProducerFencedError) await producer.close(); }
 */
export class AcklineProducerFencedError extends AcklineClientError {}

/**
 * Pulsar's `ProducerBusyException`: the topic has an exclusive producer, so a Shared producer may not
 * be created there nor publish. Nothing was written.
 *
 * @example
 * try { await client.newProducer().topic(t).create(); } catch (error) { if (error instanceof AcklineProducerBusyError) console.log(error.reason); }
 */
export class AcklineProducerBusyError extends AcklineClientError {}

/**
 * Root of every error the admin client throws; an {@link AcklineClientError}.
 *
 * @example
 * try {
 *   await admin.topics().delete('my-tenant/my-ns/orders');
 * } catch (error) {
 *   if (error instanceof AcklineAdminError && error.statusCode === 404) console.log(error.reason);
 * }
 */
export class AcklineAdminError extends AcklineClientError {}

/**
 * An argument was refused before any request was sent (malformed topic name, id or count).
 * @example
 * try { await admin.topics().createNonPartitionedTopic('not a topic'); }
 * catch (error) { if (error instanceof AcklineAdminArgumentError) console.error(error.message); }
 */
export class AcklineAdminArgumentError extends AcklineAdminError {
  constructor(reason: string, options?: AcklineAdminErrorOptions) {
    super(NO_HTTP_STATUS, reason, options);
  }
}

/**
 * The admin REST API could not be reached (connection refused, DNS failure, timeout).
 * @example
 * try { await admin.topics().createNonPartitionedTopic('persistent://public/default/orders'); }
 * catch (error) { if (error instanceof AcklineAdminConnectionError) retryLater(); }
 */
export class AcklineAdminConnectionError extends AcklineAdminError {
  /** The URL that could not be reached. */
  readonly url: string;

  constructor(url: string, reason: string, options?: AcklineAdminErrorOptions) {
    super(NO_HTTP_STATUS, reason, options);
    this.url = url;
  }
}
