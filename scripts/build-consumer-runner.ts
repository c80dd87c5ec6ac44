import { rm } from 'node:fs/promises';
import { build } from 'esbuild';
import { esbuildOptionsFor, projectRoot } from './esbuild-options.ts';

/**
 * Bundles the subscription runner (functions/consumer-runner) as `cdk synth` bundles ackline's
 * own functions, into @ackline/cdk's dist: the construct deploys this file, so a user's app needs
 * no bundler. Run by `npm run build`.
 */
const outdir = `${projectRoot}packages/cdk/dist/consumer-runner`;
await rm(outdir, { recursive: true, force: true });
await build(esbuildOptionsFor('consumer-runner', outdir));
