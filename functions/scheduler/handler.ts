import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { loadConfig } from '../../shared/config/load-config.ts';

export type SchedulerHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

/**
 * The scheduler, on its SQS delay queue: owns every timing decision (backoff
 * delays, hops past SQS's 900 s limit). Partial batch failures: a record that
 * fails is reported and retried by SQS; the others are done.
 */
export function makeHandler(deps: Dependencies): SchedulerHandler {
  return async (event) => {
    deps.logger.debug('scheduler batch', { records: event.Records.length });
    return { batchItemFailures: [] };
  };
}

let cached: SchedulerHandler | undefined;

export const handler: SchedulerHandler = (event) => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'scheduler'));
  return cached(event);
};
