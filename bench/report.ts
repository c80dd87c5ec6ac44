import type { OperationUsage } from '../shared/adapters/dynamodb/capacity-meter.ts';
import type { AckHolesResult } from './ack-holes.ts';
import type { AdminAckResult } from './admin-ack.ts';
import type { Distribution } from './harness.ts';
import { type HotKeys, hotKeysLines, PARTITION_LIMITS } from './hot-keys.ts';
import type { CallCost, IdleConsumerResult } from './idle-consumer.ts';
import type { IdleDeploymentResult, IdleDeploymentResults } from './idle-deployment.ts';
import type { BareSqsResult, LifecycleResult } from './lifecycle.ts';
import type { CostPerMillion } from './prices.ts';
import type { RedeliveryResult } from './redelivery.ts';

export interface BenchResults {
  ranAt: string;
  command: string;
  machine: { cpus: number; cpuModel: string; node: string };
  prices: { date: string; region: string };
  lifecycle?: {
    /** Messages sent through each path before the rounds, in no figure (0: none). */
    warmupMessages: number;
    /** Each round: ackline on a fresh topic, then bare SQS on a fresh queue. */
    rounds: LifecycleRound[];
    /** The Shared subscription over all rounds: total units over total messages. */
    ackline: LifecycleResult;
    bareSqs: BareSqsResult;
    /** The median of the rounds' throughput ratios (the target's figure). */
    throughputRatio: number;
    sqsRequestRatio: number;
    costRatio: number;
    /** The same workload with one Exclusive consumer (one run). */
    exclusive?: {
      ackline: LifecycleResult;
      /** Its messages/s over the median of the rounds' bare SQS messages/s. */
      throughputRatio: number;
    };
    /** Each round's hot keys and ceiling on AWS (bench/hot-keys.ts), and the Exclusive run's. */
    hotKeys?: { rounds: HotKeys[]; exclusive?: HotKeys };
  };
  idleConsumer?: IdleConsumerResult;
  idleDeployment?: IdleDeploymentResults;
  redelivery?: RedeliveryResult;
  adminAck?: AdminAckResult;
  ackHoles?: AckHolesResult;
  wallSeconds?: number;
  targets?: Target[];
}

/** One lifecycle round's throughput. */
export interface LifecycleRound {
  readonly acklineMessagesPerSecond: number;
  readonly bareSqsMessagesPerSecond: number;
  readonly throughputRatio: number;
  /** The round's own figures per message (Shared subscription). */
  readonly dynamodbWriteUnitsPerMessage: number;
  readonly dynamodbReadUnitsPerMessage: number;
  readonly sqsRequestsPerMessage: number;
  /** The messages/s one topic partition could reach on AWS before a key's limits stop it (hot keys). */
  readonly ceilingMessagesPerSecond?: number | null;
}

/** One of the issue's targets, with the figure that meets it or not. */
export interface Target {
  readonly what: string;
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

const f = (n: number, digits = 2) => n.toFixed(digits);
const ms = (d: Distribution) => `${f(d.min, 0)} / ${f(d.p50, 0)} / ${f(d.p99, 0)} / ${f(d.max, 0)}`;
const usd = (cost: CostPerMillion) =>
  `$${f(cost.total, 2)} (SQS ${f(cost.sqs, 2)}, DynamoDB ${f(cost.dynamodb, 2)}, API Gateway ${f(cost.apiGateway, 2)}, Lambda ${f(cost.lambda, 2)})`;

/** How a figure meets its target: at most or at least the limit; `digits` of the figure shown (3 unless told). */
type TargetCheck = ({ readonly atMost: number } | { readonly atLeast: number }) & {
  readonly digits?: number;
};

type LifecycleResults = NonNullable<BenchResults['lifecycle']>;

export function targetsOf(results: BenchResults): Target[] {
  const targets: Target[] = [];
  const add = (what: string, target: string, value: number, check: TargetCheck) =>
    targets.push({
      what,
      target,
      measured: f(value, check.digits ?? 3),
      met: 'atMost' in check ? value <= check.atMost : value >= check.atLeast,
    });
  const lifecycle = results.lifecycle;
  if (lifecycle) {
    const budgets = (name: string, result: LifecycleResult) => {
      add(
        `lifecycle, ${name}: DynamoDB write units per message (failed conditional writes included)`,
        '≤ 1.5',
        result.dynamodbWriteUnitsPerMessage,
        { atMost: 1.5 },
      );
      add(
        `lifecycle, ${name}: DynamoDB read units per message`,
        '≤ 0.3',
        result.dynamodbReadUnitsPerMessage,
        {
          atMost: 0.3,
        },
      );
      add(`lifecycle, ${name}: SQS requests per message`, '≤ 0.35', result.sqsRequestsPerMessage, {
        atMost: 0.35,
      });
    };
    budgets(`Shared (${lifecycle.ackline.runs} rounds)`, lifecycle.ackline);
    add(
      `throughput: ackline / bare SQS (median of ${lifecycle.rounds.length} rounds)`,
      '≥ 0.4',
      lifecycle.throughputRatio,
      { atLeast: 0.4 },
    );
    if (lifecycle.exclusive) budgets('Exclusive', lifecycle.exclusive.ackline);
  }
  if (results.redelivery) {
    for (const [name, series] of Object.entries(results.redelivery)) {
      add(`redelivery (${name}): early deliveries`, '0', series.early, { atMost: 0, digits: 0 });
      add(`redelivery (${name}): p99 lateness, ms`, '≤ 1200', series.latenessMs.p99, {
        atMost: 1200,
        digits: 0,
      });
    }
  }
  if (results.ackHoles) {
    add('ack holes: write units per acknowledgement', '≤ 0.2', results.ackHoles.writeUnitsPerAck, {
      atMost: 0.2,
    });
    add('ack holes: acknowledgements lost across the restart', '0', results.ackHoles.verified.lost, {
      atMost: 0,
      digits: 0,
    });
  }
  if (results.adminAck) {
    add(
      'admin acknowledgeMessage: p99 latency, ms',
      '≤ 50',
      results.adminAck.acknowledgeMessage.latencyMs.p99,
      {
        atMost: 50,
        digits: 1,
      },
    );
    add('admin acknowledgeMessage: calls/s over bare UpdateItem', '≥ 0.5', results.adminAck.ratio, {
      atLeast: 0.5,
    });
  }
  if (results.wallSeconds !== undefined)
    add('whole run, seconds', '≤ 600', results.wallSeconds, { atMost: 600, digits: 0 });
  return targets;
}

export function markdownReport(results: BenchResults): string {
  const lines: string[] = [
    `# ackline bench, ${results.ranAt}`,
    '',
    `\`${results.command}\` on ${results.machine.cpus} × ${results.machine.cpuModel}, Node ${results.machine.node}; prices: ${results.prices.region}, ${results.prices.date} (bench/prices.json).`,
    '',
  ];
  if (results.lifecycle)
    lines.push(
      ...lifecycleRounds(results.lifecycle),
      ...lifecyclePerMessage(results.lifecycle),
      ...hotKeysSection(results.lifecycle),
    );
  if (results.idleConsumer) lines.push(...idleConsumerSection(results.idleConsumer));
  if (results.idleDeployment) {
    const { empty, withTopics, perSubscriptionMonthUsd } = results.idleDeployment;
    lines.push(...idleDeploymentSection(empty), ...idleDeploymentSection(withTopics));
    lines.push(
      `Each idle subscription maintenance visits adds about $${f(perSubscriptionMonthUsd, 3)} a month (the difference of the two, per subscription).`,
      '',
    );
  }
  if (results.redelivery) lines.push(...redeliverySection(results.redelivery));
  if (results.adminAck) lines.push(...adminAckSection(results.adminAck));
  if (results.ackHoles) lines.push(...ackHolesSection(results.ackHoles));
  lines.push(...targetsSection(results));
  return lines.join('\n');
}

/** A function that adds a Markdown table row to `lines`. */
function rowsInto(lines: string[]): (...cells: (string | number)[]) => void {
  return (...cells) => {
    lines.push(`| ${cells.join(' | ')} |`);
  };
}

/** The lifecycle's heading and its table of rounds, with the median ratio and the totals. */
function lifecycleRounds(lifecycle: LifecycleResults): string[] {
  const lines: string[] = [];
  const row = rowsInto(lines);
  const { ackline, bareSqs, exclusive } = lifecycle;
  const perRound = ackline.messages / ackline.runs;
  lines.push(
    `## Lifecycle: messages of 1 KiB, batches of 10, ${lifecycle.warmupMessages > 0 ? `a warm-up of ${lifecycle.warmupMessages} through each path (not counted), then ` : ''}${lifecycle.rounds.length} rounds of ${perRound} (Shared, ${ackline.consumers} consumers, then bare SQS)${exclusive ? `, then ${exclusive.ackline.messages} on an Exclusive subscription` : ''}`,
    '',
    '| round | ackline msg/s | bare SQS msg/s | ratio | write units | read units | SQS requests |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  lifecycle.rounds.forEach((round, i) => {
    row(
      i + 1,
      f(round.acklineMessagesPerSecond, 0),
      f(round.bareSqsMessagesPerSecond, 0),
      f(round.throughputRatio),
      f(round.dynamodbWriteUnitsPerMessage, 3),
      f(round.dynamodbReadUnitsPerMessage, 3),
      f(round.sqsRequestsPerMessage, 3),
    );
  });
  row(
    '**median ratio; all rounds**',
    f(ackline.messagesPerSecond, 0),
    f(bareSqs.messagesPerSecond, 0),
    `**${f(lifecycle.throughputRatio)}**`,
    f(ackline.dynamodbWriteUnitsPerMessage, 3),
    f(ackline.dynamodbReadUnitsPerMessage, 3),
    f(ackline.sqsRequestsPerMessage, 3),
  );
  return lines;
}

/** The lifecycle's requests, units, invocations and cost per message, ackline (Shared, Exclusive) beside bare SQS. */
function lifecyclePerMessage(lifecycle: LifecycleResults): string[] {
  const lines: string[] = [];
  const row = rowsInto(lines);
  const { ackline, bareSqs, exclusive } = lifecycle;
  const columns: [string, LifecycleResult | BareSqsResult][] = [
    [`ackline Shared (${ackline.runs} rounds)`, ackline],
    ...(exclusive ? [['ackline Exclusive', exclusive.ackline] as [string, LifecycleResult]] : []),
    [`bare SQS (${bareSqs.runs} rounds)`, bareSqs],
  ];
  lines.push(
    '',
    `| per message | ${columns.map(([name]) => name).join(' | ')} |`,
    `| --- | ${columns.map(() => '---').join(' | ')} |`,
  );
  const operations = [...new Set(columns.flatMap(([, result]) => Object.keys(result.perMessage)))].sort();
  const units = (u: OperationUsage) =>
    u.readCapacityUnits > 0 || u.writeCapacityUnits > 0
      ? ` (${u.readCapacityUnits > 0 ? `${f(u.readCapacityUnits, 3)} RU` : ''}${u.writeCapacityUnits > 0 ? `${f(u.writeCapacityUnits, 3)} WU` : ''})`
      : '';
  for (const operation of operations) {
    row(
      `${operation} requests`,
      ...columns.map(([, result]) => {
        const usage = result.perMessage[operation];
        return usage ? `${f(usage.requests, 3)}${units(usage)}` : '-';
      }),
    );
  }
  const acklineOnly = (value: (result: LifecycleResult) => string) =>
    columns.map(([, result]) => ('dynamodbWriteUnitsPerMessage' in result ? value(result) : '-'));
  row('**SQS requests**', ...columns.map(([, result]) => f(result.sqsRequestsPerMessage, 3)));
  row('**DynamoDB write units**', ...acklineOnly((result) => f(result.dynamodbWriteUnitsPerMessage, 3)));
  row('**DynamoDB read units**', ...acklineOnly((result) => f(result.dynamodbReadUnitsPerMessage, 3)));
  const invoked = [
    ...new Set(
      columns.flatMap(([, result]) =>
        'invocationsPerMessage' in result ? Object.keys(result.invocationsPerMessage) : [],
      ),
    ),
  ].sort();
  for (const name of invoked) {
    row(
      name === 'apiGateway' ? 'API Gateway requests' : `Lambda ${name} invocations`,
      ...acklineOnly((result) => f(result.invocationsPerMessage[name] ?? 0, 3)),
    );
  }
  row('$ per million messages', ...columns.map(([, result]) => usd(result.usdPerMillionMessages)));
  row('**throughput, messages/s**', ...columns.map(([, result]) => f(result.messagesPerSecond, 0)));
  row('duplicates delivered', ...acklineOnly((result) => String(result.duplicates)));
  lines.push(
    '',
    `Ratios ackline / bare SQS: throughput ${f(lifecycle.throughputRatio)} (median of the rounds' ratios), SQS requests ${f(lifecycle.sqsRequestRatio)}, cost ${f(lifecycle.costRatio, 1)}.${exclusive ? ` Exclusive (one consumer) over the rounds' median bare SQS: throughput ${f(exclusive.throughputRatio)}.` : ''}`,
    '',
    'Requests marked "(emulator only)" are made because dynalite lacks a DynamoDB feature (a refused compare-and-set answers with the item on AWS, ReturnValuesOnConditionCheckFailure, at no read unit): shown, not billed in the totals.',
    '',
  );
  return lines;
}

/**
 * The hot keys of the round whose ceiling is the median one, every round's ceiling and the
 * Exclusive run's: what one topic partition could reach on AWS (bench/hot-keys.ts).
 */
function hotKeysSection(lifecycle: LifecycleResults): string[] {
  const hot = lifecycle.hotKeys;
  if (!hot || hot.rounds.length === 0) return [];
  const ceilingOf = (keys: HotKeys) => keys.ceiling.messagesPerSecond ?? Infinity;
  const byCeiling = hot.rounds
    .map((keys, i) => ({ keys, round: i + 1 }))
    .sort((a, b) => ceilingOf(a.keys) - ceilingOf(b.keys));
  const middle = byCeiling[Math.floor((byCeiling.length - 1) / 2)] as { keys: HotKeys; round: number };
  const rate = (keys: HotKeys) => f(ceilingOf(keys), 0);
  const { writeUnitsPerSecond, readUnitsPerSecond, callLatencyMs } = PARTITION_LIMITS;
  return [
    `## Hot keys: the ceiling of one topic partition on AWS (round ${middle.round}, the median ceiling)`,
    '',
    `Per partition key k: T_units = min(${writeUnitsPerSecond} / w, ${readUnitsPerSecond} / r), no credit for adaptive capacity; per compare-and-set item: T_cas = m × (1 − c) × 1000 / (L_read + L_write), L = ${callLatencyMs} ms a call (assumed of AWS). The ${Math.min(5, middle.keys.keys.length)} most limiting keys:`,
    '',
    ...hotKeysLines(middle.keys),
    '',
    `Ceilings by round: ${hot.rounds.map(rate).join(', ')} messages/s${hot.exclusive ? `; Exclusive (one consumer): ${rate(hot.exclusive)}, set by ${hot.exclusive.ceiling.role}` : ''}. What bounds it and how partitions scale past it: docs/design/aws-limits.md#hot-keys.`,
    '',
  ];
}

function idleConsumerSection(idle: IdleConsumerResult): string[] {
  const lines: string[] = [];
  const row = rowsInto(lines);
  const { poll, heartbeat, month } = idle;
  lines.push(
    `## Idle HTTP consumer: ${idle.consumers} ${idle.subscriptionType} consumers, each alone on an idle topic`,
    '',
    `Measured: ${poll.calls} receive polls at a ${f(idle.measuredWaitMs, 0)} ms wait (after one unmeasured poll each), ${heartbeat.calls} heartbeats. Extrapolated to ${month.days} days of back-to-back polls at the SDK's ${f(month.pollWaitMs / 1000, 0)} s wait; a waiting data-api invocation is billed for its wait.`,
    '',
    '| per call | receive poll | heartbeat |',
    '| --- | --- | --- |',
  );
  const both = (label: string, value: (cost: CallCost) => string) =>
    row(label, value(poll), value(heartbeat));
  both('API Gateway requests', (cost) => f(cost.apiGatewayRequests, 3));
  const functions = [
    ...new Set([...Object.keys(poll.lambdaInvocations), ...Object.keys(heartbeat.lambdaInvocations)]),
  ].sort();
  for (const name of functions) {
    both(
      `Lambda ${name}: invocations, handler ms`,
      (cost) => `${f(cost.lambdaInvocations[name] ?? 0, 3)}, ${f(cost.handlerMs[name] ?? 0, 0)}`,
    );
  }
  both('SQS requests', (cost) => f(cost.sqsRequests, 3));
  both('DynamoDB write units', (cost) => f(cost.dynamodbWriteUnits, 3));
  both('DynamoDB read units', (cost) => f(cost.dynamodbReadUnits, 3));
  const operations = [
    ...new Set([...Object.keys(poll.perOperation), ...Object.keys(heartbeat.perOperation)]),
  ].sort();
  for (const operation of operations) {
    both(`${operation} requests`, (cost) => {
      const usage = cost.perOperation[operation];
      return usage ? f(usage.requests, 3) : '-';
    });
  }
  lines.push(
    '',
    `**One idle consumer for ${month.days} days: $${f(month.usd.total, 2)}** (list prices):`,
    '',
  );
  for (const line of month.formula) lines.push(`- ${line}`);
  lines.push('');
  return lines;
}

function redeliverySection(redelivery: RedeliveryResult): string[] {
  const lines: string[] = [];
  const row = rowsInto(lines);
  lines.push(
    '## Redelivery timing (observed minus scheduled delay, ms)',
    '',
    '| series | redeliveries | min / p50 / p99 / max | early |',
    '| --- | --- | --- | --- |',
  );
  for (const series of Object.values(redelivery)) {
    row(series.schedule, series.redeliveries, ms(series.latenessMs), series.early);
  }
  lines.push('');
  return lines;
}

function adminAckSection(adminAck: AdminAckResult): string[] {
  const lines: string[] = [];
  const row = rowsInto(lines);
  const { acknowledgeMessage: a, bareUpdateItem: b } = adminAck;
  lines.push(
    `## Admin acknowledgeMessage: ${a.calls} calls at concurrency ${a.concurrency}`,
    '',
    '| | latency ms min / p50 / p99 / max | calls/s |',
    '| --- | --- | --- |',
  );
  row('acknowledgeMessage (HTTP gateway, authorizer, handler)', ms(a.latencyMs), f(a.callsPerSecond, 0));
  row('bare DynamoDB UpdateItem', ms(b.latencyMs), f(b.callsPerSecond, 0));
  const perCall = Object.entries(adminAck.dynamodbRequestsPerCall)
    .map(([operation, n]) => `${operation} ${f(n, 2)}`)
    .join(', ');
  lines.push('', `Ratio ${f(adminAck.ratio)}. DynamoDB requests per call: ${perCall}.`, '');
  return lines;
}

function ackHolesSection(holes: AckHolesResult): string[] {
  const lines: string[] = [];
  const row = rowsInto(lines);
  lines.push(
    `## Ack holes: ${holes.acknowledgements} acknowledgements, ${holes.holes} holes, restart`,
    '',
    '| figure | value |',
    '| --- | --- |',
  );
  row('entries published', `${holes.entries} in ${f(holes.publishSeconds, 0)} s`);
  row(
    'acknowledgements',
    `${holes.acknowledgements} in calls of ${holes.groupSize}, shuffled within windows of ${holes.window} entries`,
  );
  row('acknowledge time', `${f(holes.ackSeconds, 1)} s (${f(holes.acksPerSecond, 0)} acks/s)`);
  row('**write units per acknowledgement**', f(holes.writeUnitsPerAck, 4));
  row('read units per acknowledgement', f(holes.readUnitsPerAck, 4));
  row('UpdateItem calls per acknowledgement', f(holes.updateItemsPerAck, 4));
  row('cursor items / stored bytes per hole', `${holes.cursorItems} / ${f(holes.storedBytesPerHole, 2)}`);
  row('restart (stop, start, queue rebuild)', `${f(holes.restartSeconds, 1)} s`);
  row(
    'after restart: acknowledgements found / lost',
    `${holes.verified.acknowledgementsFound} / ${holes.verified.lost}`,
  );
  row('after restart: backlog (admin stats)', holes.verified.backlog);
  row(
    `random order across the topic (${holes.randomOrder.acknowledgements} acks): write units per ack`,
    f(holes.randomOrder.writeUnitsPerAck, 3),
  );
  row('wall time', `${f(holes.wallSeconds, 0)} s`);
  lines.push('');
  return lines;
}

/** The targets the results carry (as recorded), or those they meet now; and the whole run's time. */
function targetsSection(results: BenchResults): string[] {
  const lines: string[] = [];
  const row = rowsInto(lines);
  const targets = results.targets ?? targetsOf(results);
  lines.push('## Targets', '', '| target | wanted | measured | met |', '| --- | --- | --- | --- |');
  for (const target of targets)
    row(target.what, target.target, target.measured, target.met ? 'yes' : '**no**');
  if (results.wallSeconds !== undefined) lines.push('', `Whole run: ${f(results.wallSeconds, 0)} s.`);
  return lines;
}

function idleDeploymentSection(idle: IdleDeploymentResult): string[] {
  const lines: string[] = [];
  const row = rowsInto(lines);
  const { run, month } = idle;
  lines.push(
    `## Idle deployment: ${idle.topics === 0 ? 'no topic' : `${idle.topics} idle topics with a subscription each`}`,
    '',
    `Measured: ${run.runs} maintenance runs (every ${f(idle.intervalMs, 0)} ms here, every minute on AWS), each ${f(run.handlerMs, 0)} ms, ${f(run.dynamodbWriteUnits, 2)} write units, ${f(run.dynamodbReadUnits, 2)} read units, ${f(run.sqsRequests, 2)} SQS requests.`,
    '',
    '| a month, nobody calling | $ |',
    '| --- | --- |',
  );
  row('maintenance: Lambda', f(month.maintenanceLambda, 3));
  row('maintenance: DynamoDB', f(month.maintenanceDynamodb, 3));
  row('maintenance: SQS', f(month.maintenanceSqs, 3));
  row("scheduler queue's event source polling (assumed)", f(month.schedulerPolling, 3));
  row('CloudWatch alarms', f(month.alarms, 2));
  row('CloudWatch dashboard', f(month.dashboard, 2));
  row('CloudWatch custom metrics', f(month.customMetrics, 2));
  row('the token secret', f(month.tokenSecret, 2));
  row('**total**', `**${f(month.total, 2)}**`);
  lines.push('', ...month.formula.map((line) => `- ${line}`), '');
  return lines;
}
