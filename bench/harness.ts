import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../infra/local/embedded-stack.ts';
import { USAGE_PATH } from '../infra/local/local-gateway.ts';
import { ENDPOINTS_FILE } from '../infra/local/start-local.ts';
import type { OperationUsage } from '../shared/adapters/dynamodb/capacity-meter.ts';
import { EMULATOR_ONLY_SUFFIX } from '../shared/adapters/dynamodb/capacity-meter.ts';
import type { UsageSnapshot } from '../shared/adapters/usage-meter.ts';
import type { TableDefinition } from '../shared/config/resources.ts';
import {
  type EmbeddedProcess,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../test/support/embedded-process.ts';
import { hs256Token } from '../test/support/hs256-token.ts';

/** What the benchmark's embedded stack wrote to endpoints.json. */
export interface Endpoints {
  readonly gateway: string;
  readonly dynamodb: string;
  readonly sqs: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface BenchStackOptions {
  readonly detail?: boolean;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The embedded stack the benchmark runs against: `npm start`'s entry point as
 * a child process with the usage meter on (ACKLINE_METER=1), on a fresh data
 * directory. A restart keeps the data directory, as a user's restart does.
 */
export class BenchStack {
  private constructor(
    private process: EmbeddedProcess,
    public endpoints: Endpoints,
    readonly dataDir: string,
    private readonly options: BenchStackOptions,
  ) {}

  /**
   * @param options.detail the meter splits DynamoDB operations by table and item kind.
   * @param options.env more environment for the stack (ACKLINE_MAINTENANCE_INTERVAL_MS, say).
   */
  static async start(dataDir: string, options: BenchStackOptions = {}): Promise<BenchStack> {
    const process = await BenchStack.spawn(dataDir, options);
    return new BenchStack(process, await readEndpoints(dataDir), dataDir, options);
  }

  private static spawn(dataDir: string, options: BenchStackOptions): Promise<EmbeddedProcess> {
    return startEmbeddedProcess({
      dataDir,
      env: {
        ACKLINE_METER: '1',
        ACKLINE_LAMBDA_CONTAINERS: 'pool',
        POWERTOOLS_LOG_LEVEL: 'ERROR',
        ...(options.detail ? { ACKLINE_METER_DETAIL: '1' } : {}),
        ...options.env,
      },
      timeoutMs: 300_000,
    });
  }

  get url(): string {
    return this.process.url;
  }

  /** The end of what the stack printed (its error logs), for a failure's message. */
  tail(chars = 4000): string {
    return this.process.output().slice(-chars);
  }

  /** A superuser's token (the stack runs with the test secret and the default superuser role `admin`). */
  readonly token = hs256Token({ sub: 'admin' }, TEST_TOKEN_SECRET);

  /** SIGTERM, then the same data directory again; resolves with the time the start took. */
  async restart(): Promise<number> {
    await this.process.stop('SIGTERM');
    const started = performance.now();
    this.process = await BenchStack.spawn(this.dataDir, this.options);
    this.endpoints = await readEndpoints(this.dataDir);
    return performance.now() - started;
  }

  async stop(): Promise<void> {
    await this.process.stop('SIGTERM');
  }

  /** Runs `use` with a DynamoDB client on this run's local endpoint (closed afterwards). */
  async withDynamoDb<T>(use: (client: DynamoDBClient) => Promise<T>): Promise<T> {
    const client = new DynamoDBClient({
      endpoint: this.endpoints.dynamodb,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    try {
      return await use(client);
    } finally {
      client.destroy();
    }
  }

  /** An SQS client on this run's local endpoint; the caller destroys it. */
  sqsClient(): SQSClient {
    return new SQSClient({
      endpoint: this.endpoints.sqs,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
  }

  /** The physical name of one of ackline's tables in this stack. */
  tableName(table: TableDefinition): string {
    const name = this.endpoints.env[table.envVar];
    if (!name) throw new Error(`no table ${table.logicalName} in this stack`);
    return name;
  }

  /** What the stack spent since the last reset (and resets it when `reset`). */
  async usage(reset = false): Promise<UsageSnapshot> {
    const response = await fetch(`${this.url}${USAGE_PATH}`, { method: reset ? 'DELETE' : 'GET' });
    return (await response.json()) as UsageSnapshot;
  }

  /** Calls the gateway as the superuser; throws on any status but the expected ones. */
  async call<T>(
    method: string,
    path: string,
    body?: unknown,
    expect: readonly number[] = [200, 204],
  ): Promise<T> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!expect.includes(response.status)) {
      throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

async function readEndpoints(dataDir: string): Promise<Endpoints> {
  return JSON.parse(await readFile(join(dataDir, ENDPOINTS_FILE), 'utf8')) as Endpoints;
}

/** Runs `work(i)` for i in [0, count) with at most `concurrency` at a time. */
export async function runLimited(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const index = next++;
        await work(index);
      }
    }),
  );
}

export interface Distribution {
  readonly count: number;
  readonly min: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentiles. */
export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;
  return {
    count: sorted.length,
    min: sorted[0] ?? 0,
    p50: rank(0.5),
    p99: rank(0.99),
    max: sorted[sorted.length - 1] ?? 0,
  };
}

/** Requests and capacity per operation, divided by `per` (messages, acknowledgements, calls). */
export function perUnit(
  requests: Record<string, OperationUsage>,
  per: number,
): Record<string, OperationUsage> {
  return Object.fromEntries(
    Object.entries(requests)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([operation, usage]) => [
        operation,
        {
          requests: usage.requests / per,
          readCapacityUnits: usage.readCapacityUnits / per,
          writeCapacityUnits: usage.writeCapacityUnits / per,
        },
      ]),
  );
}

/** The usage of several runs added up: requests and units per operation, invocations and their time. */
export function sumUsage(snapshots: readonly UsageSnapshot[]): UsageSnapshot {
  const requests: Record<string, OperationUsage> = {};
  const invocations: Record<string, { count: number; totalMs: number }> = {};
  for (const snapshot of snapshots) {
    for (const [operation, usage] of Object.entries(snapshot.requests)) {
      const sum = requests[operation] ?? { requests: 0, readCapacityUnits: 0, writeCapacityUnits: 0 };
      requests[operation] = sum;
      sum.requests += usage.requests;
      sum.readCapacityUnits += usage.readCapacityUnits;
      sum.writeCapacityUnits += usage.writeCapacityUnits;
    }
    for (const [name, usage] of Object.entries(snapshot.invocations)) {
      const sum = invocations[name] ?? { count: 0, totalMs: 0 };
      invocations[name] = sum;
      sum.count += usage.count;
      sum.totalMs += usage.totalMs;
    }
  }
  return { requests, invocations };
}

/** The middle value (the mean of the two middle ones for an even count); 0 for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * The sum of `field` over the operations named `prefix`..., as AWS bills them: requests the
 * emulator alone needs (EMULATOR_ONLY_SUFFIX) are left out.
 */
export function sumWhere(
  requests: Record<string, OperationUsage>,
  prefix: string,
  field: keyof OperationUsage,
): number {
  return Object.entries(requests)
    .filter(([operation]) => operation.startsWith(prefix) && !operation.endsWith(EMULATOR_ONLY_SUFFIX))
    .reduce((sum, [, usage]) => sum + usage[field], 0);
}

/**
 * A progress bar on stderr for long phases (a line every 10% when stderr is
 * not a terminal, so CI logs stay short).
 */
export class Progress {
  private done = 0;
  private lastDecile = -1;
  private readonly started = performance.now();

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {
    this.render();
  }

  add(n = 1): void {
    this.done += n;
    this.render();
  }

  finish(): void {
    this.done = this.total;
    this.render();
    if (process.stderr.isTTY) process.stderr.write('\n');
  }

  private render(): void {
    const fraction = this.total === 0 ? 1 : Math.min(1, this.done / this.total);
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1);
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round(fraction * width);
      process.stderr.write(
        `\r  ${this.label.padEnd(34)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${this.done}/${this.total} ${seconds}s`,
      );
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile !== this.lastDecile) {
      this.lastDecile = decile;
      process.stderr.write(`  ${this.label}: ${decile * 10}% (${this.done}/${this.total}, ${seconds}s)\n`);
    }
  }
}

/** A log line on stderr (stdout carries the report). */
export function note(message: string): void {
  process.stderr.write(`${message}\n`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
