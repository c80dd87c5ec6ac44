import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Logger } from '@aws-lambda-powertools/logger';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { handler as adminApi, makeHandler as makeAdminApi } from '../../functions/admin-api/handler.ts';
import { handler as authorizer } from '../../functions/authorizer/handler.ts';
import { handler as dataApi, makeHandler as makeDataApi } from '../../functions/data-api/handler.ts';
import { handler as maintenance } from '../../functions/maintenance/handler.ts';
import { handler as scheduler } from '../../functions/scheduler/handler.ts';
import { createDependencies } from '../../shared/adapters/create-dependencies.ts';
import { installUsageMeter, UsageMeter } from '../../shared/adapters/usage-meter.ts';
import { restoreDoorbells } from '../../shared/application/maintenance/restore-doorbells.ts';
import type { UseCasePorts } from '../../shared/application/use-case-ports.ts';
import { loadConfig, tokenPublicKeyEnv, tokenSecretEnv } from '../../shared/config/load-config.ts';
import { schedulerQueue } from '../../shared/config/resources.ts';
import {
  MAINTENANCE_INTERVAL_MS,
  MAINTENANCE_TIMEOUT_SECONDS,
  SCHEDULER_TIMEOUT_SECONDS,
} from '../api-routes.ts';
import {
  type BackgroundRetry,
  type RetryPolicy,
  retryInBackground,
  type TaskStatus,
} from './background-retry.ts';
import { DataDirInUseError, lockDataDir } from './data-dir-lock.ts';
import { checkDataFormat } from './data-format.ts';
import {
  type EmbeddedStack,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  STORE_LOCKED,
  startEmbeddedStack,
} from './embedded-stack.ts';
import { localLambdaContext, localScheduledEvent } from './lambda-invocation.ts';
import { lambdaPool } from './lambda-pool.ts';
import { type LocalGateway, startLocalGateway } from './local-gateway.ts';
import { type LocalSchedule, type ScheduleStatus, startLocalSchedule } from './local-schedule.ts';
import { LOCAL_TTL_SWEEP_INTERVAL_MS, startTimeToLiveSweeps } from './local-ttl.ts';
import { type SqsPoller, startSqsPoller } from './sqs-poller.ts';

/**
 * Written into the data directory at every start: where this run's gateway,
 * DynamoDB and SQS endpoints listen (their ports change between runs), for
 * tools such as the AWS CLI (`--endpoint-url`) and the test suites.
 */
export const ENDPOINTS_FILE = 'endpoints.json';

export interface LocalOptions {
  readonly port: number;
  readonly host?: string;
  readonly dataDir: string;
  /** Count AWS requests, capacity and invocations for the benchmark (served at USAGE_PATH). */
  readonly meter?: boolean;
  /** How often the maintenance function runs (default: as on AWS, every minute: MAINTENANCE_INTERVAL_MS). */
  readonly maintenanceIntervalMs?: number;
  /**
   * How often expired entries are deleted, standing in for DynamoDB's TTL (default
   * LOCAL_TTL_SWEEP_INTERVAL_MS, 10 minutes); unmetered, as AWS bills no write for it.
   */
  readonly ttlSweepIntervalMs?: number;
  /** How start-up work that failed is retried in the background (default STARTUP_RETRY). */
  readonly startupRetry?: RetryPolicy;
  /**
   * Default `pool`: the API functions run as Lambda runs them, one request at a time per container,
   * a new container when all are busy, each with its own SDK clients and sockets, so requests one
   * role holds (300 long polls) cannot queue another tenant's requests behind them (issue 22).
   * `one`: one instance serves all (its SDK clients' 50 sockets shared by every request).
   */
  readonly lambdaContainers?: 'one' | 'pool';
}

/** What the local status path (STATUS_PATH) answers: start-up work and the maintenance schedule. */
export interface LocalStatus {
  /** `ready` once every subscription queue was rebuilt; else what is still retried, or gave up. */
  readonly rebuild: TaskStatus;
  readonly maintenance: ScheduleStatus;
}

export interface RunningLocal {
  readonly url: string;
  readonly dataDir: string;
  readonly stack: EmbeddedStack;
  /**
   * Tokens put back on subscription queues at start (unacknowledged messages found in the cursors):
   * the first part of each backlog; the scheduler feeds the rest once it polls.
   */
  readonly rebuiltTokens: number;
  status(): LocalStatus;
  stop(): Promise<void>;
}

/**
 * Starts the whole embedded stack in this process: storage and queues, then
 * the local gateway in front of the real Lambda handlers. The handlers read
 * their configuration from process.env on first use, exactly as on Lambda, so
 * one process runs one embedded stack.
 */
export async function startLocal(options: LocalOptions): Promise<RunningLocal> {
  const dataDir = resolve(options.dataDir);
  const host = options.host ?? '127.0.0.1';
  await mkdir(dataDir, { recursive: true });
  const lock = await lockDataDir(dataDir);
  try {
    await checkDataFormat(dataDir);
  } catch (error) {
    await lock.release();
    throw error;
  }
  // A stack verifying with a public key (ACKLINE_TOKEN_PUBLIC_KEY) has no secret: the authorizer refuses both.
  const tokenSecret = process.env[tokenPublicKeyEnv.value]
    ? undefined
    : process.env[tokenSecretEnv.value] || (await loadOrCreateTokenSecret(dataDir));
  let stack: EmbeddedStack;
  try {
    stack = await startStackOn(dataDir);
  } catch (error) {
    await lock.release();
    throw error;
  }
  Object.assign(process.env, stack.env, {
    ...(tokenSecret === undefined ? {} : { [tokenSecretEnv.value]: tokenSecret }),
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
    POWERTOOLS_DEV: process.env.POWERTOOLS_DEV ?? 'true',
  });
  // Local SQS keeps queues in memory: make every subscription's doorbell queue exist again (the
  // cursors, in DynamoDB, hold everything else), then stand in for Lambda's event-source mapping on
  // the scheduler queue.
  const meter = options.meter ? new UsageMeter() : undefined;
  if (meter) installUsageMeter(meter);
  let poller: SqsPoller;
  let rebuild: Rebuild;
  let schedule: LocalSchedule;
  const sweeps = startTimeToLiveSweeps(stack, options.ttlSweepIntervalMs ?? LOCAL_TTL_SWEEP_INTERVAL_MS);
  const stopSweeps = () => sweeps.stop();
  try {
    const deps = createDependencies(loadConfig(), 'embedded');
    // Nothing stored may keep the stack from starting: what fails here is retried in the background.
    rebuild = await rebuildQueues(deps.ports, deps.logger, options.startupRetry);
    meter?.reset(); // start-up work, not what the first phase costs
    poller = await startSchedulerPoller(stack, deps.logger, meter);
    schedule = startMaintenanceSchedule(
      options.maintenanceIntervalMs ?? MAINTENANCE_INTERVAL_MS,
      deps.logger,
      meter,
    );
  } catch (error) {
    await stopSweeps();
    await stack.stop();
    await lock.release();
    throw error;
  }
  const status = (): LocalStatus => ({ rebuild: rebuild.status(), maintenance: schedule.status() });
  let gateway: LocalGateway;
  try {
    gateway = await startLocalGateway({
      port: options.port,
      host,
      functions: {
        authorizer,
        api: apiFunctions(options.lambdaContainers),
      },
      status,
      ...(meter ? { meter } : {}),
    });
  } catch (error) {
    rebuild.stop();
    await schedule.stop();
    await stopSweeps();
    await poller.stop();
    await stack.stop();
    await lock.release();
    throw error;
  }
  await writeFile(
    join(dataDir, ENDPOINTS_FILE),
    `${JSON.stringify({ gateway: gateway.url, dynamodb: stack.dynamodbEndpoint, sqs: stack.sqsEndpoint, env: stack.env }, null, 2)}\n`,
  );
  return {
    url: gateway.url,
    dataDir,
    stack,
    rebuiltTokens: rebuild.tokens,
    status,
    stop: async () => {
      rebuild.stop();
      await schedule.stop();
      await stopSweeps();
      await poller.stop();
      await gateway.close();
      await stack.stop();
      await rm(join(dataDir, ENDPOINTS_FILE), { force: true });
      await lock.release();
    },
  };
}

/**
 * The API functions behind the local gateway: the Lambda entry points themselves (one container
 * each), or a pool of containers built as each entry point builds its own (see lambdaPool).
 */
function apiFunctions(containers: LocalOptions['lambdaContainers']) {
  if (containers === 'one') return { 'admin-api': adminApi, 'data-api': dataApi };
  const apiDependencies = (name: 'admin-api' | 'data-api') =>
    createDependencies(loadConfig(), name, { answersApiGateway: true });
  return {
    'admin-api': lambdaPool(() => makeAdminApi(apiDependencies('admin-api'))),
    'data-api': lambdaPool(() => makeDataApi(apiDependencies('data-api'))),
  };
}

/**
 * The embedded stack on the data directory. Its store locked by another process means the
 * directory is in use, though this process holds the data-directory lock: the other is an
 * ackline from before that lock (which trusted a pid file), or a start that lost a three-way race
 * (see lockDataDir).
 * @throws DataDirInUseError
 */
async function startStackOn(dataDir: string): Promise<EmbeddedStack> {
  try {
    return await startEmbeddedStack({ dataDir });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== STORE_LOCKED) throw error;
    throw new DataDirInUseError(
      `the data directory ${dataDir} is in use by another process: ${(error as Error).message}; stop it or set ACKLINE_DATA_DIR`,
      { cause: error },
    );
  }
}

/**
 * The embedded stack's token secret: generated at first start and kept in the
 * data directory (mode 0600), so tokens minted once keep working.
 */
export async function loadOrCreateTokenSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'token-secret');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error) => {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  });
  return (await readFile(file, 'utf8')).trim();
}

async function startSchedulerPoller(stack: EmbeddedStack, logger: Logger, meter: UsageMeter | undefined) {
  const client = new SQSClient({
    endpoint: stack.sqsEndpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  const queueUrl = stack.env[schedulerQueue.envVar] as string;
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const poller = startSqsPoller({
    client,
    queueUrl,
    queueArn: Attributes?.QueueArn ?? queueUrl,
    // The poller stands in for Lambda's event-source mapping: its polls are not metered, the invocations are.
    handler: meter
      ? async (event, context) => {
          const started = performance.now();
          try {
            return await scheduler(event, context);
          } finally {
            meter.invoked('scheduler', performance.now() - started);
          }
        }
      : scheduler,
    functionName: 'scheduler',
    timeoutMs: SCHEDULER_TIMEOUT_SECONDS * 1000,
    idleMs: 50,
    onError: (error) => logger.error('scheduler poller', { error: error as Error }),
  });
  return {
    stop: async () => {
      await poller.stop();
      client.destroy();
    },
  };
}

interface Rebuild {
  /** Subscriptions whose doorbell queue the first attempt restored. */
  readonly tokens: number;
  status(): TaskStatus;
  stop(): void;
}

const REBUILD = 'restore subscription doorbells';

/**
 * Restores every subscription's doorbell queue (local SQS keeps queues in memory only). A
 * subscription that fails does not stop the others, nor the start: the failed ones (all of them,
 * when the catalog could not even be listed) are retried in the background. Every failure is
 * logged; the state is served at STATUS_PATH.
 */
async function rebuildQueues(
  ports: UseCasePorts,
  logger: Logger,
  policy: RetryPolicy | undefined,
): Promise<Rebuild> {
  /** The subscriptions still to rebuild (JSON `[partition, subscription]`); undefined: all of them. */
  let pending: Set<string> | undefined;
  const attempt = async (): Promise<number> => {
    const failures = new Map<string, unknown>();
    let restored: string[];
    try {
      restored = await restoreDoorbells(ports, {
        ...(pending ? { only: pending } : {}),
        onFailure: (subscription: string, error: unknown) => failures.set(subscription, error),
      });
    } catch (error) {
      pending = undefined;
      throw error;
    }
    pending = new Set(failures.keys());
    if (failures.size > 0) {
      const named = [...failures].slice(0, 5).map(([name, error]) => `${name}: ${describe(error)}`);
      throw new Error(`${failures.size} subscription queue(s) could not be restored (${named.join('; ')})`, {
        cause: [...failures.values()][0],
      });
    }
    return restored.length;
  };
  try {
    const tokens = await attempt();
    return { tokens, status: () => ({ name: REBUILD, state: 'done', attempts: 1 }), stop: () => undefined };
  } catch (firstError) {
    const retry: BackgroundRetry = retryInBackground(
      REBUILD,
      firstError,
      async () => {
        await attempt();
      },
      {
        ...(policy ? { policy } : {}),
        onAttemptFailed: (error, attempts, willRetry) =>
          logger.error(
            `${REBUILD}: attempt ${attempts} failed; ${willRetry ? 'retrying in the background' : 'giving up until the next start'}`,
            {
              error: error instanceof Error ? error : String(error),
            },
          ),
        onDone: (attempts) => logger.warn(`${REBUILD}: done at attempt ${attempts}`),
      },
    );
    return { tokens: 0, status: retry.status, stop: retry.stop };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The rule an EventBridge scheduled event names (its `resources`), as the stateless stack's MaintenanceSchedule. */
const MAINTENANCE_RULE = 'ackline-local-MaintenanceSchedule';

/**
 * The maintenance function on a timer, as EventBridge runs it on AWS: a scheduled event, and a
 * Lambda context with its timeout as budget.
 */
function startMaintenanceSchedule(
  intervalMs: number,
  logger: Logger,
  meter: UsageMeter | undefined,
): LocalSchedule {
  return startLocalSchedule({
    name: 'maintenance',
    intervalMs,
    run: async () => {
      const started = performance.now();
      const context = localLambdaContext({
        functionName: 'maintenance',
        timeoutMs: MAINTENANCE_TIMEOUT_SECONDS * 1000,
      });
      try {
        await maintenance(localScheduledEvent(MAINTENANCE_RULE), context);
      } finally {
        meter?.invoked('maintenance', performance.now() - started);
      }
    },
    onError: (error) => logger.error('maintenance run failed', { error: error as Error }),
  });
}
