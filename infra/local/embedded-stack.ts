import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ensureQueueWithDeadLetter } from '../../shared/adapters/sqs-queue-provisioning.ts';
import { queuePrefix, schedulerQueue, type TableDefinition, tables } from '../../shared/config/resources.ts';

/**
 * The embedded stack: dynalite (DynamoDB API, data on disk) and local-aws-sqs
 * (SQS API, in memory) on free loopback ports, with the tables and queues
 * created from the same definitions the CDK stateful stack uses. Each
 * emulator serves from a worker thread of its own (emulator-thread.mjs), as
 * DynamoDB and SQS are services of their own on AWS: their request handling
 * then runs beside the handlers instead of taking turns with them on the one
 * main thread (on 2 cores the emulators were a third to a half of that
 * thread's CPU time). A thread ends with its process, so a killed stack
 * leaves no emulator behind holding the data directory.
 */
export interface EmbeddedStack {
  /** Environment variables that point the functions at this stack (as Lambda's would on AWS). */
  readonly env: Readonly<Record<string, string>>;
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  stop(): Promise<void>;
}

export interface EmbeddedStackOptions {
  readonly dataDir: string;
  readonly stage?: string;
  readonly host?: string;
  /** How long to wait for another process to free the DynamoDB store's leveldb lock (default STORE_UNLOCK_WAIT_MS). */
  readonly storeUnlockWaitMs?: number;
}

/** The code of the error startEmbeddedStack throws when another process kept the DynamoDB store locked. */
export const STORE_LOCKED = 'LEVEL_LOCKED';
export const STORE_UNLOCK_WAIT_MS = 3_000;

/** Fake, fixed credentials (letters only: DynamoDB Local refuses other characters in an access key). */
export const LOCAL_CREDENTIALS = { accessKeyId: 'acklinelocal', secretAccessKey: 'acklinelocal' } as const;
export const LOCAL_REGION = 'us-east-1';

export function physicalTableName(stage: string, table: TableDefinition): string {
  return `ackline-${stage}-${table.logicalName}`;
}

export async function startEmbeddedStack(options: EmbeddedStackOptions): Promise<EmbeddedStack> {
  const host = options.host ?? '127.0.0.1';
  const stage = options.stage ?? 'local';
  const dynamoDir = join(options.dataDir, 'dynamodb');
  await mkdir(dynamoDir, { recursive: true });

  const dynamo = await startEmulatorThread({
    emulator: 'dynamodb',
    host,
    dynamodbPath: dynamoDir,
    storeUnlockWaitMs: options.storeUnlockWaitMs ?? STORE_UNLOCK_WAIT_MS,
  });
  let sqsThread: EmulatorThread;
  try {
    sqsThread = await startEmulatorThread({
      emulator: 'sqs',
      host,
      sqsOptions: { emulateQueueCreationLifecycle: false, validateDlqDestination: true },
    });
  } catch (error) {
    await dynamo.stop();
    throw error;
  }
  const dynamodbEndpoint = dynamo.endpoint;
  const sqsEndpoint = sqsThread.endpoint;
  const stop = async () => {
    await Promise.all([sqsThread.stop(), dynamo.stop()]);
  };

  try {
    const dynamodb = new DynamoDBClient({
      endpoint: dynamodbEndpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    const sqs = new SQSClient({
      endpoint: sqsEndpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    const env: Record<string, string> = {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamodbEndpoint,
      AWS_ENDPOINT_URL_SQS: sqsEndpoint,
      ACKLINE_STAGE: stage,
      ACKLINE_QUEUE_PREFIX: queuePrefix(stage),
    };
    for (const table of tables) {
      const name = physicalTableName(stage, table);
      await ensureTable(dynamodb, name, table);
      env[table.envVar] = name;
    }
    env[schedulerQueue.envVar] = await ensureQueueWithDeadLetter(
      sqs,
      `${queuePrefix(stage)}scheduler`,
      schedulerQueue,
    );
    dynamodb.destroy();
    sqs.destroy();
    return { env, dynamodbEndpoint, sqsEndpoint, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export async function ensureTable(
  client: DynamoDBClient,
  tableName: string,
  table: TableDefinition,
): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: table.partitionKey.name, AttributeType: table.partitionKey.type },
        { AttributeName: table.sortKey.name, AttributeType: table.sortKey.type },
      ],
      KeySchema: [
        { AttributeName: table.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: table.sortKey.name, KeyType: 'RANGE' },
      ],
    }),
  );
}

interface EmulatorThread {
  readonly endpoint: string;
  stop(): Promise<void>;
}

type EmulatorThreadData =
  | {
      readonly emulator: 'dynamodb';
      readonly host: string;
      readonly dynamodbPath: string;
      readonly storeUnlockWaitMs: number;
    }
  | { readonly emulator: 'sqs'; readonly host: string; readonly sqsOptions: Record<string, unknown> };

const EMULATOR_STOP_TIMEOUT_MS = 35_000; // dynalite waits up to 30 s for requests in flight

/**
 * Starts one emulator on a worker thread; resolves once it listens, rejects if
 * it cannot start. An emulator that fails later takes the process down, as it
 * did when it ran on the main thread: a stack whose storage is gone must not
 * go on answering.
 */
async function startEmulatorThread(data: EmulatorThreadData): Promise<EmulatorThread> {
  const worker = new Worker(new URL('./emulator-thread.mjs', import.meta.url), { workerData: data });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const starting = new AbortController(); // removes the start-up listeners, whichever settles first
  const [first] = (await Promise.race([
    once(worker, 'message', { signal: starting.signal }),
    once(worker, 'exit', { signal: starting.signal }).then(([code]) => {
      throw new Error(`the ${data.emulator} emulator thread ended (${code}) before it listened`);
    }),
  ]).finally(() => starting.abort())) as [EmulatorThreadMessage];
  if (first.failure) {
    await exited;
    throw Object.assign(new Error(first.failure.message), { code: first.failure.code });
  }
  let stopping = false;
  worker.on('error', (error) => {
    throw error;
  });
  worker.once('exit', (code) => {
    if (!stopping) throw new Error(`the ${data.emulator} emulator thread ended unexpectedly (${code})`);
  });
  return {
    endpoint: `http://${data.host}:${first.port}`,
    stop: async () => {
      stopping = true;
      const timer = setTimeout(() => void worker.terminate(), EMULATOR_STOP_TIMEOUT_MS);
      worker.postMessage('stop');
      await exited;
      clearTimeout(timer);
    },
  };
}

/** What an emulator thread posts first (emulator-thread.mjs). */
interface EmulatorThreadMessage {
  readonly port?: number;
  readonly failure?: { readonly message: string; readonly code?: string };
}
