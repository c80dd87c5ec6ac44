import { fileURLToPath } from 'node:url';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { acklineBundling } from '../infra/constructs/ackline-function.ts';

/** The repository root, which esbuild resolves entries and packages from. */
export const projectRoot = fileURLToPath(new URL('../', import.meta.url));

/**
 * The esbuild options NodejsFunction derives from `acklineBundling` for one
 * entry point (bundle, platform node, `--outfile=<dir>/index.mjs`), so the
 * scripts and tests that bundle a handler bundle it as `cdk synth` does.
 */
export function esbuildOptionsFor(functionName: string, outdir: string): BuildOptions {
  return {
    entryPoints: [`${projectRoot}functions/${functionName}/handler.ts`],
    outfile: `${outdir}/index.mjs`,
    absWorkingDir: projectRoot,
    bundle: true,
    platform: 'node',
    format: acklineBundling.format === OutputFormat.ESM ? 'esm' : 'cjs',
    target: acklineBundling.target,
    mainFields: [...acklineBundling.mainFields],
    minify: acklineBundling.minify,
    sourcemap: acklineBundling.sourceMap,
    sourcesContent: acklineBundling.sourcesContent,
    external: [...acklineBundling.externalModules],
    banner: { js: acklineBundling.banner },
    logLevel: 'error',
  };
}
