/**
 * `npm run engine-bugs [-- --only NAME[,NAME]] [-- --list]`: issue 21's twenty single-line engine
 * bugs, each put into a copy of the project on its own, against the unit project (the part of
 * `npm test` that runs the engine: the simulation and the engine's and consumers' unit tests).
 * A bug is caught when a test fails. Exit 0 when at least CAUGHT_AT_LEAST are caught.
 *
 * Each run copies the project's files (git's tracked and untracked-not-ignored ones) to a temporary
 * directory with node_modules linked, changes one line there, and runs
 * `vitest related <the changed file> --config vitest.mutate.config.ts --bail 1` (the unit
 * project's test files that import it, directly or not: no other test can see the change; the
 * config is the unit project's with a per-test limit of 60 s, as `npm run mutate` uses), then puts the line back. The working
 * tree is never touched. A bug whose line is not found (the engine changed) is reported as such
 * and fails the run: update its `from` here.
 * See docs/design/delivery-proof.md#injected-engine-bugs.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** Issue 21, criterion 5: `npm test` alone catches at least 18 of the 20. */
export const CAUGHT_AT_LEAST = 18;

export interface EngineBug {
  readonly name: string;
  /** The kind of bug, as issue 21 lists them (or another a developer could plausibly write). */
  readonly kind: string;
  /** Under shared/application/engine/. */
  readonly file: string;
  /** The line's text as it is (must occur exactly once in the file)... */
  readonly from: string;
  /** ...and as the bug has it. */
  readonly to: string;
}

export const ENGINE_BUGS: readonly EngineBug[] = [
  {
    name: 'redelivery-keeps-count',
    kind: 'a redelivery that keeps the old count',
    file: 'redelivery-tracker.ts',
    from: 'deliveries: run.deliveries + 1, state: heldState',
    to: 'deliveries: run.deliveries, state: heldState',
  },
  {
    name: 'ack-timeout-early',
    kind: 'a tracker entry released before it is due (the ack timeout)',
    file: 'redelivery-tracker.ts',
    from: "(located.run.state.timeoutAtMs ?? Infinity) > nowMs ? 'pending' : 'due'",
    to: "'due'",
  },
  {
    name: 'released-early',
    kind: 'a tracker entry released before it is due (a nack backoff, a delayed delivery)',
    file: 'redelivery-tracker.ts',
    from: "verdict = located.run.state.dueAtMs > nowMs ? 'stale' : 'due';",
    to: "verdict = 'due';",
  },
  {
    name: 'replay-ignores-due',
    kind: 'a replay that ignores due times',
    file: 'replay.ts',
    from: "if (located?.run.state.kind === 'released' && located.run.state.dueAtMs > input.nowMs) {",
    to: 'if (false) {',
  },
  {
    name: 'close-releases-all',
    kind: "a close that releases every consumer's runs",
    file: 'release.ts',
    from: "return run.state.kind === 'held' && run.state.consumerId === consumerId;",
    to: "return run.state.kind === 'held';",
  },
  {
    name: 'cumulative-ack-no-owner-check',
    kind: 'a cumulative ack that skips the owner check',
    file: 'pending-acks.ts',
    from: 'if (head.owner?.consumerId !== consumerId) {',
    to: 'if (false) {',
  },
  {
    name: 'claim-ignores-subscription-cap',
    kind: 'a claim that ignores the subscription cap',
    file: 'first-deliveries.ts',
    from: 'return cap - (await windowSize(ctx, cursor, head));',
    to: 'return Number.MAX_SAFE_INTEGER;',
  },
  {
    name: 'nack-releases-nothing',
    kind: 'a nack that releases nothing',
    file: 'pending-acks.ts',
    from: 'if (located.run.state.consumerId !== request.consumerId) continue;',
    to: 'continue;',
  },
  {
    name: 'key-shared-no-recently-joined',
    kind: 'Key_Shared without its recently-joined rule',
    file: 'key-shared-routing.ts',
    from: 'return head.markDelete.compareTo(member.joinedAfter) >= 0;',
    to: 'return true;',
  },
  {
    name: 'dead-letter-wrong-count',
    kind: 'a dead letter at the wrong count (a receive)',
    file: 'redelivery-tracker.ts',
    from: 'if (deadLetter && run.deliveries > deadLetter.maxRedeliverCount) {',
    to: 'if (deadLetter && run.deliveries >= deadLetter.maxRedeliverCount) {',
  },
  {
    name: 'stale-entry-no-strong-reread',
    kind: 'a stale tracker entry deleted without a strong re-read',
    file: 'redelivery-tracker.ts',
    from: "if (outcome.kind === 'stale' && !this.confirmed) {",
    to: 'if (false) {',
  },
  {
    name: 'dead-letter-timer-wrong-count',
    kind: "a dead letter at the wrong count (the server's timer)",
    file: 'dead-letter-timer.ts',
    from: 'segment.located.run.deliveries > deadLetter.maxRedeliverCount,',
    to: 'segment.located.run.deliveries >= deadLetter.maxRedeliverCount,',
  },
  {
    name: 'redelivery-count-off-by-one',
    kind: 'a redelivery handed out with the wrong redeliveryCount',
    file: 'redelivery-tracker.ts',
    from: 'redeliveryCount: run.deliveries,',
    to: 'redeliveryCount: run.deliveries + 1,',
  },
  {
    name: 'ack-ahead-not-raised',
    kind: 'an ack ahead of dispatch that does not raise the early-ack mark',
    file: 'pending-acks.ts',
    from: 'await ctx.store.raiseAheadAck(cursor.cursorId, highest);',
    to: 'void highest;',
  },
  {
    name: 'nack-backoff-wrong-count',
    kind: 'a nack backoff for the wrong count',
    file: 'pending-acks.ts',
    from: 'const dueAtMs = now + request.delayMs(run.deliveries - 1);',
    to: 'const dueAtMs = now + request.delayMs(run.deliveries);',
  },
  {
    name: 'first-delivery-no-ack-timeout',
    kind: 'a first delivery whose ack timeout is never armed',
    file: 'first-deliveries.ts',
    from: '...(timeoutMs > 0 ? { timeoutAtMs: nowMs + timeoutMs } : {}),',
    to: '...(timeoutMs < 0 ? { timeoutAtMs: nowMs + timeoutMs } : {}),',
  },
  {
    name: 'consumer-cap-ignored',
    kind: "a claim that ignores the consumer's cap",
    file: 'consumer-cap.ts',
    from: 'const cap = ctx.limits.maxUnackedPerConsumer;',
    to: 'const cap = Number.MAX_SAFE_INTEGER;',
  },
  {
    name: 'fold-passes-unacked',
    kind: 'a mark-delete moved past an unacknowledged entry',
    file: 'fold.ts',
    from: 'if (!acked) break walk;',
    to: 'if (!acked) continue;',
  },
  {
    name: 'release-resets-count',
    kind: "a close that forgets the released entries' delivery counts",
    file: 'release.ts',
    from: 'deliveries: run.deliveries,',
    to: 'deliveries: 0,',
  },
  {
    name: 'rewind-no-owner-check',
    kind: 'an Exclusive/Failover redeliverUnacknowledged that skips the owner check',
    file: 'release.ts',
    from: 'if (options.consumerId !== undefined && head.owner?.consumerId !== options.consumerId) {',
    to: 'if (false) {',
  },
];

const ENGINE_DIR = 'shared/application/engine';
/** Where vitest writes its JSON report in the copy. */
const REPORT_FILE = '.engine-bug-tests.json';

interface Outcome {
  readonly bug: EngineBug;
  readonly result: 'caught' | 'survived' | 'timed out' | 'not applied';
  readonly by?: string;
  readonly seconds: number;
  /** The end of vitest's output, for a failure nobody expected. */
  readonly output?: string;
}

/** The project's files as git sees them (tracked, and untracked but not ignored), copied to a temporary directory. */
function copyProject(root: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'ackline-engine-bugs-'));
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (file === 'node_modules' || file.startsWith('node_modules/')) continue;
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    try {
      cpSync(join(root, file), join(copy, file));
    } catch {
      // Listed but deleted in the working tree: not part of the project now.
    }
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

/** vitest's JSON report (the parts read here). */
interface JsonReport {
  readonly testResults?: readonly {
    readonly name: string;
    readonly assertionResults?: readonly {
      readonly fullName: string;
      readonly status: string;
      readonly failureMessages?: readonly string[];
    }[];
  }[];
}

/** A failure that only says a test ran out of time (a loaded machine), not that it found the bug. */
const isTimeout = (message: string) => /timed out|STACK_TRACE_ERROR/i.test(message);

/**
 * The first failing test of vitest's JSON report that failed on something else than a timeout,
 * with the first line of its failure; `timeoutsOnly` when every failure was a timeout.
 */
function firstFailure(reportPath: string): { by?: string; timeoutsOnly: boolean } {
  let report: JsonReport;
  try {
    report = JSON.parse(readFileSync(reportPath, 'utf8')) as JsonReport;
  } catch {
    return { timeoutsOnly: false };
  }
  let timeouts = 0;
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const message = test.failureMessages?.join('\n') ?? '';
      if (isTimeout(message)) {
        timeouts++;
        continue;
      }
      const why = message.split('\n')[0]?.slice(0, 120);
      return {
        by: `${file.name.split('/test/unit/')[1] ?? file.name} > ${test.fullName}: ${why}`,
        timeoutsOnly: false,
      };
    }
  }
  return { timeoutsOnly: timeouts > 0 };
}

/** The simulation at `npm test`'s run size and seed, whatever the shell exports. */
function testEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '1', FORCE_COLOR: '0' };
  delete env.ACKLINE_SIM_RUNS;
  delete env.ACKLINE_SIM_SEED;
  return env;
}

function tryBug(copy: string, bug: EngineBug): Outcome {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 1000);
  const path = join(copy, ENGINE_DIR, bug.file);
  const original = readFileSync(path, 'utf8');
  if (bug.from !== '' && original.split(bug.from).length !== 2)
    return { bug, result: 'not applied', seconds: 0 };
  writeFileSync(path, original.replace(bug.from, bug.to));
  try {
    // A timeout is no bug caught: run on past it (up to 5 failures) for a failure that is one.
    let failure = runRelated(copy, bug.file, 1);
    if (failure.status !== 0 && failure.timeoutsOnly) failure = runRelated(copy, bug.file, 5);
    if (failure.status === 0) return { bug, result: 'survived', seconds: seconds() };
    if (failure.by === undefined) {
      return {
        bug,
        result: failure.timeoutsOnly ? 'timed out' : 'caught',
        seconds: seconds(),
        output: failure.output,
      };
    }
    return { bug, result: 'caught', by: failure.by, seconds: seconds(), output: failure.output };
  } finally {
    writeFileSync(path, original);
  }
}

/** `vitest related <file>` in the copy, stopping after `bail` failed tests. */
function runRelated(copy: string, file: string, bail: number) {
  rmSync(join(copy, REPORT_FILE), { force: true });
  const run = spawnSync(
    join(copy, 'node_modules', '.bin', 'vitest'),
    [
      'related',
      join(ENGINE_DIR, file),
      '--run',
      // The unit project with a per-test limit of 60 s (a machine shared with other work runs
      // tests several times slower). A test with a limit of its own may still time out: a
      // timeout is not a bug caught.
      '--config',
      'vitest.mutate.config.ts',
      '--bail',
      String(bail),
      '--reporter',
      'default',
      '--reporter',
      'json',
      '--outputFile.json',
      REPORT_FILE,
    ],
    {
      cwd: copy,
      encoding: 'utf8',
      env: testEnv(),
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const output = `${run.stdout}\n${run.stderr}`.slice(-3000);
  return { status: run.status, output, ...firstFailure(join(copy, REPORT_FILE)) };
}

function main(): void {
  const args = process.argv.slice(2);
  if (args.includes('--list')) {
    for (const bug of ENGINE_BUGS) console.log(`${bug.name.padEnd(32)} ${bug.file.padEnd(24)} ${bug.kind}`);
    return;
  }
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? '').split(',')) : undefined;
  const bugs = ENGINE_BUGS.filter((bug) => !only || only.has(bug.name));
  const root = resolve('.');
  const copy = copyProject(root);
  const outcomes: Outcome[] = [];
  try {
    // The control: with no bug, the same tests pass (else every bug would look caught).
    if (!args.includes('--no-control')) {
      const control = tryBug(copy, {
        name: 'control',
        kind: 'no bug',
        file: bugs[0]?.file ?? 'fold.ts',
        from: '',
        to: '',
      });
      console.log(
        `control (no bug, the tests of ${bugs[0]?.file}): ${control.result === 'survived' ? 'pass' : 'FAIL'} in ${control.seconds} s`,
      );
      if (control.result !== 'survived')
        throw new Error(`The unit tests fail without any bug: ${control.output}`);
    }
    for (const bug of bugs) {
      const outcome = tryBug(copy, bug);
      outcomes.push(outcome);
      console.log(
        `${outcome.result.padEnd(12)} ${bug.name.padEnd(32)} ${String(outcome.seconds).padStart(4)} s  ${outcome.by ?? ''}`,
      );
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  const caught = outcomes.filter((o) => o.result === 'caught').length;
  const notApplied = outcomes.filter((o) => o.result === 'not applied');
  console.log(
    `\nCaught ${caught} of ${outcomes.length} injected engine bugs (at least ${CAUGHT_AT_LEAST} of 20 required).`,
  );
  for (const o of notApplied) console.log(`Not applied (its line changed): ${o.bug.name} in ${o.bug.file}`);
  const enough = only ? caught === outcomes.length : caught >= CAUGHT_AT_LEAST;
  process.exit(notApplied.length === 0 && enough ? 0 : 1);
}

main();
