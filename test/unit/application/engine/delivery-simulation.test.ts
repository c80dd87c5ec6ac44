import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UNIT_MINIMA } from '../../../support/sim/coverage-minima.ts';
import {
  type Mutation,
  runSimulation,
  type SimScript,
  scriptArb,
} from '../../../support/sim/delivery-simulation.ts';
import { emptyCounters, formatCounters, gateFailures, typeSeed } from '../../../support/sim/sim-counters.ts';

/**
 * The delivery engine's proof by simulation (issue 11, criterion 6): fixed seeds here, more with
 * `npm run sim -- --runs N`. Each run is a random script of concurrent publishers, consumers,
 * admin acks and maintenance, with crashes at any port call, interleaved by fast-check's scheduler,
 * which shrinks a failure to a minimal script and schedule.
 */
const RUNS = Number(process.env.ACKLINE_SIM_RUNS ?? 150);
const SEED = Number(process.env.ACKLINE_SIM_SEED ?? 20_261_123);

/** The Violation a broken engine makes the simulation raise, or undefined when none was found. */
async function violationFound(mutation: Mutation, scripts: fc.Arbitrary<SimScript>, numRuns: number) {
  const result = await fc.check(
    fc.asyncProperty(scripts, fc.scheduler(), async (script, scheduler) => {
      await runSimulation(script, scheduler, mutation);
    }),
    { seed: SEED, numRuns, endOnFailure: true },
  );
  return result.failed ? String((result.errorInstance as Error).message) : undefined;
}

/** Many one-message receives by three consumers, nothing acknowledged: many runs at once. */
const manyRuns: fc.Arbitrary<SimScript> = fc.constant({
  type: 'Shared',
  consumers: 3,
  ledgerSize: 250,
  ackTimeout: false,
  staleSeed: 1,
  duplicateCalls: false,
  maxUnacked: 200_000,
  maxUnackedPerConsumer: 50_000,
  initial: 150,
  rounds: Array.from({ length: 50 }, (_, i) => ({
    actions: [0, 1, 2].map((k) => ({ kind: 'receive' as const, consumer: (i + k) % 3, max: 1 })),
    advanceMs: 0,
  })),
});

/**
 * The fault mixes each subscription type's seeded scripts split into, one test each (so that no
 * test runs long, and a mutation run can run only the tests that cover a mutant). Every script has
 * stale reads (a read of the head or the ledger may answer one of its last versions) and crashes
 * (an action dies at a port call, before or after it applied, with odds of 1 in 6); the mixes differ by duplicated calls (a port call applied again later, with other calls between, as a retried request may).
 * Both run the same `RUNS` scripts from `SEED`, each simulating those of its mix: together they run
 * exactly what one test per type ran. Each type draws from its own seed (derived from `SEED`), and
 * each test asserts the coverage gate's minima for its type and mix (docs/design/delivery-proof.md).
 */
const FAULT_MIXES = [
  { name: 'crashes and stale reads', duplicateCalls: false },
  { name: 'crashes, stale reads and duplicated calls', duplicateCalls: true },
] as const;

const TYPES = ['Shared', 'Key_Shared', 'Exclusive', 'Failover'] as const;

/**
 * A consumer holds entries, the admin resets the cursor before them, the consumer acknowledges one
 * by its delivery handle, another consumer receives: the acknowledgement must hold (I1).
 */
const afterReset: fc.Arbitrary<SimScript> = fc
  .record({ initial: fc.integer({ min: 2, max: 30 }), resetTo: fc.nat(), ack: fc.nat() })
  .map(({ initial, resetTo, ack }) => ({
    type: 'Shared' as const,
    consumers: 2,
    ledgerSize: 40,
    ackTimeout: false,
    staleSeed: 1,
    duplicateCalls: false,
    maxUnacked: 200_000,
    maxUnackedPerConsumer: 50_000,
    initial,
    rounds: [
      { actions: [{ kind: 'receive' as const, consumer: 0, max: 8 }], advanceMs: 0 },
      { actions: [{ kind: 'resetCursor' as const, pick: resetTo }], advanceMs: 0 },
      { actions: [{ kind: 'ack' as const, consumer: 0, pick: ack, byId: false }], advanceMs: 0 },
      { actions: [{ kind: 'receive' as const, consumer: 1, max: 8 }], advanceMs: 0 },
    ],
  }));

/**
 * Issue 25's shrunk script (`npm run sim -- --runs 700 --seed 465351305`): one consumer at a cap
 * of 2 with an ack timeout; its last receive reads a head three versions old, whose window left
 * room for one more, and its tracker pickup's lost write answered the current head, on which it
 * claimed without judging the room again (c0.0 held 3 of 2).
 */
const issue25 = (type: 'Shared' | 'Key_Shared'): fc.Arbitrary<SimScript> =>
  fc.constant({
    type,
    consumers: 1,
    ledgerSize: 250,
    ackTimeout: true,
    initial: 30,
    staleSeed: 2_147_483_642,
    duplicateCalls: true,
    maxUnacked: 8,
    maxUnackedPerConsumer: 2,
    rounds: [
      { actions: [{ kind: 'receive', consumer: 0, max: 1 }], advanceMs: 0 },
      { actions: [{ kind: 'skipAll', crash: { atCall: 3, applied: false } }], advanceMs: 61_000 },
      {
        actions: [
          { kind: 'receive', consumer: 0, max: 1 },
          { kind: 'publish', count: 3, keys: 1, delayMs: 0, crash: false },
          { kind: 'receive', consumer: 0, max: 2 },
        ],
        advanceMs: 0,
      },
      { actions: [{ kind: 'receive', consumer: 0, max: 1 }], advanceMs: 0 },
    ],
  });

/**
 * Three consumers at a cap of 5 receive one at a time until the head spills runs to a page; once
 * those are past their ack timeout, c0 receives twice at once, twice. Both receives count the
 * same holding, and a page's write is not conditioned on the head: c0 may pass its cap by what
 * the two took from the page (the design's overshoot within a count's age), and by nothing more.
 */
const pagesAlongside: fc.Arbitrary<SimScript> = fc.constant({
  type: 'Shared',
  consumers: 3,
  ledgerSize: 250,
  ackTimeout: true,
  staleSeed: 11,
  duplicateCalls: false,
  maxUnacked: 200_000,
  maxUnackedPerConsumer: 5,
  initial: 30,
  rounds: [
    ...Array.from({ length: 15 }, (_, i) => ({
      actions: [{ kind: 'receive' as const, consumer: i % 3, max: 1 }],
      advanceMs: i % 5 === 4 ? 500 : 0,
    })),
    { actions: [{ kind: 'maintenance' as const }], advanceMs: 20_000 },
    ...[0, 1].map(() => ({
      actions: [2, 1].map((max) => ({ kind: 'receive' as const, consumer: 0, max })),
      advanceMs: 0,
    })),
  ],
});

/**
 * Issue 21 (Pulsar's DeadLetterTopicTest.testDuplicatedMessageSendToDeadLetterTopic): three Shared
 * consumers with maxRedeliverCount 1 and an ack timeout, nobody acknowledging: once the entries'
 * next delivery would pass the count, every consumer's receive and the server's timer race to
 * dead-letter them. One dead letter per message; a claim lost by a crash is done again later.
 */
const deadLetterRace: fc.Arbitrary<SimScript> = fc.constant({
  type: 'Shared',
  consumers: 3,
  ledgerSize: 250,
  ackTimeout: true,
  staleSeed: 5,
  duplicateCalls: false,
  maxUnacked: 200_000,
  maxUnackedPerConsumer: 50_000,
  deadLetter: 1,
  initial: 4,
  rounds: [
    { actions: [{ kind: 'receive', consumer: 0, max: 2 }], advanceMs: 0 },
    { actions: [{ kind: 'receive', consumer: 1, max: 2 }], advanceMs: 20_000 },
    {
      actions: [0, 1, 2].map((consumer) => ({ kind: 'receive' as const, consumer, max: 8 })),
      advanceMs: 20_000,
    },
    {
      actions: [
        ...[0, 1, 2].map((consumer) => ({ kind: 'receive' as const, consumer, max: 8 })),
        { kind: 'maintenance' as const },
      ],
      advanceMs: 40_000,
    },
    {
      actions: [
        ...[2, 1].map((consumer) => ({ kind: 'receive' as const, consumer, max: 8 })),
        { kind: 'maintenance' as const },
      ],
      advanceMs: 0,
    },
  ],
});

describe('delivery engine simulation', () => {
  it.each(TYPES.flatMap((type) => FAULT_MIXES.map((mix) => [type, mix.name, mix.duplicateCalls] as const)))(
    '%s under %s: I1-I7 hold on every schedule explored, which pass the coverage gate',
    async (type, _mix, duplicateCalls) => {
      const counters = emptyCounters();
      await fc.assert(
        fc.asyncProperty(scriptArb([type]), fc.scheduler(), async (script, scheduler) => {
          // The other mix's test simulates this script.
          if (script.duplicateCalls !== duplicateCalls) return;
          await runSimulation(script, scheduler, undefined, counters);
        }),
        { seed: typeSeed(SEED, type), numRuns: RUNS },
      );
      if (process.env.ACKLINE_SIM_COUNTERS) console.log(formatCounters(counters, type).join('\n'));
      // The minima are for npm test's size and seed.
      if (RUNS === 150 && SEED === 20_261_123) {
        expect(
          gateFailures(counters, UNIT_MINIMA[type][duplicateCalls ? 'duplicated' : 'plain'], type),
        ).toEqual([]);
      }
    },
    120_000,
  );

  it.each([
    'Shared',
    'Key_Shared',
  ] as const)('%s: issue 25, a receive judges the consumer’s cap on the head its claim writes on (I7)', async (type) => {
    expect(await violationFound(undefined as unknown as Mutation, issue25(type), 30)).toBeUndefined();
  });

  it('lets receives of one consumer running alongside pass its cap only by their takes from pages (I7)', async () => {
    expect(await violationFound(undefined as unknown as Mutation, pagesAlongside, 30)).toBeUndefined();
  });

  it('publishes one dead letter per message when consumers and the timer race for it', async () => {
    expect(await violationFound(undefined as unknown as Mutation, deadLetterRace, 60)).toBeUndefined();
  });

  it('keeps the head bounded when many runs are open at once', async () => {
    expect(await violationFound(undefined as unknown as Mutation, manyRuns, 3)).toBeUndefined();
  });

  it.each<{
    mutation: Mutation;
    invariant: string;
    on: string;
    scripts: fc.Arbitrary<SimScript>;
    runs: number;
  }>([
    {
      mutation: 'noAheadAck',
      invariant: 'I1',
      on: 'random Shared and Key_Shared scripts',
      scripts: scriptArb(['Shared', 'Key_Shared']),
      runs: 400,
    },
    // Only the reset raises the early-ack mark here (acks by handle of held entries never need it):
    // without it, an acknowledgement made after a reset by a consumer that held the entry is lost.
    {
      mutation: 'noAheadAck',
      invariant: 'I1',
      on: 'an acknowledgement after a reset',
      scripts: afterReset,
      runs: 100,
    },
    { mutation: 'dropTracker', invariant: 'I2', on: 'random scripts', scripts: scriptArb(), runs: 400 },
    // Lost head updates break whichever invariant the lost write carried first: a count (I4), an
    // order (I3), or, with eventually consistent head reads, an ack-ahead mark (I1).
    {
      mutation: 'blindHeadWrites',
      invariant: '(I1|I3|I4)',
      on: 'random scripts',
      scripts: scriptArb(),
      runs: 400,
    },
    {
      mutation: 'earlyRelease',
      invariant: 'I5',
      on: 'random Shared and Key_Shared scripts',
      scripts: scriptArb(['Shared', 'Key_Shared']),
      runs: 400,
    },
    // A takeover race needs receives of several consumers: random scripts of receives only (random
    // scripts of every consumer action find one in about 250, those of receives in a few).
    {
      mutation: 'noFencing',
      invariant: 'I6',
      on: 'random Exclusive receives',
      scripts: scriptArb(['Exclusive'], ['receive']),
      runs: 300,
    },
    {
      mutation: 'noFencing',
      invariant: 'I6',
      on: 'random Failover receives',
      scripts: scriptArb(['Failover'], ['receive']),
      runs: 300,
    },
    { mutation: 'noSpill', invariant: 'I7', on: 'many open runs', scripts: manyRuns, runs: 2 },
    {
      mutation: 'blindDeadLetterClaims',
      invariant: 'DL',
      on: 'consumers and the timer racing to dead-letter',
      scripts: deadLetterRace,
      runs: 60,
    },
  ])('catches a deliberately broken engine ($mutation breaks $invariant, on $on)', async ({
    mutation,
    invariant,
    scripts,
    runs,
  }) => {
    expect(await violationFound(mutation, scripts, runs)).toMatch(new RegExp(`^${invariant}: `));
  }, 120_000);
});
