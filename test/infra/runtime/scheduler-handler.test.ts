// The scheduler function's wiring, in process: its partial batch response (the event source
// sets ReportBatchItemFailures), what it logs and the EMF metrics it flushes. The jobs themselves
// are covered by the use case's tests (test/unit/application/maintenance).
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { makeHandler } from '../../../functions/scheduler/handler.ts';
import type { Dependencies } from '../../../shared/adapters/create-dependencies.ts';
import { encodeJob } from '../../../shared/adapters/sqs/sqs-scheduler.ts';
import { METRICS_NAMESPACE, serviceNameOf } from '../../../shared/config/load-config.ts';
import type { ScheduledJob } from '../../../shared/ports/scheduler.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../support/manual-clock.ts';
import { lambdaContext, RecordingLogger, RecordingMetrics } from './recording-observability.ts';

const NOW_MS = 1_700_000_000_000;

function scheduler() {
  const clock = new ManualClock(NOW_MS);
  const delayQueue = new InMemoryScheduler();
  const logger = new RecordingLogger({ serviceName: serviceNameOf('scheduler') });
  const metrics = new RecordingMetrics({
    namespace: METRICS_NAMESPACE,
    serviceName: serviceNameOf('scheduler'),
    defaultDimensions: { stage: 'test' },
  });
  const { ports } = inMemoryPorts({
    clock,
    scheduler: delayQueue,
    // As createDependencies wires them: the use cases' counters are the function's metrics.
    counters: { add: (name, value) => metrics.addMetric(name, MetricUnit.Count, value) },
  });
  const deps = { config: { stage: 'test' }, logger, metrics, ports } as unknown as Dependencies;
  return { delayQueue, logger, metrics, handler: makeHandler(deps) };
}

function record(messageId: string, body: string): SQSRecord {
  return {
    messageId,
    receiptHandle: `receipt-${messageId}`,
    body,
    attributes: {} as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:ackline-test-scheduler',
    awsRegion: 'us-east-1',
  };
}

const job = (job: ScheduledJob) => encodeJob(job);
/** Not due for an hour: the scheduler sends it on for another hop (counted: schedulerHops). */
const later = job({ kind: 'ring', cursorId: 'c1', dueAtMs: NOW_MS + 3_600_000 });
/** Due now: rings the cursor's doorbell. */
const due = job({ kind: 'ring', cursorId: 'c2', dueAtMs: NOW_MS });

describe('scheduler handler', () => {
  it('names only the failed records, logs each with its messageId and the Lambda context, and flushes what it counted', async () => {
    const { handler, delayQueue, logger, metrics } = scheduler();

    const response = await handler(
      { Records: [record('r1', later), record('r2', 'not json'), record('r3', due)] },
      lambdaContext('ackline-scheduler', 'lambda-1'),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'r2' }] });
    expect(delayQueue.jobs).toHaveLength(1);
    expect(logger.lines).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        message: 'scheduled job failed',
        messageId: 'r2',
        function_request_id: 'lambda-1',
        error: expect.objectContaining({ message: 'Scheduled job is not JSON' }),
      }),
    ]);
    expect(metrics.values()).toEqual([{ schedulerHops: 1 }]);
  });

  it('answers a batch whose every record failed by naming every record, not by throwing', async () => {
    const { handler, delayQueue } = scheduler();
    delayQueue.failNext('schedule', new Error('throttled'));

    const response = await handler(
      { Records: [record('r1', later), record('r2', '{}')] },
      lambdaContext('ackline-scheduler', 'lambda-2'),
    );

    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(['r1', 'r2']);
  });

  it('answers no failure, flushes nothing and logs nothing for a batch that succeeded and counted nothing', async () => {
    const { handler, logger, metrics } = scheduler();

    const response = await handler(
      { Records: [record('r1', due)] },
      lambdaContext('ackline-scheduler', 'l3'),
    );

    expect(response).toEqual({ batchItemFailures: [] });
    expect(metrics.flushed).toEqual([]);
    expect(logger.lines).toEqual([]);
  });
});
