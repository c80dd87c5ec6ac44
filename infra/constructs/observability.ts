import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  METRICS_NAMESPACE,
  maintenanceMetricNames,
  metricNames,
  serviceNameOf,
} from '../../shared/config/load-config.ts';
import { MAX_RETENTION_SECONDS } from '../../shared/config/resources.ts';
import { type FunctionName, MAINTENANCE_INTERVAL_MS } from '../api-routes.ts';

export interface ObservabilityProps {
  readonly stage: string;
  readonly api: RestApi;
  readonly functions: Readonly<Record<FunctionName, IFunction>>;
  readonly schedulerQueue: IQueue;
  readonly schedulerDeadLetterQueue: IQueue;
  /** The stateful stack's tables, by their logical name (`Catalog`, ...): throttling is watched. */
  readonly tables: readonly { readonly logicalName: string; readonly table: ITable }[];
  /** An SNS topic that hears every alarm (ALARM and back to OK); none by default. */
  readonly alarmTopicArn?: string;
}

/**
 * How old the scheduler queue's oldest message may get. One hop is at most
 * 900 s (SQS DelaySeconds) and the scheduler takes a due message within
 * seconds, so a message older than a hop plus five minutes means the
 * scheduler is failing or falling behind.
 */
export const SCHEDULER_QUEUE_MAX_AGE_SECONDS = 900 + 300;

const PERIOD = Duration.minutes(5);

/** How often EventBridge runs the maintenance function. */
export const MAINTENANCE_INTERVAL = Duration.minutes(MAINTENANCE_INTERVAL_MS / 60_000);

/**
 * The period of the alarms on what the maintenance function reports once per
 * run: three runs, so that every period holds at least two reports whatever
 * the schedule's jitter (a period without one would read as "no dead letters").
 */
export const MAINTENANCE_REPORT_PERIOD = Duration.minutes(15);

/**
 * How long a due message may wait unacknowledged on a subscription before the
 * backlog-age alarm fires: half of SQS's 14-day retention. Its delivery token
 * is no older than that, give or take one 900 s SQS delay (a token is sent when
 * the message is published, falls due or is redelivered), so the operator has
 * a week before SQS starts dropping the oldest tokens; after that only a queue
 * rebuild delivers those messages. A subscription nobody consumes raises it
 * too, as it should: Pulsar would keep its backlog, ackline's tokens expire.
 */
export const SUBSCRIPTION_BACKLOG_MAX_AGE_SECONDS = MAX_RETENTION_SECONDS / 2;

/**
 * Alarms and one dashboard for a stage:
 * - scheduler dead-letter queue depth > 0 (a message failed maxReceiveCount times);
 * - age of the scheduler queue's oldest message > SCHEDULER_QUEUE_MAX_AGE_SECONDS;
 * - API 5xx >= 1 in 5 minutes (the handlers answer every known error with a 4xx);
 * - per table, read and write throttle events >= 1 in 5 minutes (tableThrottleAlarms);
 * - per function, errors >= 1 and throttles >= 1 in 5 minutes. The authorizer
 *   answers a refused token (it names the failed check for the handlers' 401)
 *   rather than throwing, so its errors are failures only, as any function's;
 * - the subscription queues and cursors the control plane creates at run time,
 *   which no stack can name, through what the maintenance function reports
 *   each run (shared/application/maintenance/maintain-subscriptions.ts): tokens in any
 *   subscription dead-letter queue > 0; a due message unacknowledged for more
 *   than SUBSCRIPTION_BACKLOG_MAX_AGE_SECONDS; and no completed maintenance run
 *   in MAINTENANCE_REPORT_PERIOD, without which those two would go quiet.
 * Every alarm but the last treats missing data as OK: no traffic is not a
 * failure. The last treats it as breaching: silence is what it watches for.
 */
export class Observability extends Construct {
  public readonly alarms: readonly Alarm[];
  public readonly dashboard: Dashboard;
  private readonly stage: string;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    this.stage = props.stage;
    const watched = watchedMetrics(props);
    const alarms = [
      ...this.schedulerAndApiAlarms(watched),
      ...this.functionAlarms(props.functions),
      ...this.tableThrottleAlarms(props.tables),
      ...this.subscriptionAlarms(watched),
    ];
    this.alarms = alarms;

    if (props.alarmTopicArn !== undefined) {
      const action = new SnsAction(Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn));
      for (const each of alarms) {
        each.addAlarmAction(action);
        each.addOkAction(action);
      }
    }

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `ackline-${props.stage}`,
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ackline ${props.stage}\nAlarms, the REST API, the functions, the scheduler queue and the subscriptions (as maintenance reports them). Runbook: docs/operations.md#logs-metrics-alarms.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
    this.dashboard.addWidgets(...apiWidgets(props.api, watched));
    this.dashboard.addWidgets(...this.publishedAndSchedulerWidgets(props.schedulerQueue, watched));
    this.dashboard.addWidgets(...this.subscriptionWidgets(watched));
    this.dashboard.addWidgets(tableThrottleWidget(props.tables));
    this.dashboard.addWidgets(...functionWidgets(props.functions));
  }

  /** An alarm named `ackline-<stage>-<kebab id>`, on one evaluation period; missing data is OK unless told. */
  private alarm(alarmId: string, spec: AlarmSpec): Alarm {
    return new Alarm(this, alarmId, {
      alarmName: `ackline-${this.stage}-${kebab(alarmId)}`,
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: spec.comparisonOperator,
      evaluationPeriods: 1,
      treatMissingData: spec.treatMissingData ?? TreatMissingData.NOT_BREACHING,
    });
  }

  private schedulerAndApiAlarms(watched: WatchedMetrics): Alarm[] {
    return [
      this.alarm('SchedulerDeadLetterDepth', {
        metric: watched.schedulerDeadLetterDepth,
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        description:
          'Messages in the scheduler dead-letter queue: a timing decision failed maxReceiveCount times and was not applied.',
      }),
      this.alarm('SchedulerQueueAge', {
        metric: watched.schedulerOldestAge,
        threshold: SCHEDULER_QUEUE_MAX_AGE_SECONDS,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        description: `The scheduler queue holds a message older than ${SCHEDULER_QUEUE_MAX_AGE_SECONDS} s (one 900 s hop plus slack): the scheduler is failing or behind.`,
      }),
      this.alarm('Api5xx', {
        metric: watched.apiServerErrors,
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        description:
          'The REST API answered 5xx: an unexpected handler error, an authorizer that cannot read its secret, or a Lambda failure.',
      }),
    ];
  }

  /** Per function: errors and throttles. */
  private functionAlarms(functions: ObservabilityProps['functions']): Alarm[] {
    const alarms: Alarm[] = [];
    for (const name of Object.keys(functions) as FunctionName[]) {
      const fn = functions[name];
      const id = pascal(name);
      alarms.push(
        this.alarm(`${id}Errors`, {
          metric: fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          description:
            name === 'authorizer'
              ? 'The authorizer failed: its token key cannot be read or is not a key, a timeout, out of memory (refused tokens are not failures: the tokenRefused metric counts them).'
              : `The ${name} function failed (errors thrown out of the handler, timeouts, out of memory).`,
        }),
        this.alarm(`${id}Throttles`, {
          metric: fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          description: `The ${name} function was throttled: the account's or the function's concurrency limit was reached.`,
        }),
      );
    }
    return alarms;
  }

  /**
   * Per table, an alarm on ReadThrottleEvents and one on WriteThrottleEvents (dimension TableName):
   * on-demand tables throttle too, past a partition's 3,000 read or 1,000 write units a second or
   * the table's throughput limits. The event metrics, not ThrottledRequests: a batch request counts
   * in ThrottledRequests only when every item of it was throttled, while each throttled item counts
   * as an event; and ThrottledRequests needs the Operation dimension, one metric per operation
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TroubleshootingThrottling-cloudwatch.html).
   * The SDK retries a throttled request and the adapters send unprocessed batch keys again, so a
   * throttle is often absorbed; these alarms say it happened, before it becomes errors.
   */
  private tableThrottleAlarms(tables: ObservabilityProps['tables']): Alarm[] {
    return tables.flatMap(({ logicalName, table }) =>
      (['Read', 'Write'] as const).map((kind) =>
        this.alarm(`${logicalName}${kind}Throttles`, {
          metric: table.metric(`${kind}ThrottleEvents`, { period: PERIOD, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          description:
            `DynamoDB throttled ${kind.toLowerCase()}s on the ${logicalName} table: a hot partition key ` +
            "(a partition's 3,000 read or 1,000 write units a second) or the table's throughput limit. " +
            'Requests were retried or failed; see docs/operations.md#logs-metrics-alarms.',
        }),
      ),
    );
  }

  /** The run-time subscription queues and cursors, as the maintenance function reports them; and its runs. */
  private subscriptionAlarms(watched: WatchedMetrics): Alarm[] {
    return [
      this.alarm('SubscriptionDeadLetterDepth', {
        metric: watched.subscriptionDeadLetters,
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        description:
          'Tokens in a subscription dead-letter queue (ackline-<stage>--s-*-dlq): SQS moved them there after ' +
          'maxReceiveCount receives, and nothing delivers those messages until they are redriven or the ' +
          "queue is rebuilt. The maintenance function's 'maintenance run' log line names the queues.",
      }),
      this.alarm('SubscriptionBacklogAge', {
        metric: watched.subscriptionBacklogAge,
        threshold: SUBSCRIPTION_BACKLOG_MAX_AGE_SECONDS,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        description:
          `A subscription has had a due message unacknowledged for more than ${SUBSCRIPTION_BACKLOG_MAX_AGE_SECONDS / 86_400} days: ` +
          'its consumers are gone or failing, and SQS drops delivery tokens after 14 days. The ' +
          "'maintenance run' log line names the subscription (oldestBacklog).",
      }),
      this.alarm('MaintenanceStalled', {
        metric: maintenanceMetric(this.stage, {
          metricName: maintenanceMetricNames.runs,
          statistic: 'Sum',
          period: MAINTENANCE_REPORT_PERIOD,
        }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
        description:
          `No maintenance run completed in ${MAINTENANCE_REPORT_PERIOD.toMinutes()} minutes (it runs every ` +
          `${MAINTENANCE_INTERVAL.toMinutes()}): the schedule is off or the function fails, and the ` +
          'subscription dead-letter and backlog-age alarms are blind meanwhile.',
        treatMissingData: TreatMissingData.BREACHING,
      }),
    ];
  }

  private publishedAndSchedulerWidgets(schedulerQueue: IQueue, watched: WatchedMetrics): GraphWidget[] {
    return [
      new GraphWidget({
        title: 'Messages published, admin acknowledgements, refused tokens',
        left: [
          this.customMetric('data-api', metricNames.published),
          this.customMetric('admin-api', metricNames.adminAcknowledged),
        ],
        right: [this.customMetric('authorizer', metricNames.tokenRefused)],
        width: 12,
      }),
      new GraphWidget({
        title: 'Scheduler queue',
        left: [
          schedulerQueue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: 'visible' }),
          schedulerQueue.metricApproximateNumberOfMessagesNotVisible({
            period: PERIOD,
            label: 'in flight',
          }),
          watched.schedulerDeadLetterDepth.with({ label: 'dead-letter queue' }),
        ],
        right: [watched.schedulerOldestAge.with({ label: 'age of oldest (s)' })],
        width: 12,
      }),
    ];
  }

  private subscriptionWidgets(watched: WatchedMetrics): GraphWidget[] {
    return [
      new GraphWidget({
        title: 'Subscriptions: dead-letter tokens, oldest due unacknowledged message (s)',
        left: [watched.subscriptionDeadLetters.with({ label: 'tokens in dead-letter queues' })],
        right: [
          watched.subscriptionBacklogAge.with({
            label: 'backlog age (s)',
            period: MAINTENANCE_REPORT_PERIOD,
          }),
        ],
        width: 12,
      }),
      new GraphWidget({
        title: 'Maintenance: folded cursors and entries, failures',
        left: [
          this.customMetric('maintenance', maintenanceMetricNames.foldedEntries),
          this.customMetric('maintenance', maintenanceMetricNames.foldedCursors),
        ],
        right: [this.customMetric('maintenance', maintenanceMetricNames.failures)],
        width: 12,
      }),
    ];
  }

  /** A metric the functions emit through Powertools (EMF): dimensions service and stage. */
  private customMetric(functionName: FunctionName, metricName: string): Metric {
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { service: serviceNameOf(functionName), stage: this.stage },
      period: PERIOD,
      statistic: 'Sum',
      label: metricName,
    });
  }
}

/** What an alarm watches and when it fires. */
interface AlarmSpec {
  readonly metric: IMetric;
  readonly threshold: number;
  readonly comparisonOperator: ComparisonOperator;
  readonly description: string;
  /** NOT_BREACHING unless told: no traffic is not a failure. */
  readonly treatMissingData?: TreatMissingData;
}

/** The metrics both an alarm and the dashboard show. */
interface WatchedMetrics {
  readonly schedulerDeadLetterDepth: Metric;
  readonly schedulerOldestAge: Metric;
  readonly apiServerErrors: Metric;
  readonly subscriptionDeadLetters: Metric;
  readonly subscriptionBacklogAge: Metric;
}

function watchedMetrics(props: ObservabilityProps): WatchedMetrics {
  return {
    schedulerDeadLetterDepth: props.schedulerDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    }),
    schedulerOldestAge: props.schedulerQueue.metricApproximateAgeOfOldestMessage({
      period: PERIOD,
      statistic: 'Maximum',
    }),
    apiServerErrors: props.api.deploymentStage.metricServerError({ period: PERIOD, statistic: 'Sum' }),
    subscriptionDeadLetters: maintenanceMetric(props.stage, {
      metricName: maintenanceMetricNames.deadLetterMessages,
      statistic: 'Maximum',
      period: MAINTENANCE_REPORT_PERIOD,
    }),
    subscriptionBacklogAge: maintenanceMetric(props.stage, {
      metricName: maintenanceMetricNames.backlogAgeSeconds,
      statistic: 'Maximum',
      period: Duration.hours(1),
    }),
  };
}

/**
 * A figure the maintenance function reports once per run. Run-time subscription queues: their names
 * come from cursor ids, so the maintenance function measures them and reports one value per run.
 * Without a label, so that each alarm is on its metric itself (no metric-math form).
 */
function maintenanceMetric(
  stage: string,
  { metricName, statistic, period }: { metricName: string; statistic: string; period: Duration },
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: serviceNameOf('maintenance'), stage },
    period,
    statistic,
  });
}

function apiWidgets(api: RestApi, watched: WatchedMetrics): GraphWidget[] {
  return [
    new GraphWidget({
      title: 'API requests and errors',
      left: [
        api.deploymentStage.metricCount({ period: PERIOD, statistic: 'Sum', label: 'requests' }),
        api.deploymentStage.metricClientError({ period: PERIOD, statistic: 'Sum', label: '4xx' }),
        watched.apiServerErrors.with({ label: '5xx' }),
      ],
      width: 12,
    }),
    new GraphWidget({
      title: 'API latency (p50, p99)',
      left: [
        api.deploymentStage.metricLatency({ period: PERIOD, statistic: 'p50', label: 'p50' }),
        api.deploymentStage.metricLatency({ period: PERIOD, statistic: 'p99', label: 'p99' }),
      ],
      width: 12,
    }),
  ];
}

/** Read and write throttle events, one line per table and kind. */
function tableThrottleWidget(tables: ObservabilityProps['tables']): GraphWidget {
  return new GraphWidget({
    title: 'DynamoDB throttle events',
    left: tables.flatMap(({ logicalName, table }) =>
      (['Read', 'Write'] as const).map((kind) =>
        table.metric(`${kind}ThrottleEvents`, {
          period: PERIOD,
          statistic: 'Sum',
          label: `${logicalName} ${kind.toLowerCase()}s`,
        }),
      ),
    ),
    width: 24,
  });
}

/** Invocations, errors, throttles and p99 duration, one line per function. */
function functionWidgets(functions: ObservabilityProps['functions']): GraphWidget[] {
  const names = Object.keys(functions) as FunctionName[];
  const metricsOf = (metric: (fn: IFunction) => Metric) =>
    names.map((name) => metric(functions[name]).with({ label: name }));
  return [
    new GraphWidget({
      title: 'Invocations',
      left: metricsOf((fn) => fn.metricInvocations({ period: PERIOD, statistic: 'Sum' })),
      width: 6,
    }),
    new GraphWidget({
      title: 'Errors',
      left: metricsOf((fn) => fn.metricErrors({ period: PERIOD, statistic: 'Sum' })),
      width: 6,
    }),
    new GraphWidget({
      title: 'Throttles',
      left: metricsOf((fn) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum' })),
      width: 6,
    }),
    new GraphWidget({
      title: 'Duration p99 (ms)',
      left: metricsOf((fn) => fn.metricDuration({ period: PERIOD, statistic: 'p99' })),
      width: 6,
    }),
  ];
}

/** `admin-api` -> `AdminApi`. */
export function pascal(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** `SchedulerQueueAge` -> `scheduler-queue-age`; `Api5xx` -> `api-5xx`. */
function kebab(id: string): string {
  return id
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([a-z])([0-9])/g, '$1-$2')
    .toLowerCase();
}
