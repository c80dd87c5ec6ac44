import { rm } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import { startEmbeddedProcess, TEST_TOKEN_SECRET } from './embedded-process.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    acklineUrl: string;
    acklineTokenSecret: string;
  }
}

/** One embedded stack for the integration suites, started as `npm start` would start it. */
export default async function setup(project: TestProject) {
  const stack = await startEmbeddedProcess();
  project.provide('acklineUrl', stack.url);
  project.provide('acklineTokenSecret', TEST_TOKEN_SECRET);
  return async () => {
    await stack.stop('SIGTERM');
    await rm(stack.dataDir, { recursive: true, force: true });
  };
}
