import { defineConfig } from 'vitest/config';

/** The unit project's settings, also all that `npm run mutate` runs (see vitest.mutate.config.ts). */
export const unitProject = {
  name: 'unit',
  include: ['test/unit/**/*.test.ts'],
  environment: 'node' as const,
};

// Four projects, run separately by `npm test` so a failure names its layer:
// - unit: the pure domain and application logic, no network, no time;
// - integration: real HTTP against the embedded stack (dynalite + local-aws-sqs);
// - infra: assertions on the synthesized CDK template;
// - packages: the packed packages installed into a fresh project, and `npm start` as a user runs it.
export default defineConfig({
  test: {
    projects: [
      { test: unitProject },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // The suites share one embedded stack; files run in parallel workers.
          fileParallelism: true,
        },
      },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'packages',
          include: ['test/packages/**/*.test.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
