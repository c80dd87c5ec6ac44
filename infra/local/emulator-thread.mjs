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
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';
import { createSqsServer } from 'local-aws-sqs';

const { emulator, host, dynamodbPath, sqsOptions } = workerData;

async function start() {
  if (emulator === 'dynamodb') {
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
