import type { AckHolesResult } from './ack-holes.ts';
import type { AdminAckResult } from './admin-ack.ts';
import type { Distribution } from './harness.ts';
import type { BareSqsResult, LifecycleResult } from './lifecycle.ts';
import type { CostPerMillion } from './prices.ts';
import type { RedeliveryResult } from './redelivery.ts';

export interface BenchResults {
  ranAt: string;
  command: string;
  machine: { cpus: number; cpuModel: string; node: string };
  prices: { date: string; region: string };
  lifecycle?: {
    ackline: LifecycleResult;
    bareSqs: BareSqsResult;
    throughputRatio: number;
    sqsRequestRatio: number;
    costRatio: number;
  };
  redelivery?: RedeliveryResult;
  adminAck?: AdminAckResult;
  ackHoles?: AckHolesResult;
  wallSeconds?: number;
  targets?: Target[];
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

export function targetsOf(results: BenchResults): Target[] {
  const targets: Target[] = [];
  const add = (what: string, target: string, value: number, limit: number, atMost: boolean, digits = 3) =>
    targets.push({ what, target, measured: f(value, digits), met: atMost ? value <= limit : value >= limit });
  const lifecycle = results.lifecycle;
  if (lifecycle) {
    add(
      'lifecycle: DynamoDB write units per message (failed conditional writes included)',
      '≤ 1.5',
      lifecycle.ackline.dynamodbWriteUnitsPerMessage,
      1.5,
      true,
    );
    add(
      'lifecycle: DynamoDB read units per message',
      '≤ 0.3',
      lifecycle.ackline.dynamodbReadUnitsPerMessage,
      0.3,
      true,
    );
    add('lifecycle: SQS requests per message', '≤ 0.35', lifecycle.ackline.sqsRequestsPerMessage, 0.35, true);
    add('throughput: ackline / bare SQS', '≥ 0.4', lifecycle.throughputRatio, 0.4, false);
  }
  if (results.redelivery) {
    for (const [name, series] of Object.entries(results.redelivery)) {
      add(`redelivery (${name}): early deliveries`, '0', series.early, 0, true, 0);
      add(`redelivery (${name}): p99 lateness, ms`, '≤ 1200', series.latenessMs.p99, 1200, true, 0);
    }
  }
  if (results.ackHoles) {
    add('ack holes: write units per acknowledgement', '≤ 0.2', results.ackHoles.writeUnitsPerAck, 0.2, true);
    add(
      'ack holes: acknowledgements lost across the restart',
      '0',
      results.ackHoles.verified.lost,
      0,
      true,
      0,
    );
  }
  if (results.adminAck) {
    add(
      'admin acknowledgeMessage: p99 latency, ms',
      '≤ 50',
      results.adminAck.acknowledgeMessage.latencyMs.p99,
      50,
      true,
      1,
    );
    add(
      'admin acknowledgeMessage: calls/s over bare UpdateItem',
      '≥ 0.5',
      results.adminAck.ratio,
      0.5,
      false,
    );
  }
  if (results.wallSeconds !== undefined)
    add('whole run, seconds', '≤ 600', results.wallSeconds, 600, true, 0);
  return targets;
}

export function markdownReport(results: BenchResults): string {
  const lines: string[] = [];
  const row = (...cells: (string | number)[]) => lines.push(`| ${cells.join(' | ')} |`);
  lines.push(
    `# ackline bench, ${results.ranAt}`,
    '',
    `\`${results.command}\` on ${results.machine.cpus} × ${results.machine.cpuModel}, Node ${results.machine.node}; prices: ${results.prices.region}, ${results.prices.date} (bench/prices.json).`,
    '',
  );
  const lifecycle = results.lifecycle;
  if (lifecycle) {
    const { ackline, bareSqs } = lifecycle;
    lines.push(
      `## Lifecycle: ${ackline.messages} messages of 1 KiB, one Shared subscription, batches of 10`,
      '',
      '| per message | ackline | bare SQS |',
      '| --- | --- | --- |',
    );
    const operations = [
      ...new Set([...Object.keys(ackline.perMessage), ...Object.keys(bareSqs.perMessage)]),
    ].sort();
    for (const operation of operations) {
      const a = ackline.perMessage[operation];
      const b = bareSqs.perMessage[operation];
      const units = (u: typeof a) =>
        u && (u.readCapacityUnits > 0 || u.writeCapacityUnits > 0)
          ? ` (${u.readCapacityUnits > 0 ? `${f(u.readCapacityUnits, 3)} RU` : ''}${u.writeCapacityUnits > 0 ? `${f(u.writeCapacityUnits, 3)} WU` : ''})`
          : '';
      row(`${operation} requests`, a ? `${f(a.requests, 3)}${units(a)}` : '-', b ? f(b.requests, 3) : '-');
    }
    row('**SQS requests**', f(ackline.sqsRequestsPerMessage, 3), f(bareSqs.sqsRequestsPerMessage, 3));
    row('**DynamoDB write units**', f(ackline.dynamodbWriteUnitsPerMessage, 3), '-');
    row('**DynamoDB read units**', f(ackline.dynamodbReadUnitsPerMessage, 3), '-');
    for (const [name, count] of Object.entries(ackline.invocationsPerMessage).sort()) {
      row(name === 'apiGateway' ? 'API Gateway requests' : `Lambda ${name} invocations`, f(count, 3), '-');
    }
    row('$ per million messages', usd(ackline.usdPerMillionMessages), usd(bareSqs.usdPerMillionMessages));
    row('**throughput, messages/s**', f(ackline.messagesPerSecond, 0), f(bareSqs.messagesPerSecond, 0));
    row('duplicates delivered', ackline.duplicates, '-');
    lines.push(
      '',
      `Ratios ackline / bare SQS: throughput ${f(lifecycle.throughputRatio)}, SQS requests ${f(lifecycle.sqsRequestRatio)}, cost ${f(lifecycle.costRatio, 1)}.`,
      '',
      'Requests marked "(emulator only)" are made because dynalite lacks a DynamoDB feature (a refused compare-and-set answers with the item on AWS, ReturnValuesOnConditionCheckFailure, at no read unit): shown, not billed in the totals.',
      '',
    );
  }
  if (results.redelivery) {
    lines.push(
      '## Redelivery timing (observed minus scheduled delay, ms)',
      '',
      '| series | redeliveries | min / p50 / p99 / max | early |',
      '| --- | --- | --- | --- |',
    );
    for (const series of Object.values(results.redelivery)) {
      row(series.schedule, series.redeliveries, ms(series.latenessMs), series.early);
    }
    lines.push('');
  }
  if (results.adminAck) {
    const { acknowledgeMessage: a, bareUpdateItem: b } = results.adminAck;
    lines.push(
      `## Admin acknowledgeMessage: ${a.calls} calls at concurrency ${a.concurrency}`,
      '',
      '| | latency ms min / p50 / p99 / max | calls/s |',
      '| --- | --- | --- |',
    );
    row('acknowledgeMessage (HTTP gateway, authorizer, handler)', ms(a.latencyMs), f(a.callsPerSecond, 0));
    row('bare DynamoDB UpdateItem', ms(b.latencyMs), f(b.callsPerSecond, 0));
    const perCall = Object.entries(results.adminAck.dynamodbRequestsPerCall)
      .map(([operation, n]) => `${operation} ${f(n, 2)}`)
      .join(', ');
    lines.push('', `Ratio ${f(results.adminAck.ratio)}. DynamoDB requests per call: ${perCall}.`, '');
  }
  const holes = results.ackHoles;
  if (holes) {
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
  }
  const targets = results.targets ?? targetsOf(results);
  lines.push('## Targets', '', '| target | wanted | measured | met |', '| --- | --- | --- | --- |');
  for (const target of targets)
    row(target.what, target.target, target.measured, target.met ? 'yes' : '**no**');
  if (results.wallSeconds !== undefined) lines.push('', `Whole run: ${f(results.wallSeconds, 0)} s.`);
  return lines.join('\n');
}
