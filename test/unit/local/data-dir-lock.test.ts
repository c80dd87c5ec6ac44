import { link, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DataDirInUseError,
  type DataDirLockOptions,
  LOCK_SOCKET,
  lockDataDir,
} from '../../../infra/local/data-dir-lock.ts';

// The data-directory lock in one process: its owner is a unix domain socket, so these tests stand
// in for other processes with sockets of their own (live, dead, silent) at the lock's name.

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dataDir(prefix = 'ackline-lock-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function lock(dir: string, options?: DataDirLockOptions) {
  const held = await lockDataDir(dir, options);
  cleanups.push(() => held.release());
  return held;
}

/** A server at `path` whose connections `onConnection` handles. */
async function listen(
  path: string,
  onConnection: (socket: Socket) => void = () => undefined,
): Promise<Server> {
  const server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return server;
}

/** A clock the test moves, and a sleep that moves it instead of waiting. */
function manualTime() {
  let nowMs = 0;
  const sleep = async (ms: number) => {
    nowMs += ms;
  };
  return { clock: { nowMs: () => nowMs }, sleep, random: () => 1 };
}

describe('data directory lock', () => {
  it('refuses a second lock on a held directory, naming the directory and the owner', async () => {
    const dir = await dataDir();
    await lock(dir);

    const second = lockDataDir(dir);

    await expect(second).rejects.toThrow(DataDirInUseError);
    await expect(second).rejects.toThrow(
      `the data directory ${dir} is in use by another ackline process (pid ${process.pid})`,
    );
  });

  it('is free again once released, and leaves no socket behind', async () => {
    const dir = await dataDir();
    const first = await lockDataDir(dir);

    await first.release();
    const afterRelease = await readdir(dir);
    const second = await lock(dir);

    expect(afterRelease).toEqual([]);
    expect(second).toBeDefined();
  });

  it('takes over the socket of a dead owner (connection refused)', async () => {
    const dir = await dataDir();
    // A socket file nothing listens on, as SIGKILL leaves one: a name kept past its server's close.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(dir, 'dead.sock'), resolve));
    await link(join(dir, 'dead.sock'), join(dir, LOCK_SOCKET));
    await new Promise((resolve) => server.close(resolve));

    await lock(dir);

    await expect(lockDataDir(dir)).rejects.toThrow(`pid ${process.pid}`);
    expect((await readdir(dir)).sort()).toEqual([LOCK_SOCKET]);
  });

  it('ignores a pid file naming a live process (the lock of earlier versions)', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, 'ackline.pid'), `${process.ppid}\n`);

    await expect(lock(dir)).resolves.toBeDefined();
  });

  it('waits for an owner that closes connections unanswered (being killed), then takes the directory', async () => {
    const dir = await dataDir();
    let probes = 0;
    const dying = await listen(join(dir, LOCK_SOCKET), (socket) => {
      probes += 1;
      socket.destroy();
      if (probes === 2) dying.close(); // the kernel closes the killed process's socket
    });

    await lock(dir, { ...manualTime(), exitWaitMs: 5_000 });

    expect(probes).toBe(2);
  });

  it('refuses, after exitWaitMs, an owner that never answers', async () => {
    const dir = await dataDir();
    await listen(join(dir, LOCK_SOCKET)); // accepts, answers nothing

    const attempt = lockDataDir(dir, { ...manualTime(), exitWaitMs: 1_000, probeTimeoutMs: 20 });

    await expect(attempt).rejects.toThrow(
      `the data directory ${dir} is in use by another process, which did not answer within 1000 ms`,
    );
    expect(await readdir(dir)).toEqual([LOCK_SOCKET]);
  });

  it('keeps the lock of a directory whose path is too long for a socket address elsewhere', async () => {
    const dir = join(await dataDir(), 'd'.repeat(100));
    await mkdir(dir);

    await lock(dir);

    expect(await readdir(dir)).toEqual([]);
    await expect(lockDataDir(dir)).rejects.toThrow(`the data directory ${dir} is in use`);
  });
});
