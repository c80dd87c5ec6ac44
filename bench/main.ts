/**
 * `npm run bench`: cost, speed and timing benchmarks on a fresh embedded stack.
 * Prints a Markdown report and writes the same figures as JSON.
 *   --out <file>    where the JSON goes (default .ackline/bench/results.json)
 *   --only <a,b>    run only these phases: lifecycle, idle, idle-deployment, redelivery, holes, admin
 *   --scale <x>     multiply the workloads' sizes (e.g. 0.1 for a quick look)
 *   --rounds <n>    lifecycle rounds (default 3; the throughput target takes their median)
 *   --warmup <n>    messages through each path before the rounds, not counted (default 2000; 0: none)
 *   --idle-wait-ms <ms>  the wait of the idle consumer's measured polls (default 2000)
 *   --detail        split each DynamoDB operation by table and item kind (where units go)
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { quietAwsSdkNodeWarning } from '../infra/local/quiet-warnings.ts';
import { MAX_RECEIVE_WAIT_MS } from '../shared/client/consumer.ts';
import { runAckHoles } from './ack-holes.ts';
import { runAdminAck } from './admin-ack.ts';
import { BenchStack, median, note } from './harness.ts';
import { type HotKeys, hotKeysOf } from './hot-keys.ts';
import { runIdleConsumer } from './idle-consumer.ts';
import { measureIdleDeployment } from './idle-deployment.ts';
import {
  type BareSqsRun,
  type LifecycleRun,
  runBareSqs,
  runLifecycle,
  summariseBareSqs,
  summariseLifecycle,
} from './lifecycle.ts';
import { prices } from './prices.ts';
import { runRedelivery } from './redelivery.ts';
import { type BenchResults, type LifecycleRound, markdownReport, targetsOf } from './report.ts';

quietAwsSdkNodeWarning();
const { values } = parseArgs({
  options: {
    out: { type: 'string', default: '.ackline/bench/results.json' },
    only: { type: 'string' },
    scale: { type: 'string', default: '1' },
    detail: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2000' },
    'idle-wait-ms': { type: 'string', default: '2000' },
  },
});
const scale = Number(values.scale);
if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${values.scale}`);
const warmup = Number(values.warmup);
if (!(Number.isInteger(warmup) && warmup >= 0))
  throw new Error(`--warmup must be a non-negative integer, got ${values.warmup}`);
const rounds = Number(values.rounds);
if (!(Number.isInteger(rounds) && rounds > 0))
  throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
const idleWaitMs = Number(values['idle-wait-ms']);
if (!(Number.isInteger(idleWaitMs) && idleWaitMs >= 0 && idleWaitMs <= MAX_RECEIVE_WAIT_MS)) {
  throw new Error(
    `--idle-wait-ms must be an integer from 0 to ${MAX_RECEIVE_WAIT_MS}, got ${values['idle-wait-ms']}`,
  );
}
const phases = ['lifecycle', 'idle', 'idle-deployment', 'redelivery', 'holes', 'admin'];
const only = values.only ? values.only.split(',') : phases;
const unknown = only.filter((phase) => !phases.includes(phase));
if (unknown.length > 0)
  throw new Error(`unknown phase(s) ${unknown.join(', ')}; phases: ${phases.join(', ')}`);
const scaled = (n: number, minimum = 1) => Math.max(minimum, Math.round(n * scale));

const started = performance.now();
const dataDir = await mkdtemp(join(tmpdir(), 'ackline-bench-'));
note(`ackline bench: fresh embedded stack in ${dataDir}`);
const stack = await BenchStack.start(dataDir, { detail: values.detail });
const results: BenchResults = {
  ranAt: new Date().toISOString(),
  command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version },
  prices: { date: prices.date, region: prices.region },
};
try {
  if (only.includes('lifecycle')) {
    const options = { messages: scaled(10_000, 100), payloadBytes: 1024, batchSize: 10, concurrency: 4 };
    const shared = { subscriptionType: 'Shared', consumers: options.concurrency } as const;
    const acklineRuns: LifecycleRun[] = [];
    const bareSqsRuns: BareSqsRun[] = [];
    const roundResults: LifecycleRound[] = [];
    const hotKeyRounds: HotKeys[] = [];
    if (warmup > 0) {
      // The stack's functions and its SQS server start cold (module loading, JIT, connection pools):
      // the first messages through either path measure that, not the path. Each run meters its own
      // requests, so this one is in no figure.
      note(
        `lifecycle warm-up: ${scaled(warmup, 100)} messages through ackline and through bare SQS, not counted`,
      );
      const warm = { ...options, messages: scaled(warmup, 100) };
      await runLifecycle(stack, { ...warm, ...shared, topic: 'bench-lifecycle-warmup' });
      await runBareSqs(stack, { ...warm, queueName: 'bench-bare-sqs-warmup' });
    }
    for (let round = 1; round <= rounds; round++) {
      note(`lifecycle round ${round} of ${rounds}: publish, receive, acknowledge (Shared), then bare SQS`);
      const ackline = await runLifecycle(stack, { ...options, ...shared, topic: `bench-lifecycle-${round}` });
      const bareSqs = await runBareSqs(stack, { ...options, queueName: `bench-bare-sqs-${round}` });
      acklineRuns.push(ackline);
      bareSqsRuns.push(bareSqs);
      const own = summariseLifecycle(shared, [ackline]);
      const hot = hotKeysOf(ackline.usage, ackline.messages);
      hotKeyRounds.push(hot);
      roundResults.push({
        acklineMessagesPerSecond: ackline.messagesPerSecond,
        bareSqsMessagesPerSecond: bareSqs.messagesPerSecond,
        throughputRatio: ackline.messagesPerSecond / bareSqs.messagesPerSecond,
        dynamodbWriteUnitsPerMessage: own.dynamodbWriteUnitsPerMessage,
        dynamodbReadUnitsPerMessage: own.dynamodbReadUnitsPerMessage,
        sqsRequestsPerMessage: own.sqsRequestsPerMessage,
        ceilingMessagesPerSecond: hot.ceiling.messagesPerSecond,
      });
    }
    note('lifecycle: the same workload with one Exclusive consumer');
    const exclusiveOptions = { subscriptionType: 'Exclusive', consumers: 1 } as const;
    const exclusiveRun = await runLifecycle(stack, {
      ...options,
      ...exclusiveOptions,
      topic: 'bench-lifecycle-exclusive',
    });
    const exclusive = summariseLifecycle(exclusiveOptions, [exclusiveRun]);
    const ackline = summariseLifecycle(shared, acklineRuns);
    const bareSqs = summariseBareSqs(bareSqsRuns);
    results.lifecycle = {
      warmupMessages: warmup > 0 ? scaled(warmup, 100) : 0,
      rounds: roundResults,
      ackline,
      bareSqs,
      throughputRatio: median(roundResults.map((round) => round.throughputRatio)),
      sqsRequestRatio: ackline.sqsRequestsPerMessage / bareSqs.sqsRequestsPerMessage,
      costRatio: ackline.usdPerMillionMessages.total / bareSqs.usdPerMillionMessages.total,
      exclusive: {
        ackline: exclusive,
        throughputRatio:
          exclusive.messagesPerSecond / median(roundResults.map((round) => round.bareSqsMessagesPerSecond)),
      },
      hotKeys: { rounds: hotKeyRounds, exclusive: hotKeysOf(exclusiveRun.usage, exclusiveRun.messages) },
    };
  }
  if (only.includes('idle')) {
    note('idle HTTP consumer: receive polls and heartbeats on idle topics');
    results.idleConsumer = await runIdleConsumer(stack, {
      consumers: 4,
      polls: 3,
      waitMs: idleWaitMs,
      heartbeats: 3,
    });
  }
  if (only.includes('idle-deployment')) results.idleDeployment = await measureIdleDeployment(scale);
  if (only.includes('redelivery')) {
    note('redelivery timing');
    results.redelivery = await runRedelivery(stack, { messages: scaled(20, 2), rounds: 3 });
  }
  if (only.includes('admin')) {
    note('admin acknowledgeMessage');
    results.adminAck = await runAdminAck(stack, { calls: scaled(2_000, 16), concurrency: 16 });
  }
  if (only.includes('holes')) {
    note('ack holes (ends with a restart of the embedded stack)');
    results.ackHoles = await runAckHoles(stack, {
      entries: scaled(2_000_000, 2_000),
      groupSize: 1_000,
      window: 10_000,
      randomOrderSample: scaled(20_000, 1_000),
    });
  }
} catch (error) {
  note(`bench failed; the embedded stack printed:\n${stack.tail()}`);
  throw error;
} finally {
  await stack.stop();
  await rm(dataDir, { recursive: true, force: true });
}
results.wallSeconds = (performance.now() - started) / 1000;
results.targets = targetsOf(results);
const out = resolve(values.out);
await mkdir(dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(markdownReport(results));
note(`figures written to ${out}`);
