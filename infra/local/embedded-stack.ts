import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import dynalite from 'dynalite';
import { createSqsServer } from 'local-aws-sqs';
import { ensureQueueWithDeadLetter } from '../../shared/adapters/sqs-queue-provisioning.ts';
import { queuePrefix, schedulerQueue, type TableDefinition, tables } from '../../shared/config/resources.ts';

/**
 * The embedded stack: dynalite (DynamoDB API, data on disk) and local-aws-sqs
 * (SQS API, in memory) on free loopback ports, with the tables and queues
 * created from the same definitions the CDK stateful stack uses.
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
}

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

  const dynamoServer = dynalite({ path: dynamoDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const dynamodbEndpoint = await listen(dynamoServer, host);
  let sqsServer: Server;
  try {
    sqsServer = await createSqsServer({
      port: 0,
      hostname: host,
      emulateQueueCreationLifecycle: false,
      validateDlqDestination: true,
    });
  } catch (error) {
    await close(dynamoServer);
    throw error;
  }
  const sqsEndpoint = `http://${host}:${(sqsServer.address() as AddressInfo).port}`;
  const stop = async () => {
    await Promise.all([close(sqsServer), close(dynamoServer)]);
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

function listen(server: Server, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve(`http://${host}:${(server.address() as AddressInfo).port}`);
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}
