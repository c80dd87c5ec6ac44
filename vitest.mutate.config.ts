import { defineConfig } from 'vitest/config';
import { unitProject } from './vitest.config.ts';

// The tests `npm run mutate` runs against each mutant (stryker.config.json): the unit project
// alone, never the integration, infra or packages projects (StrykerJS's vitest runner takes a
// config file, not a project name). Stryker times each mutant's tests itself, from their times in
// its dry run; vitest's own limit per test is only raised above them, as instrumented code runs
// slower than the plain code `npm test` runs.
export default defineConfig({
  test: { ...unitProject, testTimeout: 60_000 },
});
