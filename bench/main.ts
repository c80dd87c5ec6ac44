/**
 * `npm run bench`: cost, speed and timing benchmarks on a fresh embedded stack.
 * Prints a Markdown report and writes the same figures as JSON.
 *   --out <file>    where the JSON goes (default .ackline/bench/results.json)
 *   --only <a,b>    run only these phases: lifecycle, redelivery, holes, admin
 *   --scale <x>     multiply the workloads' sizes (e.g. 0.1 for a quick look)
 *   --detail        split each DynamoDB operation by table and item kind (where units go)
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { quietAwsSdkNodeWarning } from '../infra/local/quiet-warnings.ts';
import { runAckHoles } from './ack-holes.ts';
import { runAdminAck } from './admin-ack.ts';
import { BenchStack, note } from './harness.ts';
import { runBareSqs, runLifecycle } from './lifecycle.ts';
import { prices } from './prices.ts';
import { runRedelivery } from './redelivery.ts';
import { type BenchResults, markdownReport, targetsOf } from './report.ts';

quietAwsSdkNodeWarning();
const { values } = parseArgs({
  options: {
    out: { type: 'string', default: '.ackline/bench/results.json' },
    only: { type: 'string' },
    scale: { type: 'string', default: '1' },
    detail: { type: 'boolean', default: false },
  },
});
const scale = Number(values.scale);
if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${values.scale}`);
const phases = ['lifecycle', 'redelivery', 'holes', 'admin'];
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
    note('lifecycle: publish, receive, acknowledge');
    const ackline = await runLifecycle(stack, options);
    const bareSqs = await runBareSqs(stack, options);
    results.lifecycle = {
      ackline,
      bareSqs,
      throughputRatio: ackline.messagesPerSecond / bareSqs.messagesPerSecond,
      sqsRequestRatio: ackline.sqsRequestsPerMessage / bareSqs.sqsRequestsPerMessage,
      costRatio: ackline.usdPerMillionMessages.total / bareSqs.usdPerMillionMessages.total,
    };
  }
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
