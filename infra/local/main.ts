/**
 * `npm start`: the embedded stack on one machine, no AWS account needed.
 *   PORT              gateway port (default 8080; 0 picks a free one)
 *   HOST              the address the gateway binds (default 127.0.0.1); any other one is
 *                     warned about: the admin API is then reachable from other machines
 *   ACKLINE_DATA_DIR  where dynalite keeps its data and the token secret (default ./.ackline)
 *   ACKLINE_METER=1   count AWS requests and invocations at GET /_local/usage (`npm run bench`)
 *   ACKLINE_LAMBDA_CONTAINERS=one  one instance of each API function serves every request (its
 *                     SDK clients' sockets shared); default `pool`: as Lambda does, a container
 *                     per concurrent request, each with its own memory and SDK clients
 *   ACKLINE_MAINTENANCE_INTERVAL_MS  how often maintenance runs (default 60000, as on AWS)
 *   ACKLINE_LOCAL_TTL_SWEEP_MS  how often expired entries are deleted, standing in for DynamoDB's
 *                     TTL (default 600000)
 * GET /_local/status answers the state of start-up work (queue rebuilds) and of maintenance.
 */

import { DataDirInUseError } from './data-dir-lock.ts';
import { DataFormatError } from './data-format.ts';
import { quietAwsSdkNodeWarning } from './quiet-warnings.ts';
import { startLocal } from './start-local.ts';

quietAwsSdkNodeWarning();

const port = Number(process.env.PORT ?? 8080);
const dataDir = process.env.ACKLINE_DATA_DIR || '.ackline';
// `[::1]` as in a URL is `::1` to listen on.
const host = (process.env.HOST || '127.0.0.1').replace(/^\[(.*)\]$/, '$1');

if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`ackline: PORT must be an integer from 0 to 65535, got '${process.env.PORT}'`);
  process.exit(2);
}
const maintenanceIntervalMs =
  process.env.ACKLINE_MAINTENANCE_INTERVAL_MS === undefined
    ? undefined
    : Number(process.env.ACKLINE_MAINTENANCE_INTERVAL_MS);
if (
  maintenanceIntervalMs !== undefined &&
  (!Number.isSafeInteger(maintenanceIntervalMs) || maintenanceIntervalMs < 1)
) {
  console.error(
    `ackline: ACKLINE_MAINTENANCE_INTERVAL_MS must be a positive integer, got '${process.env.ACKLINE_MAINTENANCE_INTERVAL_MS}'`,
  );
  process.exit(2);
}

const ttlSweepIntervalMs =
  process.env.ACKLINE_LOCAL_TTL_SWEEP_MS === undefined
    ? undefined
    : Number(process.env.ACKLINE_LOCAL_TTL_SWEEP_MS);
if (
  ttlSweepIntervalMs !== undefined &&
  (!Number.isSafeInteger(ttlSweepIntervalMs) || ttlSweepIntervalMs < 1)
) {
  console.error(
    `ackline: ACKLINE_LOCAL_TTL_SWEEP_MS must be a positive integer, got '${process.env.ACKLINE_LOCAL_TTL_SWEEP_MS}'`,
  );
  process.exit(2);
}

if (!isLoopback(host)) {
  console.warn(
    `ackline: warning: HOST=${host} binds the gateway to an address other machines may reach: ` +
      'the admin API (topics, subscriptions, permissions, acknowledgeMessage) answers anyone holding a token, ' +
      'over plain HTTP. Keep the token secret out of reach, or leave HOST unset (127.0.0.1).',
  );
}

try {
  const local = await startLocal({
    port,
    host,
    dataDir,
    meter: process.env.ACKLINE_METER === '1',
    lambdaContainers: process.env.ACKLINE_LAMBDA_CONTAINERS === 'one' ? 'one' : 'pool',
    ...(maintenanceIntervalMs !== undefined ? { maintenanceIntervalMs } : {}),
    ...(ttlSweepIntervalMs !== undefined ? { ttlSweepIntervalMs } : {}),
  });
  console.log(`ackline ready on ${local.url}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`ackline: ${signal} received, stopping`);
    await local.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGHUP', () => void stop('SIGHUP')); // the terminal closed
} catch (error) {
  console.error(`ackline: ${describeStartError(error, port, dataDir)}`);
  process.exit(1);
}

function describeStartError(error: unknown, port: number, dataDir: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return `port ${port} on ${host} is already in use; start with another port, e.g. PORT=${port + 1} npm start`;
  }
  if (code === 'EACCES') {
    return `not allowed to listen on port ${port}; choose a port above 1023 (PORT=8080 npm start)`;
  }
  if (error instanceof DataDirInUseError || error instanceof DataFormatError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  return `could not start with data directory ${dataDir}: ${message}`;
}

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine reaches. */
function isLoopback(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127(\.\d{1,3}){3}$/.test(address);
}
