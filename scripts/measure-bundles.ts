/**
 * `npx tsx scripts/measure-bundles.ts [--runs 5] [--json]`
 *
 * Per Lambda entry point: the bundle esbuild makes with the options of
 * infra/constructs/ackline-function.ts (ESM, node22, minified, external
 * source map, nothing external; see scripts/esbuild-options.ts), its size and what fills it (from esbuild's
 * metafile), and how long a fresh Node process takes to `import()` it: the
 * median of `--runs` cold processes, each timing only the import, with
 * NODE_OPTIONS=--enable-source-maps as the functions run on Lambda, and
 * without it for comparison. Prints a Markdown table for
 * docs/deploying.md#bundles-and-cold-start. Offline; writes to a temp dir only.
 *
 * Caveats: this machine's Node (not Lambda's nodejs22.x on arm64) and its
 * CPU; Lambda adds its own runtime start and, at 512-1024 MB, less CPU.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build, type Metafile } from 'esbuild';
import { functionNames } from '../infra/api-routes.ts';
import { esbuildOptionsFor } from './esbuild-options.ts';

interface Measurement {
  readonly name: string;
  readonly bundleBytes: number;
  readonly sourceMapBytes: number;
  /** Bytes of the bundle by package (`@aws-sdk/*`, `@smithy/*`, `ackline` for our code), largest first. */
  readonly byPackage: readonly { readonly name: string; readonly bytes: number }[];
  /** With --enable-source-maps, as deployed. */
  readonly importMs: readonly number[];
  readonly medianImportMs: number;
  /** Without source-map support: what the source maps cost at import. */
  readonly medianImportMsWithoutSourceMaps: number;
}

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, json: { type: 'boolean', default: false } },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1)
  throw new Error(`--runs must be a positive integer, got ${values.runs}`);

const outRoot = mkdtempSync(join(tmpdir(), 'ackline-bundles-'));
try {
  const measurements: Measurement[] = [];
  for (const name of functionNames) measurements.push(await measure(name, join(outRoot, name)));
  if (values.json) {
    console.log(JSON.stringify({ node: process.version, arch: process.arch, runs, measurements }, null, 2));
  } else {
    console.log(table(measurements));
  }
} finally {
  rmSync(outRoot, { recursive: true, force: true });
}

async function measure(name: string, outdir: string): Promise<Measurement> {
  const outfile = join(outdir, 'index.mjs');
  const result = await build({ ...esbuildOptionsFor(name, outdir), metafile: true });
  const importMs: number[] = [];
  const withoutSourceMaps: number[] = [];
  for (let run = 0; run < runs; run++) {
    importMs.push(importTime(outfile, true));
    withoutSourceMaps.push(importTime(outfile, false));
  }
  return {
    name,
    bundleBytes: statSync(outfile).size,
    sourceMapBytes: statSync(`${outfile}.map`).size,
    byPackage: byPackage(result.metafile as Metafile),
    importMs,
    medianImportMs: median(importMs),
    medianImportMsWithoutSourceMaps: median(withoutSourceMaps),
  };
}

/** One fresh process: the time of `import()` alone, from just before it to its settling. */
function importTime(file: string, sourceMaps: boolean): number {
  const script = [
    'const started = performance.now();',
    `await import(${JSON.stringify(pathToFileURL(file).href)});`,
    'process.stdout.write(String(performance.now() - started));',
  ].join('\n');
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    // infra/constructs/ackline-function.ts sets NODE_OPTIONS=--enable-source-maps on Lambda.
    env: { ...process.env, NODE_OPTIONS: sourceMaps ? '--enable-source-maps' : '' },
  });
  if (child.status !== 0) throw new Error(`import of ${file} failed:\n${child.stderr}`);
  return Number(child.stdout);
}

function byPackage(metafile: Metafile): { name: string; bytes: number }[] {
  // Output paths are relative to absWorkingDir; one build writes index.mjs and its map.
  const output = Object.entries(metafile.outputs).find(([path]) => path.endsWith('index.mjs'))?.[1];
  if (output === undefined) throw new Error('no index.mjs in the metafile');
  const totals = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(input);
    totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
  }
  return [...totals]
    .map(([packageName, bytes]) => ({ name: packageName, bytes }))
    .sort((a, b) => b.bytes - a.bytes);
}

/** `node_modules/@smithy/core/dist-es/x.js` -> `@smithy/*`; our own files -> `ackline`. */
function packageOf(input: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (match?.[1] === undefined) return 'ackline';
  const name = match[1];
  if (name.startsWith('@smithy/')) return '@smithy/*';
  if (name.startsWith('@aws-sdk/')) return name.startsWith('@aws-sdk/client-') ? name : '@aws-sdk/* (core)';
  if (name.startsWith('@aws-crypto/')) return '@aws-crypto/*';
  return name;
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function table(measurements: readonly Measurement[]): string {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
  const lines = [
    `Node ${process.version} (${process.arch}); import time = median of ${runs} fresh processes.`,
    '',
    '| function | bundle (index.mjs) | source map | import (--enable-source-maps) | min-max | import without source maps | largest parts |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const m of measurements) {
    const parts = m.byPackage
      .slice(0, 4)
      .map((part) => `${part.name} ${kb(part.bytes)}`)
      .join(', ');
    lines.push(
      `| ${m.name} | ${kb(m.bundleBytes)} | ${kb(m.sourceMapBytes)} | ${m.medianImportMs.toFixed(0)} ms | ` +
        `${Math.min(...m.importMs).toFixed(0)}-${Math.max(...m.importMs).toFixed(0)} ms | ` +
        `${m.medianImportMsWithoutSourceMaps.toFixed(0)} ms | ${parts} |`,
    );
  }
  return lines.join('\n');
}
