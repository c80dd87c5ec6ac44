import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { functionSettings } from '../infra/stateless-stack.ts';
import type { UsageSnapshot } from '../shared/adapters/usage-meter.ts';
import { maintenanceMetricNames } from '../shared/config/load-config.ts';
import { tables } from '../shared/config/resources.ts';
import { BenchStack, note, sleep, sumWhere } from './harness.ts';
import { prices } from './prices.ts';

/** The idle-deployment measurement: a stack holding `topics` idle topics, each with one subscription. */
export interface IdleDeploymentOptions {
  readonly topics: number;
  /** Maintenance runs measured (after two unmeasured ones). */
  readonly runs: number;
  /** How often maintenance runs in the measured stack (60,000 on AWS; shorter to keep the bench short). */
  readonly intervalMs: number;
}

/** What one maintenance run cost on average on the idle stack. */
export interface MaintenanceRunCost {
  readonly runs: number;
  readonly handlerMs: number;
  readonly dynamodbWriteUnits: number;
  readonly dynamodbReadUnits: number;
  readonly sqsRequests: number;
}

/** Dollars a month, by what AWS bills. */
export interface IdleDeploymentMonth {
  readonly maintenanceRuns: number;
  readonly maintenanceLambda: number;
  readonly maintenanceDynamodb: number;
  readonly maintenanceSqs: number;
  /** The scheduler queue's event source mapping, polling while nothing is due (assumed, see the formula). */
  readonly schedulerPolling: number;
  readonly alarms: number;
  readonly dashboard: number;
  readonly customMetrics: number;
  readonly tokenSecret: number;
  readonly total: number;
  readonly formula: string[];
}

export interface IdleDeploymentResult {
  readonly topics: number;
  readonly intervalMs: number;
  readonly run: MaintenanceRunCost;
  readonly month: IdleDeploymentMonth;
}

/** The deployment with no topic, and what each idle subscription that maintenance visits adds. */
export interface IdleDeploymentResults {
  readonly empty: IdleDeploymentResult;
  readonly withTopics: IdleDeploymentResult;
  /** (with topics - empty) / topics, a month of maintenance runs, in dollars. */
  readonly perSubscriptionMonthUsd: number;
}

const RUNS_PER_MONTH = 30 * 24 * 60;
/**
 * Lambda does not document how many long polls an SQS event source mapping keeps open on an idle
 * queue; five pollers of 20 s is what users observe (and the count it starts a busy queue with:
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html).
 */
const IDLE_POLLERS = 5;
const POLL_SECONDS = 20;

/**
 * The alarms of one stage: six of the deployment's own (scheduler DLQ and age, API 5xx,
 * subscription DLQs, backlog age, maintenance heartbeat), errors and throttles per function,
 * read and write throttle events per table. test/infra/stacks.test.ts holds the template to it.
 */
export function stackAlarms(): number {
  return 6 + Object.keys(functionSettings).length * 2 + tables.length * 2;
}

/**
 * What a deployment costs while nobody calls it. A fresh embedded stack, maintenance every
 * `intervalMs`, holding idle topics with a subscription each; the maintenance runs are metered
 * (DynamoDB units, SQS requests, handler time) and extrapolated to a month of runs a minute; the
 * fixed monthly items (alarms, dashboard, custom metrics, the token secret) come from prices.json.
 */
export async function runIdleDeployment(options: IdleDeploymentOptions): Promise<IdleDeploymentResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ackline-bench-idle-'));
  const stack = await BenchStack.start(dataDir, {
    env: { ACKLINE_MAINTENANCE_INTERVAL_MS: String(options.intervalMs) },
  });
  try {
    for (let i = 0; i < options.topics; i++) {
      const topic = `/admin/v2/persistent/public/default/bench-idle-deployment-${i}`;
      await stack.call('PUT', topic, undefined, [204, 200, 409]);
      await stack.call('PUT', `${topic}/subscription/idle`, undefined, [204, 200, 409]);
    }
    await runsCounted(stack, 2);
    await stack.usage(true);
    note(`idle deployment: ${options.runs} maintenance runs every ${options.intervalMs} ms`);
    const usage = await runsCounted(stack, options.runs);
    const run = runCost(usage);
    return { topics: options.topics, intervalMs: options.intervalMs, run, month: idleMonth(run) };
  } finally {
    await stack.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function runsCounted(stack: BenchStack, runs: number): Promise<UsageSnapshot> {
  for (;;) {
    const usage = await stack.usage();
    if ((usage.invocations.maintenance?.count ?? 0) >= runs) return usage;
    await sleep(100);
  }
}

function runCost(usage: UsageSnapshot): MaintenanceRunCost {
  const { count, totalMs } = usage.invocations.maintenance ?? { count: 0, totalMs: 0 };
  const per = (total: number) => total / count;
  return {
    runs: count,
    handlerMs: per(totalMs),
    dynamodbWriteUnits: per(sumWhere(usage.requests, 'DynamoDB.', 'writeCapacityUnits')),
    dynamodbReadUnits: per(sumWhere(usage.requests, 'DynamoDB.', 'readCapacityUnits')),
    sqsRequests: per(sumWhere(usage.requests, 'SQS.', 'requests')),
  };
}

function idleMonth(run: MaintenanceRunCost): IdleDeploymentMonth {
  const price = prices.usdPerMillion;
  const monthly = prices.usdPerMonth;
  const gbSeconds = ((run.handlerMs / 1000) * functionSettings.maintenance.memorySizeMb) / 1024;
  const maintenanceLambda =
    RUNS_PER_MONTH * (price.lambdaRequests / 1e6 + gbSeconds * prices.lambdaUsdPerGbSecondArm);
  const maintenanceDynamodb =
    (RUNS_PER_MONTH *
      (run.dynamodbWriteUnits * price.dynamodbWriteRequestUnits +
        run.dynamodbReadUnits * price.dynamodbReadRequestUnits)) /
    1e6;
  const maintenanceSqs = (RUNS_PER_MONTH * run.sqsRequests * price.sqsRequests) / 1e6;
  const schedulerPolls = (IDLE_POLLERS * 30 * 86_400) / POLL_SECONDS;
  const schedulerPolling = (schedulerPolls * price.sqsRequests) / 1e6;
  const alarms = stackAlarms() * monthly.cloudwatchAlarm;
  const metrics = Object.keys(maintenanceMetricNames).length;
  const customMetrics = metrics * monthly.cloudwatchCustomMetric;
  const fixed = alarms + monthly.cloudwatchDashboard + customMetrics + monthly.secretsManagerSecret;
  const variable = maintenanceLambda + maintenanceDynamodb + maintenanceSqs + schedulerPolling;
  return {
    maintenanceRuns: RUNS_PER_MONTH,
    maintenanceLambda,
    maintenanceDynamodb,
    maintenanceSqs,
    schedulerPolling,
    alarms,
    dashboard: monthly.cloudwatchDashboard,
    customMetrics,
    tokenSecret: monthly.secretsManagerSecret,
    total: fixed + variable,
    formula: [
      `maintenance: ${RUNS_PER_MONTH} runs (one a minute, 30 days) x (1 request + ${run.handlerMs.toFixed(0)} ms x ${functionSettings.maintenance.memorySizeMb} MB, ${run.dynamodbWriteUnits.toFixed(2)} WU, ${run.dynamodbReadUnits.toFixed(2)} RU, ${run.sqsRequests.toFixed(2)} SQS requests)`,
      `scheduler queue: ${IDLE_POLLERS} idle long polls of ${POLL_SECONDS} s (assumed; Lambda does not document it) = ${schedulerPolls} SQS requests`,
      `CloudWatch: ${stackAlarms()} alarms, 1 dashboard (free if the account has fewer than 3), ${metrics} custom metrics maintenance reports every run`,
      'Secrets Manager: the token secret (none when the deployment names its own secret or an SSM parameter)',
    ],
  };
}

/**
 * The phase: two more embedded stacks with maintenance every second, one empty and one with idle
 * topics, so the report splits the deployment's own cost from each subscription's.
 */
export async function measureIdleDeployment(scale: number): Promise<IdleDeploymentResults> {
  const topics = Math.max(1, Math.round(20 * scale));
  note(`idle deployment: two more embedded stacks (no topic, then ${topics}), maintenance every second`);
  const empty = await runIdleDeployment({ topics: 0, runs: 10, intervalMs: 1_000 });
  const withTopics = await runIdleDeployment({ topics, runs: 10, intervalMs: 1_000 });
  const perSubscriptionMonthUsd = (withTopics.month.total - empty.month.total) / topics;
  return { empty, withTopics, perSubscriptionMonthUsd };
}
