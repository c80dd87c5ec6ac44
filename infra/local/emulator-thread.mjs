// One emulator of the embedded stack, dynalite or local-aws-sqs, serving on a
// loopback port from its own worker thread (started by embedded-stack.ts).
//
// Plain JavaScript on purpose: Node 20 does not run the main thread's
// TypeScript loader (tsx) in worker threads, and this file needs none of it.
//
// Protocol with the main thread: posts { port } once listening, or
// { failure: { message, code } } if it could not start; on 'stop' it closes
// its server (dynalite closes its LevelDB store with it), posts 'stopped' and
// lets the thread end.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';
import { createSqsServer } from 'local-aws-sqs';

// dynalite's own leveldb binding, so that the wait below is for the very lock dynalite takes.
const requireFromHere = createRequire(import.meta.url);
const { Level } = createRequire(requireFromHere.resolve('dynalite'))('level');

const { emulator, host, dynamodbPath, sqsOptions, storeUnlockWaitMs } = workerData;

/**
 * Waits until no other process holds the store's leveldb LOCK (an fcntl lock: the kernel frees it
 * when its process dies). dynalite opens the store lazily, and a locked one only fails its first
 * request ("Database is closed"), so it is opened here first, then closed for dynalite. A killed
 * stack's lock is freed with its data-directory lock (data-dir-lock.ts), in the same moment; this
 * covers the rest (a stack of an ackline before that lock), retrying with backoff (20 ms doubling
 * up to 500 ms) for storeUnlockWaitMs, then failing with code LEVEL_LOCKED (embedded-stack.ts
 * STORE_LOCKED). Cost: one more open and close of the store per start.
 */
async function waitForStoreUnlocked(path) {
  const deadlineMs = Date.now() + storeUnlockWaitMs;
  for (let attempt = 0; ; attempt++) {
    const db = new Level(path);
    try {
      await db.open();
      await db.close();
      return;
    } catch (error) {
      if (error?.cause?.code !== 'LEVEL_LOCKED') throw error;
      if (attempt === 0) {
        console.warn(
          `ackline: the DynamoDB store ${path} is locked by another process; waiting up to ${storeUnlockWaitMs} ms`,
        );
      }
      if (Date.now() >= deadlineMs) {
        throw Object.assign(
          new Error(`its DynamoDB store ${path} stayed locked for ${storeUnlockWaitMs} ms`),
          {
            code: 'LEVEL_LOCKED',
          },
        );
      }
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(20 * 2 ** attempt, 500)));
  }
}

async function start() {
  if (emulator === 'dynamodb') {
    await waitForStoreUnlocked(dynamodbPath);
    const server = dynalite({ path: dynamodbPath, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server;
  }
  if (emulator === 'sqs') return createSqsServer({ ...sqsOptions, port: 0, hostname: host });
  throw new Error(`unknown emulator '${emulator}'`);
}

try {
  const server = await start();
  parentPort.on('message', (message) => {
    if (message !== 'stop') return;
    server.closeAllConnections?.();
    server.close(() => {
      parentPort.postMessage('stopped');
      parentPort.close();
    });
  });
  parentPort.postMessage({ port: server.address().port });
} catch (error) {
  parentPort.postMessage({ failure: { message: error?.message ?? String(error), code: error?.code } });
  parentPort.close();
}
