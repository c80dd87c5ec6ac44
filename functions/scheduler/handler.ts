import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { decodeJob } from '../../shared/adapters/sqs/sqs-scheduler.ts';
import { runScheduledJob } from '../../shared/application/maintenance/run-scheduled-job.ts';
import { loadConfig } from '../../shared/config/load-config.ts';

export type SchedulerHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

/**
 * The scheduler, on its SQS delay queue: owns every timing decision (backoff
 * delays, hops past SQS's 900 s limit, ack-timeout checks). Partial batch
 * failures: a record that fails is reported and retried by SQS; the others
 * are done.
 *
 * adapter (SQS event) -> runScheduledJob -> delivery queue / cursor store
 */
export function makeHandler(deps: Dependencies): SchedulerHandler {
  return async (event) => {
    const failures: { itemIdentifier: string }[] = [];
    await Promise.all(
      event.Records.map(async (record) => {
        try {
          await runScheduledJob(deps.ports, decodeJob(record.body));
        } catch (error) {
          deps.logger.error('scheduled job failed', { error: error as Error, messageId: record.messageId });
          failures.push({ itemIdentifier: record.messageId });
        }
      }),
    );
    deps.metrics.publishStoredMetrics();
    return { batchItemFailures: failures };
  };
}

let cached: SchedulerHandler | undefined;

export const handler: SchedulerHandler = (event) => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'scheduler'));
  return cached(event);
};
