// The maintenance function's wiring, in process: what it logs and the EMF
// metrics CloudWatch would extract (the alarms of infra/constructs/observability.ts
// watch them), and the resume point it keeps between invocations. The use case
// itself is covered by the engine's tests (test/unit/application/engine).
import type { ScheduledEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { makeHandler, STOP_BEFORE_TIMEOUT_MS } from '../../../functions/maintenance/handler.ts';
import type { Dependencies } from '../../../shared/adapters/create-dependencies.ts';
import { doorbellOf } from '../../../shared/application/consumers/doorbells.ts';
import {
  METRICS_NAMESPACE,
  maintenanceMetricNames,
  serviceNameOf,
} from '../../../shared/config/load-config.ts';
import { Cursor } from '../../../shared/domain/cursor.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../support/in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from '../../support/in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from '../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../support/in-memory-ledger.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryTopicCatalog } from '../../support/in-memory-topic-catalog.ts';
import { ManualClock } from '../../support/manual-clock.ts';
import { lambdaContext, RecordingLogger, RecordingMetrics } from './recording-observability.ts';

const HOUR_MS = 3_600_000;

/** Reading a cursor's head takes `loadMs` of the clock, so a test can run out of time; it can fail once. */
class SlowDispatchStore extends InMemoryDispatchStore {
  readonly loaded: string[] = [];
  private failure: Error | undefined;
  constructor(
    private readonly clock: ManualClock,
    private readonly loadMs: number,
  ) {
    super();
  }
  failNextRead(error: Error): void {
    this.failure = error;
  }
  override async readHead(cursorId: string) {
    if (this.failure) {
      const failure = this.failure;
      this.failure = undefined;
      throw failure;
    }
    if (this.loaded[this.loaded.length - 1] !== cursorId) {
      this.loaded.push(cursorId);
      this.clock.advance(this.loadMs);
    }
    return super.readHead(cursorId);
  }
}

/** Three subscriptions of one topic with one message each; `a` acked it, `c`'s dead-letter queue holds 2 tokens. */
async function maintenance(loadMs = 0) {
  const clock = new ManualClock(1_700_000_000_000);
  const catalog = new InMemoryTopicCatalog();
  const ledger = new InMemoryLedger(100);
  const dispatch = new SlowDispatchStore(clock, loadMs);
  const deliveryQueue = new InMemoryDeliveryQueue();
  const consumers = new InMemoryConsumerRegistry();
  const { ports } = inMemoryPorts({ catalog, ledger, dispatch, deliveryQueue, consumers, clock });
  const cursors = ports.cursors;

  const topic = TopicName.parse('persistent://public/default/orders');
  await catalog.createTopic({ topic, partitions: 0, createdAtMs: clock.nowMs() });
  await ledger.initialize(topic);
  const {
    positions: [position],
  } = await ledger.append(topic, [{ payload: 'm', properties: {} }], clock.nowMs());
  for (const name of ['a', 'b', 'c']) {
    const record = { name, type: 'Shared' as const, cursorId: `cursor-${name}`, createdAtMs: clock.nowMs() };
    await catalog.createSubscription(topic, record);
    await cursors.create(
      record.cursorId,
      Cursor.atEarliest((await ledger.state(topic))!.ledgers).markDeletePosition,
    );
    await deliveryQueue.create(doorbellOf(record.cursorId));
  }
  await cursors.acknowledge('cursor-a', [position!]);
  deliveryQueue.setDeadLetterCount('cursor-c', 2);
  clock.advance(2 * HOUR_MS);
  dispatch.loaded.length = 0;

  const logger = new RecordingLogger({ serviceName: serviceNameOf('maintenance') });
  const metrics = new RecordingMetrics({
    namespace: METRICS_NAMESPACE,
    serviceName: serviceNameOf('maintenance'),
    defaultDimensions: { stage: 'test' },
  });
  const deps = {
    config: { stage: 'test' },
    logger,
    metrics,
    ports,
    router: new RoundRobinRouter(0),
  } as unknown as Dependencies;
  return { clock, dispatch, logger, metrics, handler: makeHandler(deps, () => 0) };
}

/** The event the EventBridge rule delivers (the handler reads none of it). */
const scheduledEvent: ScheduledEvent = {
  version: '0',
  id: 'e1',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2023-11-14T22:13:20Z',
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/MaintenanceSchedule'],
  detail: {},
};

let invocations = 0;
/** A Lambda context with `ms` left, as the runtime passes it. */
const withRemaining = (ms: number) => ({
  ...lambdaContext(serviceNameOf('maintenance'), `maintenance-${++invocations}`),
  getRemainingTimeInMillis: () => ms,
});

describe('maintenance handler', () => {
  it('emits one EMF document per run with the metrics the alarms watch, and logs a summary', async () => {
    const { handler, metrics, logger } = await maintenance();

    await handler(scheduledEvent, withRemaining(240_000));

    expect(metrics.values()).toEqual([
      {
        [maintenanceMetricNames.runs]: 1,
        [maintenanceMetricNames.failures]: 0,
        [maintenanceMetricNames.foldedCursors]: 1,
        [maintenanceMetricNames.foldedEntries]: 1,
        [maintenanceMetricNames.deadLetterMessages]: 2,
        [maintenanceMetricNames.backlogAgeSeconds]: 2 * 3600,
      },
    ]);
    const directive = metrics.flushed[0]?._aws.CloudWatchMetrics[0];
    const units = Object.fromEntries(directive?.Metrics.map((m) => [m.Name, m.Unit]) ?? []);
    expect(units[maintenanceMetricNames.backlogAgeSeconds]).toBe('Seconds');
    expect(directive?.Dimensions).toEqual([['service', 'stage']]);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        message: 'maintenance run',
        function_request_id: expect.stringMatching(/^maintenance-/),
        subscriptions: 3,
        visited: 3,
        foldedCursors: 1,
        deadLetterMessages: 2,
        deadLetterQueues: [expect.objectContaining({ subscription: 'c', messages: 2 })],
        oldestBacklog: expect.objectContaining({ ageMs: 2 * HOUR_MS }),
        complete: true,
      }),
    );
  });

  it('logs each failed step and counts it, and still reports the run', async () => {
    const { handler, metrics, logger, dispatch } = await maintenance();
    dispatch.failNextRead(new Error('throttled'));

    await handler(scheduledEvent, withRemaining(240_000));

    expect(metrics.values()[0]).toMatchObject({
      [maintenanceMetricNames.runs]: 1,
      [maintenanceMetricNames.failures]: 1,
    });
    expect(logger.lines).toContainEqual(
      expect.objectContaining({ level: 'ERROR', message: 'maintenance step failed', step: 'fold' }),
    );
  });

  it('stops STOP_BEFORE_TIMEOUT_MS before the timeout and carries on there in the next invocation', async () => {
    // Each cursor read takes 600 ms and each run has 500 ms before its stop: one subscription per run.
    const { handler, dispatch } = await maintenance(600);
    const budget = withRemaining(STOP_BEFORE_TIMEOUT_MS + 500);

    const runs = [
      await handler(scheduledEvent, budget),
      await handler(scheduledEvent, budget),
      await handler(scheduledEvent, budget),
    ];

    expect(dispatch.loaded).toEqual(['cursor-a', 'cursor-b', 'cursor-c']);
    expect(runs.map((run) => run.visited)).toEqual([1, 1, 1]);
    expect(runs[0]?.resumeAfter).toBe(JSON.stringify(['persistent://public/default/orders', 'a']));
  });
});
