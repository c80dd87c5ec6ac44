import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The runner's bundle (esbuild, one ESM file and its source map): scripts/build-consumer-runner.ts writes it. */
export const RUNNER_BUNDLE = 'index.mjs';

/**
 * Where the subscription runner's prebuilt bundle is: in @ackline/cdk, `dist/consumer-runner/`
 * beside `dist/infra/constructs/`; in this repository, the same folder of packages/cdk once
 * `npm run build` (run by `npm ci`) has built it. Prebuilt, so an app that uses the construct
 * needs no bundler and deploys the runner ackline tested.
 * @throws Error naming the build step when neither holds the bundle.
 */
export function consumerRunnerAssetDirectory(): string {
  const candidates = [
    new URL('../../consumer-runner/', import.meta.url),
    new URL('../../packages/cdk/dist/consumer-runner/', import.meta.url),
  ].map((url) => fileURLToPath(url));
  const found = candidates.find((directory) => existsSync(`${directory}${RUNNER_BUNDLE}`));
  if (found === undefined) {
    throw new Error(
      `The subscription runner's bundle is missing (looked in ${candidates.join(', ')}): ` +
        'run `npm run build` in the ackline repository',
    );
  }
  return found;
}
