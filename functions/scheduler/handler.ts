import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { decodeJob } from '../../shared/adapters/sqs/sqs-scheduler.ts';
import { runScheduledJob } from '../../shared/application/maintenance/run-scheduled-job.ts';
import { loadConfig } from '../../shared/config/load-config.ts';
import { observedHandler } from '../../shared/lambda/observed-handler.ts';

export type SchedulerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The scheduler, on its SQS delay queue: owns every timing decision (backoff
 * delays, hops past SQS's 900 s limit, ack-timeout checks).
 *
 * adapter (SQS event) -> runScheduledJob -> delivery queue / cursor store
 *
 * Partial batch failures (the event source sets ReportBatchItemFailures), by
 * Powertools' batch processor, whose contract is this handler's: each record
 * is one job, independent of the others, and the records run concurrently. A
 * record that fails is logged and named in `batchItemFailures`, so SQS shows
 * it again after its visibility timeout (and moves it to the dead-letter queue
 * past maxReceiveCount); the others are done. A batch whose every record
 * failed is answered the same way, every record named, rather than by the
 * processor's FullBatchFailureError: SQS retries the whole batch either way,
 * and this keeps one answer for every outcome.
 */
export function makeHandler(deps: Dependencies): SchedulerHandler {
  const runJob = async (record: SQSRecord): Promise<void> => {
    try {
      await runScheduledJob(deps.ports, decodeJob(record.body));
    } catch (error) {
      deps.logger.error('scheduled job failed', { error: error as Error, messageId: record.messageId });
      // The processor reads the failure's message: whatever was thrown fails this record only.
      throw error instanceof Error ? error : new Error(String(error));
    }
  };
  return observedHandler<SQSEvent, SQSBatchResponse>(deps.logger, deps.metrics).handler((event) =>
    // A processor per invocation: its state (records, failures) is the invocation's, even where
    // invocations share a process (the embedded stack, tests), at the cost of one small object.
    processPartialResponse(event, runJob, new BatchProcessor(EventType.SQS), {
      throwOnFullBatchFailure: false,
    }),
  );
}

let cached: SchedulerHandler | undefined;

/** Lambda entry point: dependencies are built once per cold start. */
export const handler: SchedulerHandler = (event, context) => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'scheduler'));
  return cached(event, context);
};
