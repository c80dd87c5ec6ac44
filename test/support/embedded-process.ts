import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** A fixed secret for test stacks, so tests can mint their own tokens. */
export const TEST_TOKEN_SECRET = 'ackline-test-secret-0123456789abcdef';

export interface EmbeddedProcess {
  readonly url: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends the signal and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function makeDataDir(prefix = 'ackline-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/**
 * Runs `npm start`'s entry point (infra/local/main.ts) as a child process, the
 * way a user runs it, and resolves once it prints its ready line.
 */
export async function startEmbeddedProcess(
  options: { dataDir?: string; port?: number; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<EmbeddedProcess> {
  const dataDir = options.dataDir ?? (await makeDataDir());
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      PORT: String(options.port ?? 0),
      ACKLINE_DATA_DIR: dataDir,
      ACKLINE_TOKEN_SECRET: TEST_TOKEN_SECRET,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`embedded stack not ready after ${options.timeoutMs ?? 30_000} ms:\n${output}`)),
      options.timeoutMs ?? 30_000,
    );
    const onData = () => {
      const match = /ackline ready on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`embedded stack exited with ${code} before ready:\n${output}`));
    });
  });
  return {
    url,
    dataDir,
    child,
    output: () => output,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
