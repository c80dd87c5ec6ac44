/**
 * `npm run mutate:merge -- OUT BASE PART...`: merges StrykerJS incremental reports of parts run
 * apart (other worktrees or machines, each `npm run mutate -- --mutate <part>` from the same base)
 * into one, so that the next `npm run mutate` on the merged code reuses every part's results and
 * tests again only what changed since (StrykerJS's incremental mode matches mutants by file,
 * mutator, location and replacement, and tests by file, name and location; ids are only unique
 * within one report, so each input's ids get a prefix of their own).
 *
 * A source file's results come from the last input whose entry for it differs from BASE's (a part
 * re-ran it); a test file's tests are the union over the inputs, by name and location.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface ReportTest {
  id: string;
  name: string;
  location?: { start: { line: number; column: number } };
}
interface ReportMutant {
  id: string;
  coveredBy?: string[];
  killedBy?: string[];
  [key: string]: unknown;
}
interface SourceFile {
  source: string;
  mutants: ReportMutant[];
  [key: string]: unknown;
}
interface Report {
  files: Record<string, SourceFile>;
  testFiles?: Record<string, { tests: ReportTest[]; [key: string]: unknown }>;
  [key: string]: unknown;
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Report;
const testKey = (test: ReportTest) =>
  `${test.location?.start.line ?? ''}:${test.location?.start.column ?? ''}\n${test.name}`;

/** The input's ids with a prefix: `coveredBy` and `killedBy` name tests of the same input. */
function prefixed(report: Report, prefix: string): Report {
  const ids = (list?: string[]) => list?.map((id) => `${prefix}${id}`);
  const files = Object.fromEntries(
    Object.entries(report.files).map(([name, file]) => [
      name,
      {
        ...file,
        mutants: file.mutants.map((m) => ({
          ...m,
          id: `${prefix}${m.id}`,
          coveredBy: ids(m.coveredBy),
          killedBy: ids(m.killedBy),
        })),
      },
    ]),
  );
  const testFiles = Object.fromEntries(
    Object.entries(report.testFiles ?? {}).map(([name, file]) => [
      name,
      { ...file, tests: file.tests.map((t) => ({ ...t, id: `${prefix}${t.id}` })) },
    ]),
  );
  return { ...report, files, testFiles };
}

/** One report of BASE and the parts, each part's re-run files over BASE's. */
export function mergeReports(base: Report, parts: readonly Report[]): Report {
  const inputs = [base, ...parts].map((report, i) => prefixed(report, `r${i}-`));
  const [first, ...rest] = inputs as [Report, ...Report[]];
  const files = { ...first.files };
  for (const part of rest) {
    for (const [name, file] of Object.entries(part.files)) {
      const before = base.files[name];
      const ranAgain =
        before === undefined ||
        before.source !== file.source ||
        JSON.stringify(before.mutants.map((m) => m.status)) !==
          JSON.stringify(file.mutants.map((m) => m.status));
      if (ranAgain) files[name] = file;
    }
  }
  // The same test in several inputs keeps the first input's id; the others' ids point to it.
  const testFiles: NonNullable<Report['testFiles']> = {};
  const sameTest = new Map<string, string>();
  for (const input of inputs) {
    for (const [name, file] of Object.entries(input.testFiles ?? {})) {
      const merged = testFiles[name] ?? { ...file, tests: [] };
      const idByKey = new Map(merged.tests.map((t) => [testKey(t), t.id]));
      for (const test of file.tests) {
        const keptId = idByKey.get(testKey(test));
        if (keptId === undefined) merged.tests.push(test);
        sameTest.set(test.id, keptId ?? test.id);
      }
      testFiles[name] = merged;
    }
  }
  const keep = (list?: string[]) =>
    list?.flatMap((id) => {
      const kept = sameTest.get(id);
      return kept === undefined ? [] : [kept];
    });
  for (const file of Object.values(files)) {
    file.mutants = file.mutants.map((m) => ({
      ...m,
      coveredBy: keep(m.coveredBy),
      killedBy: keep(m.killedBy),
    }));
  }
  return { ...first, files, testFiles };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [out, base, ...parts] = process.argv.slice(2);
  if (out === undefined || base === undefined || parts.length === 0) {
    console.error('usage: npm run mutate:merge -- OUT BASE PART...');
    process.exit(2);
  }
  const merged = mergeReports(read(base), parts.map(read));
  writeFileSync(out, `${JSON.stringify(merged)}\n`);
  console.log(
    `${out}: ${Object.keys(merged.files).length} source files, ${Object.keys(merged.testFiles ?? {}).length} test files`,
  );
}
