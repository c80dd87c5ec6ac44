import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, realpath, rename, stat, unlink } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock, sleep as systemSleep } from '../../shared/adapters/system-clock.ts';
import { AcklineError } from '../../shared/domain/errors.ts';
import type { Clock } from '../../shared/ports/clock.ts';

/** Another live ackline process holds the data directory. */
export class DataDirInUseError extends AcklineError {}

/** The lock's name in the data directory: a unix domain socket its owner listens on. */
export const LOCK_SOCKET = '.lock.sock';

/**
 * How long a start waits for an owner that accepts connections but does not answer (a process
 * being killed: the kernel has not closed its socket yet; or one whose event loop is blocked)
 * before it refuses. A killed process's socket closes within milliseconds.
 */
export const EXIT_WAIT_MS = 5_000;

/** How long one probe waits for the owner's answer (a live owner answers from its event loop). */
export const PROBE_TIMEOUT_MS = 1_000;

/** The longest path a unix domain socket can be bound to (macOS: 104 bytes with the NUL; Linux 108). */
const MAX_SOCKET_PATH_BYTES = 103;

export interface DataDirLock {
  /** Frees the directory: removes the socket's name (if it is still this lock's) and closes it. */
  release(): Promise<void>;
}

export interface DataDirLockOptions {
  /** Default EXIT_WAIT_MS. */
  readonly exitWaitMs?: number;
  /** Default PROBE_TIMEOUT_MS. */
  readonly probeTimeoutMs?: number;
  readonly clock?: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

/**
 * One embedded stack per data directory (leveldb allows a single owner), held by a lock the
 * kernel releases when its process dies, even by SIGKILL: the owner listens on a unix domain
 * socket, `<dataDir>/.lock.sock`, and answers every connection with its pid. No pid file is
 * trusted, so a pid reused by another process, or a killed stack not yet reaped, blocks nothing.
 *
 * Primary course:
 * 1. Listen on a socket of a unique name beside the lock, then hard-link it as `.lock.sock`:
 *    link() fails if the name exists, so of two starts exactly one wins.
 * 2. The name exists: connect to it.
 *    - It answers: a live stack owns the directory -> DataDirInUseError, naming it.
 *    - Connection refused: its owner is dead (the kernel closed the socket) -> move the name
 *      aside (rename: one start wins it), and if what was moved turns out to be alive after all
 *      (another start took over in between), put it back; go to 1.
 *    - Connected, but closed or silent: an owner being killed, or busy -> wait (bounded backoff,
 *      up to `exitWaitMs`), go to 1; then refuse.
 * 3. Remove the unique name: the socket is reached through `.lock.sock` alone.
 *
 * A data directory whose path is too long for a socket address keeps its lock in the system
 * temporary directory instead, named after a hash of its real path.
 * Cost: a few file-system calls and one local connection per start; nothing while running.
 * @throws DataDirInUseError when a live stack holds the directory.
 */
export async function lockDataDir(dataDir: string, options: DataDirLockOptions = {}): Promise<DataDirLock> {
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  const exitWaitMs = options.exitWaitMs ?? EXIT_WAIT_MS;
  const random = options.random ?? Math.random;
  const probeTimeoutMs = options.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  const dir = await lockDirectory(dataDir);
  const lockPath = join(dir, LOCK_SOCKET);
  const ownPath = join(dir, `.lock-${randomBytes(4).toString('hex')}.sock`);
  const server = await listenAnswering(ownPath);
  try {
    const deadlineMs = clock.nowMs() + exitWaitMs;
    for (let attempt = 0; ; attempt++) {
      if (await linkIfAbsent(ownPath, lockPath)) break;
      const owner = await probe(lockPath, probeTimeoutMs);
      if (owner.state === 'live') {
        throw new DataDirInUseError(
          `the data directory ${dataDir} is in use by another ackline process (pid ${owner.pid}); stop it or set ACKLINE_DATA_DIR`,
        );
      }
      if (clock.nowMs() >= deadlineMs) {
        throw new DataDirInUseError(
          `the data directory ${dataDir} is in use by another process, which did not answer within ${exitWaitMs} ms; stop it or set ACKLINE_DATA_DIR`,
        );
      }
      if (owner.state === 'dead') await moveDeadLockAside(lockPath, dir, probeTimeoutMs);
      if (owner.state === 'silent') await sleep(silentOwnerPauseMs(attempt, random));
      // 'gone' (the name vanished between link and probe): try again at once.
    }
    const { ino } = await stat(ownPath);
    await unlink(ownPath);
    return {
      release: async () => {
        const current = await stat(lockPath).catch(() => undefined);
        if (current?.ino === ino) await unlink(lockPath).catch(() => undefined);
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  } catch (error) {
    server.close();
    await unlink(ownPath).catch(() => undefined);
    throw error;
  }
}

/**
 * The pause before probing a silent owner again: 25 ms doubling up to 400 ms, jittered to 50-100 %
 * (two starts waiting on one dying stack do not probe in step). After `exitWaitMs` the start refuses.
 */
function silentOwnerPauseMs(attempt: number, random: () => number): number {
  return Math.min(25 * 2 ** attempt, 400) * (0.5 + random() / 2);
}

/** The data directory itself, or (its path too long for a socket address) one in the temporary directory. */
async function lockDirectory(dataDir: string): Promise<string> {
  const longest = join(dataDir, '.lock-00000000.sock');
  if (Buffer.byteLength(longest) <= MAX_SOCKET_PATH_BYTES) return dataDir;
  const hash = createHash('sha256')
    .update(await realpath(dataDir))
    .digest('hex')
    .slice(0, 24);
  const dir = join(tmpdir(), 'ackline-locks', hash);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** A server on `path` that answers each connection with this process's pid and closes it. */
async function listenAnswering(path: string): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined); // a prober that went away
    socket.end(`${JSON.stringify({ pid: process.pid })}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.unref(); // the lock alone does not keep the process running
  return server;
}

async function linkIfAbsent(existing: string, name: string): Promise<boolean> {
  try {
    await link(existing, name);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

type Owner =
  | { readonly state: 'live'; readonly pid: number | string }
  /** Connection refused: nothing listens, the kernel closed the socket with its process. */
  | { readonly state: 'dead' }
  /** Connected, but closed without an answer, or no answer yet: a process being killed, or busy. */
  | { readonly state: 'silent' }
  | { readonly state: 'gone' };

/** Who holds the socket at `path`. */
function probe(path: string, timeoutMs: number): Promise<Owner> {
  return new Promise((resolve) => {
    const socket = connect(path);
    let answer = '';
    const settle = (owner: Owner) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(owner);
    };
    const timer = setTimeout(() => settle({ state: 'silent' }), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => {
      const pid = parsePid(answer);
      settle(pid === undefined ? { state: 'silent' } : { state: 'live', pid });
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') settle({ state: 'dead' });
      else if (error.code === 'ENOENT') settle({ state: 'gone' });
      else settle({ state: 'silent' }); // reset by a dying owner, or EAGAIN: its backlog is full
    });
  });
}

function parsePid(answer: string): number | string | undefined {
  try {
    const pid = (JSON.parse(answer) as { pid?: unknown }).pid;
    return typeof pid === 'number' ? pid : undefined;
  } catch {
    // Something else listens there: it is alive, but it is not ours to name.
    return answer === '' ? undefined : 'unknown';
  }
}

/**
 * Moves a dead lock's name aside, so that a new one can be linked. rename() is atomic, but the
 * name may have been taken over by another start since it was probed: what was moved is probed
 * again, and a live socket is put back (unless a third start took the name meanwhile; then
 * leveldb's own lock, on open, still keeps two stacks apart).
 */
async function moveDeadLockAside(lockPath: string, dir: string, probeTimeoutMs: number): Promise<void> {
  const aside = join(dir, `.lock-${randomBytes(4).toString('hex')}.dead`);
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if ((await probe(aside, probeTimeoutMs)).state !== 'dead') await linkIfAbsent(aside, lockPath);
  } finally {
    await unlink(aside).catch(() => undefined);
  }
}
