import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { unitProject } from './vitest.config.ts';

/**
 * Runs the simulation's test files after every other test file: a mutant's run stops at its first
 * failing test (Stryker's bail), and the engine's and consumers' unit tests kill most mutants in
 * milliseconds where a simulation test takes seconds. The order changes no test's outcome.
 */
class SimulationLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Vitest's own order runs the longest files first (good for a whole run's parallelism, bad
    // for a mutant's: a 15 s file in front of a unit test that kills the mutant in milliseconds).
    // Shortest first, by the durations vitest recorded; files without one (new) first.
    const duration = (file: TestSpecification) =>
      this.ctx.cache.getFileTestResults(
        `${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`,
      )?.duration ?? 0;
    const sorted = [...(await super.sort(files))].sort((a, b) => duration(a) - duration(b));
    const isSimulation = (file: TestSpecification) => file.moduleId.includes('simulation');
    return [...sorted.filter((file) => !isSimulation(file)), ...sorted.filter(isSimulation)];
  }
}

// The tests `npm run mutate` runs against each mutant (stryker.config.json), and `npm run
// engine-bugs` against each injected bug: the unit project alone, never the integration, infra or
// packages projects (StrykerJS's vitest runner takes a config file, not a project name). Stryker
// times each mutant's tests itself, from their times in its dry run; vitest's own limit per test is
// only raised above them, as instrumented code runs slower than the plain code `npm test` runs.
export default defineConfig({
  test: { ...unitProject, testTimeout: 60_000, sequence: { sequencer: SimulationLast } },
});
