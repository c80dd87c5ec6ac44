/**
 * `npm run mutate [-- STRYKER OPTIONS]`: StrykerJS over the delivery engine and the consumer use
 * cases (stryker.config.json), then the mutation score of its report as
 * docs/design/delivery-proof.md#mutation-testing defines it. Options go to `stryker run`:
 * `--mutate <glob>` runs a part, `--force` tests again what the incremental file would reuse,
 * `--dryRunOnly` only instruments and runs the tests once (it counts the mutants).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { MUTATION_REPORT, printMutationScore } from './mutation-score.ts';

const args = process.argv.slice(2);
// The simulation at `npm test`'s run size and seed, whatever the shell exports.
const env = { ...process.env };
delete env.ACKLINE_SIM_RUNS;
delete env.ACKLINE_SIM_SEED;
const started = performance.now();
const stryker = spawnSync(join('node_modules', '.bin', 'stryker'), ['run', ...args], {
  stdio: 'inherit',
  env,
});
const minutes = (performance.now() - started) / 60_000;
if (stryker.error) throw stryker.error;
if (!args.includes('--dryRunOnly')) printMutationScore(MUTATION_REPORT);
console.log(`npm run mutate took ${minutes.toFixed(1)} min`);
process.exit(stryker.status ?? 1);
