import type { AcklineAdmin } from '../client/admin-client.ts';
import type { FetchFunction } from '../client/admin-http.ts';
import { AcklineError } from '../domain/errors.ts';

/** Somewhere to write text: `process.stdout`, or a buffer in tests. */
export interface TextSink {
  write(text: string): unknown;
}

/** The process around the CLI, injected so tests drive it without spawning or networking. */
export interface CliIo {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Default: the global `fetch`. */
  readonly fetch?: FetchFunction;
  /** Where relative paths (the data directory) resolve; default `process.cwd()`. */
  readonly cwd?: string;
  /** The clock for token expiry; default `Date.now`. */
  readonly nowMs?: () => number;
}

/** What a command's action uses: the admin client (built on first use from the global options) and output. */
export interface CliContext {
  admin(): AcklineAdmin;
  /** Writes a line to stdout (with `--output json`: `{"message": text}`). */
  print(text: string): void;
  /** Writes pretty JSON to stdout (with `--output json`: the command's result). */
  printJson(value: unknown): void;
  /** Writes one line per item (with `--output json`: the items as one JSON array). */
  printList(items: readonly string[]): void;
  /** Writes each value as pretty JSON (with `--output json`: the values as one JSON array). */
  printJsonEach(values: readonly unknown[]): void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  nowMs(): number;
}

/** A failure the CLI reports as one line on stderr (no stack), e.g. a missing token secret. */
export class CliError extends AcklineError {}
