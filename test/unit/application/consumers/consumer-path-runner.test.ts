import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PathScript, pathScriptArb } from '../../../support/sim/consumer-path-script.ts';
import { runConsumerPath } from '../../../support/sim/consumer-path-simulation.ts';
import { emptyCounters, type SimCounters, typeSeed } from '../../../support/sim/sim-counters.ts';
import type { Mutation } from '../../../support/sim/sim-script.ts';

/**
 * The Lambda consumer runner's path in the consumer-path simulation (consumer-path-runner.ts;
 * issue 21 criterion 1, issue 24 criterion 7): processQueueRecords through the runner's
 * batchHandlerOf, with a seeded function that acknowledges, fails, asks a RetryAfterError delay,
 * fails non-retryable or throws. Fixed seeds (ACKLINE_SIM_SEED changes them).
 */
const SEED = Number(process.env.ACKLINE_SIM_SEED ?? 20_261_123);

/** Scripts with a dead-letter policy and at least one runner step (Shared, Key_Shared). */
const withRunner = (types: ('Shared' | 'Key_Shared')[]) =>
  pathScriptArb(types).filter(
    (script) =>
      script.deadLetter !== undefined &&
      script.deletion === undefined &&
      script.rounds.some((round) => round.actions.some((action) => action.kind === 'runner')),
  );

async function run(
  scripts: fc.Arbitrary<PathScript>,
  options: { seed: number; numRuns: number; counters: SimCounters; mutation?: Mutation },
): Promise<string | undefined> {
  const result = await fc.check(
    fc.asyncProperty(scripts, fc.scheduler(), async (script, scheduler) => {
      await runConsumerPath(script, scheduler, options.counters, options.mutation);
    }),
    { seed: options.seed, numRuns: options.numRuns, endOnFailure: true },
  );
  return result.failed ? String((result.errorInstance as Error).message) : undefined;
}

describe('consumer path simulation: the Lambda consumer runner', () => {
  it.each([
    'Shared',
    'Key_Shared',
  ] as const)('%s: the runner acknowledges, nacks (its own delay too) and dead-letters non-retryable failures at once, every delivery checked', async (type) => {
    const counters = emptyCounters();
    expect(await run(withRunner([type]), { seed: typeSeed(SEED + 3, type), numRuns: 60, counters })).toBe(
      undefined,
    );
    expect(counters.runnerInvocations).toBeGreaterThan(20);
    expect(counters.nonRetryableDeadLetters).toBeGreaterThan(0);
    expect(counters.retryAfterNacks).toBeGreaterThan(0);
  }, 30_000);

  // A test must be able to fail: a runner that treats a non-retryable failure as a normal nack.
  it('catches a runner that nacks a non-retryable failure with the backoff instead of dead-lettering it', async () => {
    const found = await run(withRunner(['Shared', 'Key_Shared']), {
      seed: SEED,
      numRuns: 40,
      counters: emptyCounters(),
      mutation: 'nonRetryableAsNack',
    });
    expect(found).toMatch(/^NR: /);
  }, 30_000);
});
