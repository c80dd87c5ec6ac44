import { type ChildProcess, spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_SOCKET } from '../../infra/local/data-dir-lock.ts';
import { DATA_FORMAT } from '../../infra/local/data-format.ts';
import { makeDataDir, REPO_ROOT, TEST_TOKEN_SECRET } from '../support/embedded-process.ts';

// Issue 21, criterion 7: restart after a crash. A supervisor that restarts a stack killed with
// SIGKILL, at once and on the same data directory, gets a stack that serves; no pid file blocks
// it; and of two stacks started at once on one directory exactly one starts.

const SERVING_WITHIN_MS = 10_000;

const children: ChildProcess[] = [];
/** Stacks started under a parent of their own (startUnreapedStack). */
const pids: number[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const pid of pids.splice(0).filter(exists)) process.kill(pid, 'SIGKILL');
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await makeDataDir('ackline-restart-');
  dirs.push(dir);
  return dir;
}

interface Stack {
  readonly child: ChildProcess;
  /** The gateway's URL once it prints its ready line; undefined if it exited first. */
  readonly ready: Promise<string | undefined>;
  readonly exited: Promise<number | null>;
  output(): string;
}

/** `npm start`'s command (`exec node bin/ackline-local.js`), so that SIGKILL reaches the stack itself. */
function startStack(dataDir: string): Stack {
  return watch(
    spawn(process.execPath, ['bin/ackline-local.js'], {
      cwd: REPO_ROOT,
      env: stackEnv(dataDir),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/**
 * The stack under a parent that never reaps it, as under a container's pid 1 without an init:
 * killed, it stays a zombie, its pid alive to `kill -0` (what the pid-file lock asked).
 */
function startUnreapedStack(dataDir: string): Stack & { readonly stackPid: Promise<number> } {
  const parent = spawn(
    'sh',
    ['-c', `"${process.execPath}" bin/ackline-local.js & echo "stack pid $!"; exec sleep 120`],
    {
      cwd: REPO_ROOT,
      env: stackEnv(dataDir),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stack = watch(parent);
  const stackPid = stack.ready.then(() => {
    const pid = Number(/stack pid (\d+)/.exec(stack.output())?.[1]);
    pids.push(pid);
    return pid;
  });
  return { ...stack, stackPid };
}

function stackEnv(dataDir: string): NodeJS.ProcessEnv {
  return { ...process.env, PORT: '0', ACKLINE_DATA_DIR: dataDir, ACKLINE_TOKEN_SECRET: TEST_TOKEN_SECRET };
}

function watch(child: ChildProcess): Stack {
  children.push(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<string | undefined>((resolve) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = /ackline ready on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      if (url) resolve(url);
    });
    void exited.then(() => resolve(undefined));
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return { child, ready, exited, output: () => output };
}

/** Whether `pid` names a process, a zombie included. */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves with `promise`'s value, or rejects once `ms` passed. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function health(url: string): Promise<number> {
  return (await fetch(`${url}/admin/v2/brokers/health`)).status;
}

describe('restart after a crash', () => {
  it(`serves within ${SERVING_WITHIN_MS / 1000} s when started at once after SIGKILL of the previous stack`, async () => {
    const dir = await dataDir();
    const first = startUnreapedStack(dir);
    expect(await within(60_000, 'first stack ready', first.ready), first.output()).toBeDefined();
    const firstPid = await first.stackPid;

    process.kill(firstPid, 'SIGKILL');
    const killedAtMs = Date.now();
    const second = startStack(dir);
    const url = await within(SERVING_WITHIN_MS, 'restarted stack ready', second.ready);
    expect(url, second.output()).toBeDefined();
    const status = await health(url as string);
    const servingAfterMs = Date.now() - killedAtMs;

    console.info(`restart after SIGKILL: serving after ${servingAfterMs} ms`);
    expect(status).toBe(200);
    expect(servingAfterMs).toBeLessThan(SERVING_WITHIN_MS);
    expect(exists(firstPid)).toBe(true); // never reaped: a zombie, its pid still taken
  });

  it('is not blocked by a pid file naming a live, unrelated process', async () => {
    const dir = await dataDir();
    const unrelated = spawn('sleep', ['60'], { stdio: 'ignore' });
    children.push(unrelated);
    await writeFile(join(dir, 'ackline.pid'), `${unrelated.pid}\n`); // where the pid-file lock kept it

    const stack = startStack(dir);
    const url = await within(60_000, 'stack ready', stack.ready);

    expect(url, stack.output()).toBeDefined();
    expect(await health(url as string)).toBe(200);
  });

  it('of two stacks started at once on one directory, starts one; the other exits non-zero naming it', async () => {
    const dir = await dataDir();

    const stacks = [startStack(dir), startStack(dir)];
    const urls = await within(
      60_000,
      'both stacks ready or exited',
      Promise.all(stacks.map((stack) => stack.ready)),
    );

    const winners = stacks.filter((_, i) => urls[i] !== undefined);
    const losers = stacks.filter((_, i) => urls[i] === undefined);
    expect(winners, stacks.map((stack) => stack.output()).join('\n---\n')).toHaveLength(1);
    expect(await health(urls.find((url) => url !== undefined) as string)).toBe(200);
    const loser = losers[0] as Stack;
    expect(await loser.exited).not.toBe(0);
    expect(loser.output()).toContain(`the data directory ${dir} is in use`);
  });

  describe("the DynamoDB store's own lock (leveldb), held by a process without the directory lock", () => {
    /**
     * Opens the store with dynalite's leveldb, as an ackline before the socket lock would, and
     * holds it: for good, or until the stack has taken the directory lock and `releaseAfterMs` more.
     */
    async function holdStore(dir: string, releaseAfterMs?: number): Promise<void> {
      const code = `
        const { existsSync } = require('node:fs');
        const { createRequire } = require('node:module');
        const fromDynalite = createRequire(createRequire(process.cwd() + '/package.json').resolve('dynalite'));
        const { Level } = fromDynalite('level');
        const [store, lockSocket, releaseAfterMs] = process.argv.slice(1);
        new Level(store).open().then(() => {
          console.log('held');
          if (releaseAfterMs === undefined) return setInterval(() => {}, 60_000);
          const poll = setInterval(() => {
            if (!existsSync(lockSocket)) return;
            clearInterval(poll);
            setTimeout(() => process.exit(0), Number(releaseAfterMs));
          }, 20);
        });`;
      const args = [
        join(dir, 'dynamodb'),
        join(dir, LOCK_SOCKET),
        ...(releaseAfterMs === undefined ? [] : [String(releaseAfterMs)]),
      ];
      const holder = spawn(process.execPath, ['-e', code, ...args], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(holder);
      await writeFile(join(dir, 'ackline-format'), `${DATA_FORMAT}\n`); // a directory of this version
      await within(10_000, 'store held', new Promise((resolve) => holder.stdout?.once('data', resolve)));
    }

    it('waits for it to be freed, briefly, then serves', async () => {
      const dir = await dataDir();
      await holdStore(dir, 1_000);

      const stack = startStack(dir);
      const url = await within(60_000, 'stack ready', stack.ready);

      expect(url, stack.output()).toBeDefined();
      expect(stack.output()).toMatch(/DynamoDB store .* is locked by another process; waiting up to 3000 ms/);
      expect(await health(url as string)).toBe(200);
    });

    it('exits non-zero naming the directory when it stays held', async () => {
      const dir = await dataDir();
      await holdStore(dir);

      const stack = startStack(dir);
      const code = await within(60_000, 'stack exited', stack.exited);

      expect(code).toBe(1);
      expect(stack.output()).toContain(`the data directory ${dir} is in use by another process`);
      expect(stack.output()).toMatch(/DynamoDB store .* stayed locked for 3000 ms/);
    });
  });
});
