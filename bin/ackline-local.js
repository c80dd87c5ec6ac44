#!/usr/bin/env node
// Launcher for `npm start` (and `npx ackline-local`): the embedded stack, TypeScript run through
// tsx registered in this process, so the server is this one process (no loader child that a
// signal to `npm start` could leave behind). Paths resolve from this file.
import { register } from 'tsx/esm/api';

register();

await import(new URL('../infra/local/main.ts', import.meta.url).href);
