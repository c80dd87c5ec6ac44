import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { CapacityMeter, type OperationUsage } from './dynamodb/capacity-meter.ts';
import type { CompareAndSetUsage, KeyUsage } from './dynamodb/partition-key-meter.ts';

/** What one benchmark phase cost: requests per service and operation, capacity, invocations. */
export interface UsageSnapshot {
  /** `DynamoDB.UpdateItem` -> requests and capacity units. */
  readonly requests: Record<string, OperationUsage>;
  /** API Gateway requests and Lambda invocations by function (`authorizer`, `data-api`, ...), with their total time. */
  readonly invocations: Record<string, { count: number; totalMs: number }>;
  /** DynamoDB capacity by table and partition key (absent from snapshots of SQS alone). */
  readonly keys?: KeyUsage[];
  /** Compare-and-sets by item, committed and refused. */
  readonly compareAndSets?: CompareAndSetUsage[];
}

/**
 * Counts every AWS request the functions make (SDK middleware on their
 * clients, DynamoDB's ConsumedCapacity included) and every gateway request
 * and function invocation. The embedded stack installs one when
 * ACKLINE_METER=1 so `npm run bench` can read what each operation cost; a
 * deployed function never has one.
 */
export class UsageMeter {
  private readonly dynamodb = new CapacityMeter();
  private readonly sqs = new Map<string, number>();
  private readonly invocations = new Map<string, { count: number; totalMs: number }>();

  attachDynamoDb(client: DynamoDBClient): void {
    this.dynamodb.attach(client);
  }

  attachSqs(client: SQSClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
        this.sqs.set(operation, (this.sqs.get(operation) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize', name: 'acklineUsageMeter' },
    );
  }

  invoked(name: string, durationMs: number): void {
    const usage = this.invocations.get(name) ?? { count: 0, totalMs: 0 };
    usage.count += 1;
    usage.totalMs += durationMs;
    this.invocations.set(name, usage);
  }

  snapshot(): UsageSnapshot {
    const requests: Record<string, OperationUsage> = {};
    for (const [operation, usage] of Object.entries(this.dynamodb.snapshot())) {
      requests[`DynamoDB.${operation}`] = usage;
    }
    for (const [operation, count] of this.sqs) {
      requests[`SQS.${operation}`] = { requests: count, readCapacityUnits: 0, writeCapacityUnits: 0 };
    }
    const invocations = Object.fromEntries(
      [...this.invocations].map(([name, usage]) => [name, { ...usage }]),
    );
    return {
      requests,
      invocations,
      keys: this.dynamodb.keyUsage(),
      compareAndSets: this.dynamodb.compareAndSetUsage(),
    };
  }

  reset(): void {
    this.dynamodb.reset();
    this.sqs.clear();
    this.invocations.clear();
  }
}

let installed: UsageMeter | undefined;

/** Meters the AWS clients of every composition root built from now on in this process. */
export function installUsageMeter(meter: UsageMeter): void {
  installed = meter;
}

export function installedUsageMeter(): UsageMeter | undefined {
  return installed;
}
