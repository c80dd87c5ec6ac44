import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PathScript, pathScriptArb } from '../../../support/sim/consumer-path-script.ts';
import { runConsumerPath } from '../../../support/sim/consumer-path-simulation.ts';
import { emptyCounters, formatCounters, typeSeed } from '../../../support/sim/sim-counters.ts';
import type { Mutation } from '../../../support/sim/sim-script.ts';

/**
 * The consumer path's simulation (issue 21, criterion 1): the consumer use cases, the producer,
 * the scheduler's jobs and maintenance in several warm containers over the in-memory stores and a
 * fake SQS, with crashes, throttled and repeated store calls and skewed clocks, every delivery
 * checked. Fixed seeds here (ACKLINE_SIM_PATH_RUNS and ACKLINE_SIM_SEED change them); more with
 * `npm run sim -- --path consumer`.
 */
const RUNS = Number(process.env.ACKLINE_SIM_PATH_RUNS ?? 20);
const SEED = Number(process.env.ACKLINE_SIM_SEED ?? 20_261_123);

async function violationFound(
  scripts: fc.Arbitrary<PathScript>,
  numRuns: number,
  mutation?: Mutation,
): Promise<string | undefined> {
  const result = await fc.check(
    fc.asyncProperty(scripts, fc.scheduler(), async (script, scheduler) => {
      await runConsumerPath(script, scheduler, emptyCounters(), mutation);
    }),
    { seed: SEED, numRuns, endOnFailure: true },
  );
  return result.failed ? String((result.errorInstance as Error).message) : undefined;
}

describe('consumer path simulation', () => {
  it.each([
    'Shared',
    'Key_Shared',
    'Exclusive',
    'Failover',
  ] as const)('%s: every delivery through the use cases keeps the invariants, and what the workload reached is counted', async (type) => {
    const counters = emptyCounters();
    await fc.assert(
      fc.asyncProperty(pathScriptArb([type]), fc.scheduler(), async (script, scheduler) => {
        await runConsumerPath(script, scheduler, counters);
      }),
      { seed: typeSeed(SEED + 1, type), numRuns: RUNS },
    );
    if (process.env.ACKLINE_SIM_COUNTERS) console.log(formatCounters(counters, type).join('\n'));
    expect(counters.schedules).toBe(RUNS);
    expect(counters.deliveries).toBeGreaterThan(RUNS);
    expect(counters.coldStarts).toBeGreaterThan(0);
  }, 60_000);

  // A test must be able to fail: lost head updates (a compare-and-set that applies whatever the
  // version) break a count, an order, a holder or an acknowledgement on the consumer path too.
  it('catches a deliberately broken dispatch store (blind head writes)', async () => {
    expect(await violationFound(pathScriptArb(['Shared', 'Key_Shared']), 60, 'blindHeadWrites')).toMatch(
      /^(I1|I2|I4|I5|holder|DL): /,
    );
  }, 60_000);

  it('catches consumers that are never fenced (a replaced Failover owner receives again: I6)', async () => {
    expect(await violationFound(pathScriptArb(['Failover']), 60, 'noFencing')).toMatch(/^I6: /);
  }, 60_000);

  it("catches containers that ignore the consumers' cap (a consumer holds past it: I7)", async () => {
    const capped = pathScriptArb(['Shared']).filter((script) => script.maxUnackedPerConsumer < 1_000);
    expect(await violationFound(capped, 60, 'noConsumerCap')).toMatch(/^I7: /);
  }, 60_000);

  // Issue 21's admin side (consumer-path-admin.ts): each check fails on a use case broken on purpose.
  it('catches a maintenance that never enforces the message TTL (a message expired is delivered)', async () => {
    const withTtl = pathScriptArb(['Shared', 'Exclusive']).filter(
      (script) => script.ttlSeconds !== undefined,
    );
    expect(await violationFound(withTtl, 60, 'noTtlEnforcement')).toMatch(/^I1: /);
  }, 60_000);

  it('catches a retention that deletes what a subscription did not consume', async () => {
    const withRetention = pathScriptArb(['Shared', 'Failover']).filter(
      (script) => script.retention !== undefined && script.deletion === undefined,
    );
    expect(await violationFound(withRetention, 60, 'trimUnconsumed')).toMatch(/^(retention|I2): /);
  }, 60_000);

  it('catches a deletion that deletes nothing (a consumer still receives)', async () => {
    const deleting = pathScriptArb(['Shared', 'Key_Shared']).filter(
      (script) => script.deletion !== undefined,
    );
    expect(await violationFound(deleting, 60, 'noDeletion')).toMatch(/^deleted: /);
  }, 60_000);

  it('catches tracker entries that are never stored (nothing redelivered)', async () => {
    expect(await violationFound(pathScriptArb(['Shared']), 60, 'dropTracker')).toMatch(
      /^(I2|I4|I5|DL|nack): /,
    );
  }, 60_000);
});
