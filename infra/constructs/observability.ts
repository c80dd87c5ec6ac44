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
    const { stage, api, functions } = props;
    const names = Object.keys(functions) as FunctionName[];
    const alarms: Alarm[] = [];
    const alarm = (
      alarmId: string,
      metric: IMetric,
      threshold: number,
      comparisonOperator: ComparisonOperator,
      description: string,
      treatMissingData = TreatMissingData.NOT_BREACHING,
    ) => {
      const created = new Alarm(this, alarmId, {
        alarmName: `ackline-${stage}-${kebab(alarmId)}`,
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator,
        evaluationPeriods: 1,
        treatMissingData,
      });
      alarms.push(created);
      return created;
    };

    const deadLetterDepth = props.schedulerDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    alarm(
      'SchedulerDeadLetterDepth',
      deadLetterDepth,
      0,
      ComparisonOperator.GREATER_THAN_THRESHOLD,
      'Messages in the scheduler dead-letter queue: a timing decision failed maxReceiveCount times and was not applied.',
    );
    const oldestAge = props.schedulerQueue.metricApproximateAgeOfOldestMessage({
      period: PERIOD,
      statistic: 'Maximum',
    });
    alarm(
      'SchedulerQueueAge',
      oldestAge,
      SCHEDULER_QUEUE_MAX_AGE_SECONDS,
      ComparisonOperator.GREATER_THAN_THRESHOLD,
      `The scheduler queue holds a message older than ${SCHEDULER_QUEUE_MAX_AGE_SECONDS} s (one 900 s hop plus slack): the scheduler is failing or behind.`,
    );
    const serverErrors = api.deploymentStage.metricServerError({ period: PERIOD, statistic: 'Sum' });
    alarm(
      'Api5xx',
      serverErrors,
      1,
      ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      'The REST API answered 5xx: an unexpected handler error, an authorizer that cannot read its secret, or a Lambda failure.',
    );

    for (const name of names) {
      const fn = functions[name];
      const id = pascal(name);
      const errors = fn.metricErrors({ period: PERIOD, statistic: 'Sum' });
      alarm(
        `${id}Errors`,
        errors,
        1,
        ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        name === 'authorizer'
          ? 'The authorizer failed: its token key cannot be read or is not a key, a timeout, out of memory (refused tokens are not failures: the tokenRefused metric counts them).'
          : `The ${name} function failed (errors thrown out of the handler, timeouts, out of memory).`,
      );
      alarm(
        `${id}Throttles`,
        fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        1,
        ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        `The ${name} function was throttled: the account's or the function's concurrency limit was reached.`,
      );
    }

    // Run-time subscription queues: their names come from cursor ids, so the
    // maintenance function measures them and reports one value per run.
    // Without a label, so that each alarm is on its metric itself (no metric-math form).
    const maintenanceMetric = (metricName: string, statistic: string, period: Duration) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: serviceNameOf('maintenance'), stage },
        period,
        statistic,
      });
    const subscriptionDeadLetters = maintenanceMetric(
      maintenanceMetricNames.deadLetterMessages,
      'Maximum',
      MAINTENANCE_REPORT_PERIOD,
    );
    alarm(
      'SubscriptionDeadLetterDepth',
      subscriptionDeadLetters,
      0,
      ComparisonOperator.GREATER_THAN_THRESHOLD,
      'Tokens in a subscription dead-letter queue (ackline-<stage>-s-*-dlq): SQS moved them there after ' +
        'maxReceiveCount receives, and nothing delivers those messages until they are redriven or the ' +
        "queue is rebuilt. The maintenance function's 'maintenance run' log line names the queues.",
    );
    const backlogAge = maintenanceMetric(
      maintenanceMetricNames.backlogAgeSeconds,
      'Maximum',
      Duration.hours(1),
    );
    alarm(
      'SubscriptionBacklogAge',
      backlogAge,
      SUBSCRIPTION_BACKLOG_MAX_AGE_SECONDS,
      ComparisonOperator.GREATER_THAN_THRESHOLD,
      `A subscription has had a due message unacknowledged for more than ${SUBSCRIPTION_BACKLOG_MAX_AGE_SECONDS / 86_400} days: ` +
        'its consumers are gone or failing, and SQS drops delivery tokens after 14 days. The ' +
        "'maintenance run' log line names the subscription (oldestBacklog).",
    );
    alarm(
      'MaintenanceStalled',
      maintenanceMetric(maintenanceMetricNames.runs, 'Sum', MAINTENANCE_REPORT_PERIOD),
      1,
      ComparisonOperator.LESS_THAN_THRESHOLD,
      `No maintenance run completed in ${MAINTENANCE_REPORT_PERIOD.toMinutes()} minutes (it runs every ` +
        `${MAINTENANCE_INTERVAL.toMinutes()}): the schedule is off or the function fails, and the ` +
        'subscription dead-letter and backlog-age alarms are blind meanwhile.',
      TreatMissingData.BREACHING,
    );
    this.alarms = alarms;

    if (props.alarmTopicArn !== undefined) {
      const action = new SnsAction(Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn));
      for (const each of alarms) {
        each.addAlarmAction(action);
        each.addOkAction(action);
      }
    }

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `ackline-${stage}`,
      defaultInterval: Duration.hours(3),
    });
    const metricsOf = (metric: (fn: IFunction) => Metric) =>
      names.map((name) => metric(functions[name]).with({ label: name }));
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ackline ${stage}\nAlarms, the REST API, the functions, the scheduler queue and the subscriptions (as maintenance reports them). Runbook: docs/operations.md#logs-metrics-alarms.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'API requests and errors',
        left: [
          api.deploymentStage.metricCount({ period: PERIOD, statistic: 'Sum', label: 'requests' }),
          api.deploymentStage.metricClientError({ period: PERIOD, statistic: 'Sum', label: '4xx' }),
          serverErrors.with({ label: '5xx' }),
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
    );
    this.dashboard.addWidgets(
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
          props.schedulerQueue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: 'visible' }),
          props.schedulerQueue.metricApproximateNumberOfMessagesNotVisible({
            period: PERIOD,
            label: 'in flight',
          }),
          deadLetterDepth.with({ label: 'dead-letter queue' }),
        ],
        right: [oldestAge.with({ label: 'age of oldest (s)' })],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Subscriptions: dead-letter tokens, oldest due unacknowledged message (s)',
        left: [subscriptionDeadLetters.with({ label: 'tokens in dead-letter queues' })],
        right: [backlogAge.with({ label: 'backlog age (s)', period: MAINTENANCE_REPORT_PERIOD })],
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
    );
    this.dashboard.addWidgets(
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
    );
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
