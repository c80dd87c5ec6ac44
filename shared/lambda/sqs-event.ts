/**
 * The parts of Lambda's SQS event, batch response and context that `acklineConsumer()` reads, as
 * structural types: `SQSEvent`, `SQSBatchResponse` and `Context` of `@types/aws-lambda` fit them,
 * so a handler typed `SQSHandler` accepts an ackline consumer, and the package needs no
 * `@types/aws-lambda`.
 */

/** One SQS record of the event (`SQSRecord`): the fields the consumer reads. */
export interface SqsEventRecord {
  /** SQS's message id: what a partial batch failure names. */
  readonly messageId: string;
  /** The ARN of the queue the record came from: the subscription's queue. */
  readonly eventSourceARN: string;
  readonly body: string;
}

/** Lambda's SQS event (`SQSEvent`). */
export interface SqsEvent {
  readonly Records: readonly SqsEventRecord[];
}

/** The partial batch response (`SQSBatchResponse`; the event source needs `ReportBatchItemFailures`). */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** The invocation context (`Context`): the consumer reads the time left. */
export interface InvocationContext {
  /** Milliseconds left before Lambda stops the invocation. */
  getRemainingTimeInMillis(): number;
}
