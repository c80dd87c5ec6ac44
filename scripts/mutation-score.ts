/**
 * `npm run mutate:score [-- REPORT]`: the mutation score of a StrykerJS JSON report
 * (reports/mutation/mutation.json by default), as docs/design/delivery-proof.md#mutation-testing
 * defines it: (killed + timed out) / (all − ignored). A mutant is ignored only through a
 * `// Stryker disable next-line <mutator>: <reason>` comment; one no test covers counts as a
 * survivor, and so does one that made the test run error (Stryker's own `mutationScore` leaves
 * run and compile errors out). Prints the score per file and over the report, and the files of the
 * mutated scope that no run has reported yet. `npm run mutate` prints it after each run.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const MUTATION_REPORT = 'reports/mutation/mutation.json';
/** The folders stryker.config.json mutates: the delivery engine and the consumer use cases. */
export const MUTATED_SCOPE = ['shared/application/engine', 'shared/application/consumers'];

/** The statuses of mutation-testing-report-schema (a run's final report holds no Pending). */
type MutantStatus =
  | 'Killed'
  | 'Survived'
  | 'NoCoverage'
  | 'Timeout'
  | 'CompileError'
  | 'RuntimeError'
  | 'Ignored'
  | 'Pending';

interface MutationReport {
  readonly files: Record<
    string,
    { readonly source?: string; readonly mutants: readonly { readonly status: MutantStatus }[] }
  >;
}

export interface Tally {
  all: number;
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  errors: number;
  ignored: number;
}

const emptyTally = (): Tally => ({
  all: 0,
  killed: 0,
  timeout: 0,
  survived: 0,
  noCoverage: 0,
  errors: 0,
  ignored: 0,
});

function add(tally: Tally, status: MutantStatus): void {
  tally.all++;
  if (status === 'Killed') tally.killed++;
  else if (status === 'Timeout') tally.timeout++;
  else if (status === 'NoCoverage') tally.noCoverage++;
  else if (status === 'Ignored') tally.ignored++;
  else if (status === 'CompileError' || status === 'RuntimeError') tally.errors++;
  else tally.survived++; // Survived, and Pending (never tested) if a report ever held one
}

/** (killed + timed out) / (all − ignored), in percent; undefined when nothing counts. */
export function mutationScore(tally: Tally): number | undefined {
  const counted = tally.all - tally.ignored;
  return counted === 0 ? undefined : (100 * (tally.killed + tally.timeout)) / counted;
}

/** The report's tally per file (sorted by name) and over all its files. */
export function tallyReport(report: MutationReport): { files: Map<string, Tally>; total: Tally } {
  const files = new Map<string, Tally>();
  const total = emptyTally();
  for (const name of Object.keys(report.files).sort()) {
    const tally = emptyTally();
    for (const mutant of report.files[name]?.mutants ?? []) {
      add(tally, mutant.status);
      add(total, mutant.status);
    }
    files.set(name, tally);
  }
  return { files, total };
}

function scopeFiles(): string[] {
  return MUTATED_SCOPE.flatMap((dir) =>
    (readdirSync(dir, { recursive: true }) as string[])
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(dir, name).replaceAll('\\', '/')),
  ).sort();
}

const percent = (score: number | undefined) => (score === undefined ? 'n/a' : `${score.toFixed(2)} %`);

/** Prints the score table of the report at `path`; false when there is no report. */
export function printMutationScore(path = MUTATION_REPORT): boolean {
  let report: MutationReport;
  try {
    report = JSON.parse(readFileSync(path, 'utf8')) as MutationReport;
  } catch {
    console.log(`No mutation report at ${path}.`);
    return false;
  }
  const { files, total } = tallyReport(report);
  const columns = ['mutants', 'killed', 'timeout', 'survived', 'no cov', 'errors', 'ignored', 'score'];
  const width = Math.max(...[...files.keys()].map((name) => name.length), 'all files'.length);
  const row = (name: string, t: Tally) =>
    [
      name.padEnd(width),
      ...[t.all, t.killed, t.timeout, t.survived, t.noCoverage, t.errors, t.ignored].map((n) =>
        String(n).padStart(8),
      ),
      percent(mutationScore(t)).padStart(9),
    ].join(' ');
  console.log(`\nMutation score = (killed + timed out) / (all − ignored), from ${path}:`);
  console.log([''.padEnd(width), ...columns.map((c, i) => c.padStart(i === 7 ? 9 : 8))].join(' '));
  for (const [name, tally] of files) console.log(row(name, tally));
  console.log(row('all files', total));
  console.log(
    `Score: (${total.killed} + ${total.timeout}) / (${total.all} − ${total.ignored}) = ${percent(mutationScore(total))}`,
  );
  const scope = scopeFiles();
  const outside = [...files.keys()].filter((name) => !scope.includes(name));
  if (outside.length > 0) {
    const inScope = tallyReport({
      files: Object.fromEntries(Object.entries(report.files).filter(([name]) => scope.includes(name))),
    }).total;
    console.log(
      `Over the mutated scope only (${outside.length} reported files outside it left out): (${inScope.killed} + ${inScope.timeout}) / (${inScope.all} − ${inScope.ignored}) = ${percent(mutationScore(inScope))}`,
    );
  }
  const changed = Object.entries(report.files)
    .filter(
      ([name, file]) =>
        file.source !== undefined && existsSync(name) && readFileSync(name, 'utf8') !== file.source,
    )
    .map(([name]) => name);
  if (changed.length > 0) {
    console.log(
      `Reported on an earlier version of the file (the next run tests again what changed): ${changed.join(', ')}`,
    );
  }
  const missing = scope.filter((name) => !files.has(name));
  if (missing.length > 0) {
    console.log(`Not yet in the report (${missing.length} of the scope's files): ${missing.join(', ')}`);
  }
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exit(printMutationScore(process.argv[2]) ? 0 : 1);
}
