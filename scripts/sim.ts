/**
 * `npm run sim -- --runs N [--seed S] [--types Shared,Exclusive] [--replay PATH]`: the delivery
 * engine's simulation beyond the fixed seeds `npm test` runs. Prints how many schedules it
 * explored per subscription type; on a violation, the minimal failing script (shrunk by
 * fast-check), its seed and path (to replay it with --seed and --replay), and exits 1.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import type { SubscriptionType } from '../shared/domain/subscription-type.ts';
import { runSimulation, scriptArb } from '../test/support/sim/delivery-simulation.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '500' },
    seed: { type: 'string' },
    types: { type: 'string', default: 'Shared,Key_Shared,Exclusive,Failover' },
    replay: { type: 'string' },
  },
});
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() % 2_147_483_647 : Number(values.seed);
const types = (values.types as string).split(',') as SubscriptionType[];
let explored = 0;
let failed = false;
const started = performance.now();
for (const type of types) {
  const result = await fc.check(
    fc.asyncProperty(scriptArb([type]), fc.scheduler(), async (script, scheduler) => {
      await runSimulation(script, scheduler);
    }),
    { seed, numRuns: runs, ...(values.replay ? { path: values.replay, endOnFailure: true } : {}) },
  );
  explored += result.numRuns;
  if (result.failed) {
    failed = true;
    console.log(
      `${type}: FAILED after ${result.numRuns} schedules (seed ${seed}, path ${result.counterexamplePath})`,
    );
    console.log(String((result.errorInstance as Error).message));
    console.log(JSON.stringify(result.counterexample?.[0]));
    console.log(String(result.counterexample?.[1]).split('\n').slice(-40).join('\n'));
  } else {
    console.log(`${type}: ${result.numRuns} schedules, no violation (seed ${seed})`);
  }
}
console.log(`${explored} schedules explored in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);
