import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import middy, { type MiddlewareObj, type MiddyfiedHandler } from '@middy/core';

/**
 * The one handler shape of every ackline function, whether it serves HTTP, SQS or a schedule: a
 * middy handler under Powertools' logger context and a metrics flush. Every log line of the
 * invocation carries the Lambda context (function, request id, cold start), and the keys a
 * handler appended are dropped when it ends; the metrics it added are flushed once, after the
 * response or the error. The caller adds its own middlewares and its handler.
 *
 * As any middy handler, it answers middy's TimeoutError 5 ms before the context's
 * `getRemainingTimeInMillis()` runs out, when the context has one.
 *
 * @example
 * const handler = observedHandler<SQSEvent, SQSBatchResponse>(deps.logger, deps.metrics).handler(
 *   async (event) => processPartialResponse(event, runJob, new BatchProcessor(EventType.SQS)),
 * );
 */
export function observedHandler<TEvent, TResult>(
  logger: Logger,
  metrics?: Metrics,
): MiddyfiedHandler<TEvent, TResult> {
  return middy<TEvent, TResult>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(flushMetrics<TEvent, TResult>(metrics));
}

/**
 * Flushes the metrics the invocation added, after the response or the error.
 * Powertools' own logMetrics middleware (and a bare `publishStoredMetrics()`)
 * would also flush an empty buffer and log "No application metrics to publish"
 * on every call that adds none (most routes, most scheduler batches), so this
 * one flushes only when there is something to publish.
 */
function flushMetrics<TEvent, TResult>(metrics: Metrics | undefined): MiddlewareObj<TEvent, TResult> {
  const flush = async () => {
    if (metrics?.hasStoredMetrics()) metrics.publishStoredMetrics();
  };
  return { after: flush, onError: flush };
}
