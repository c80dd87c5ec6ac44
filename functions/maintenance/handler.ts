import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { createDependencies, type Dependencies } from '../../shared/adapters/create-dependencies.ts';
import { enforcePolicies } from '../../shared/application/maintenance/enforce-policies.ts';
import {
  type MaintenanceSummary,
  maintainSubscriptions,
} from '../../shared/application/maintenance/maintain-subscriptions.ts';
import { loadConfig, maintenanceMetricNames } from '../../shared/config/load-config.ts';
import { observedHandler } from '../../shared/lambda/observed-handler.ts';

export type MaintenanceHandler = (event: ScheduledEvent, context: Context) => Promise<MaintenanceSummary>;

/**
 * Work stops being started this long before the Lambda timeout (MAINTENANCE_TIMEOUT_SECONDS, 50 s:
 * so 30 s of a run take work): what was started finishes (one subscription is about ten storage
 * calls, and the SDK's retries of a throttled one back off for up to 15 s in all), and the summary
 * and metrics are written, inside it.
 */
export const STOP_BEFORE_TIMEOUT_MS = 20_000;

/** How many non-empty dead-letter queues one summary line names. */
const LOGGED_DEAD_LETTER_QUEUES = 20;

/**
 * Scheduled maintenance (EventBridge, every minute; each run ends before the next is due): reports the
 * subscription dead-letter queues, folds acknowledged entries into mark-delete
 * positions, measures how late the backlogs are, then enforces the namespace and
 * topic policies (message TTL, retention: enforcePolicies).
 *
 * adapter (schedule) -> maintainSubscriptions -> catalog, cursor store, ledger, delivery queue
 *
 * Time budget: the run stops starting work STOP_BEFORE_TIMEOUT_MS before the
 * timeout and the next run carries on after the last subscription this one
 * reached. That position lives in this container only; a cold start begins at
 * a random subscription instead, so every one is reached even if no container
 * ever stays warm.
 *
 * A schedule's event is one invocation, not a batch of records: there is no partial failure to
 * report, so no batch processor. A step that fails is logged and counted and the run goes on; an
 * error that escapes fails the invocation. The metrics are flushed after the run, or after the
 * error (observedHandler).
 */
export function makeHandler(deps: Dependencies, random: () => number = Math.random): MaintenanceHandler {
  let resumeAfter: string | undefined;
  let coldStart = true;
  return observedHandler<ScheduledEvent, MaintenanceSummary>(deps.logger, deps.metrics).handler(
    (_event, context) => run(context),
  );

  async function run(context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<MaintenanceSummary> {
    const { logger, metrics, ports } = deps;
    const deadlineMs = ports.clock.nowMs() + context.getRemainingTimeInMillis() - STOP_BEFORE_TIMEOUT_MS;
    const summary = await maintainSubscriptions(ports, {
      deadlineMs,
      ...(resumeAfter !== undefined ? { resumeAfter } : coldStart ? { startAt: random() } : {}),
      onFailure: ({ step, target, error }) =>
        logger.error('maintenance step failed', {
          step,
          target,
          error: error instanceof Error ? error : String(error),
        }),
    });
    coldStart = false;
    resumeAfter = summary.resumeAfter;
    const policies = await enforcePolicies(ports, {
      deadlineMs,
      activePartitions: summary.activePartitions,
      onFailure: (target, error) =>
        logger.error('maintenance step failed', {
          step: 'policies',
          target,
          error: error instanceof Error ? error : String(error),
        }),
    });
    logger.info('maintenance policies', { ...policies });
    if (policies.expiredBatches > 0) {
      // Kept batches past their expiry: maintenance did not run for a quarter of the entry expiry.
      logger.error('kept entries expired before renewal', { expiredBatches: policies.expiredBatches });
    }

    const names = maintenanceMetricNames;
    metrics.addMetric(names.runs, MetricUnit.Count, 1);
    metrics.addMetric(names.failures, MetricUnit.Count, summary.failures);
    metrics.addMetric(names.foldedCursors, MetricUnit.Count, summary.foldedCursors);
    metrics.addMetric(names.foldedEntries, MetricUnit.Count, summary.foldedEntries);
    metrics.addMetric(names.deadLetterMessages, MetricUnit.Count, summary.deadLetterMessages);
    metrics.addMetric(
      names.backlogAgeSeconds,
      MetricUnit.Seconds,
      Math.floor((summary.oldestBacklog?.ageMs ?? 0) / 1000),
    );
    logger.info('maintenance run', {
      subscriptions: summary.subscriptions,
      deadLetterQueuesChecked: summary.deadLetterQueuesChecked,
      deadLetterMessages: summary.deadLetterMessages,
      deadLetterQueues: summary.deadLetterQueues.slice(0, LOGGED_DEAD_LETTER_QUEUES),
      visited: summary.visited,
      foldedCursors: summary.foldedCursors,
      foldedEntries: summary.foldedEntries,
      oldestBacklog: summary.oldestBacklog,
      failures: summary.failures,
      complete: summary.resumeAfter === undefined,
      left: summary.left,
      resumeAfter: summary.resumeAfter,
    });
    return summary;
  }
}

let cached: MaintenanceHandler | undefined;

/** Lambda entry point: dependencies are built once per cold start. */
export const handler: MaintenanceHandler = (event, context) => {
  cached ??= makeHandler(createDependencies(loadConfig(), 'maintenance'));
  return cached(event, context);
};
