#!/usr/bin/env node
// Launcher for `ackline-admin` (and `npx ackline-admin`): the CLI is TypeScript, run through tsx.
// Paths resolve from this file, so it works from any working directory.
import { register } from 'tsx/esm/api';

register();

const { run } = await import(new URL('../shared/cli/main.ts', import.meta.url).href);

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
