import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDataDir, REPO_ROOT, TEST_TOKEN_SECRET } from '../support/embedded-process.ts';

// Issue 14, criterion 5: `npm start` is a foreground server. A signal to the npm process stops
// everything it started, and HOST binds another address, with a warning.

const run = promisify(execFile);
const started: { child: ChildProcess; dataDir: string; tree: number[] }[] = [];

afterEach(async () => {
  for (const { child, dataDir, tree } of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of tree.filter(alive)) process.kill(pid, 'SIGKILL'); // what a failed test left behind
    await rm(dataDir, { recursive: true, force: true });
  }
});

/** `npm start` as a user runs it, resolved once it prints its ready line. */
async function npmStart(env: Record<string, string> = {}) {
  const dataDir = await makeDataDir('ackline-npm-start-');
  const child = spawn('npm', ['start', '--silent'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      PORT: '0',
      ACKLINE_DATA_DIR: dataDir,
      ACKLINE_TOKEN_SECRET: TEST_TOKEN_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry = { child, dataDir, tree: [] as number[] };
  started.push(entry);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start not ready after 60 s:\n${output}`)), 60_000);
    child.stdout?.on('data', () => {
      const match = /ackline ready on http:\/\/(?:\[[^\]]+\]|[^:/]+):(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    void exited.then(() => reject(new Error(`npm start exited before ready:\n${output}`)));
  });
  entry.tree = await descendants(child.pid as number);
  return { child, port, tree: entry.tree, exited, output: () => output };
}

/** The pids of every process under `pid`, from ps. */
async function descendants(pid: number): Promise<number[]> {
  const { stdout } = await run('ps', ['-e', '-o', 'pid=,ppid=']);
  const children = new Map<number, number[]>();
  for (const line of stdout.trim().split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number) as [number, number];
    children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const all: number[] = [];
  const visit = (p: number) => {
    for (const c of children.get(p) ?? []) {
      all.push(c);
      visit(c);
    }
  };
  visit(pid);
  return all;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether the port can be bound again on 127.0.0.1 (nothing holds it). */
const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('npm start', () => {
  it.each([
    'SIGTERM',
    'SIGINT',
  ] as const)('stops every process it started on %s to the npm process, and frees the port', async (signal) => {
    const { child, port, tree, output } = await npmStart();
    const pid = child.pid as number;
    expect(tree.length).toBeGreaterThan(0);

    process.kill(pid, signal);

    await eventually('every process npm start began has exited', () =>
      [pid, ...tree].every((p) => !alive(p)),
    );
    await eventually(`port ${port} is free`, () => portIsFree(port));
    expect(output()).toContain(`${signal} received, stopping`);
  });

  it('binds HOST and warns that the admin API is then reachable from outside', async () => {
    const { child, output } = await npmStart({ HOST: '0.0.0.0' });
    expect(output()).toMatch(/ackline ready on http:\/\/0\.0\.0\.0:\d+/);
    expect(output()).toMatch(/warning: HOST=0\.0\.0\.0 .*admin API/);
    child.kill('SIGTERM');
  });

  it.each([
    '::1',
    '[::1]',
  ])('binds IPv6 loopback with HOST=%s and announces a URL a client can call', async (host) => {
    const { child, output } = await npmStart({ HOST: host });
    const url = /ackline ready on (http:\/\/\[::1\]:\d+)/.exec(output())?.[1];
    expect(url, output()).toBeDefined();
    expect(output()).not.toContain('warning');
    const answer = await fetch(`${url}/admin/v2/clusters`);
    expect(answer.status).toBe(401);
    child.kill('SIGTERM');
  });

  it('stays on 127.0.0.1 without a warning when HOST is unset', async () => {
    const { child, output } = await npmStart();
    expect(output()).toMatch(/ackline ready on http:\/\/127\.0\.0\.1:\d+/);
    expect(output()).not.toContain('warning');
    child.kill('SIGTERM');
  });
});
