import type { AttributeValue, ConsumedCapacity, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type CompareAndSetUsage, type KeyUsage, PartitionKeyMeter, unitsOf } from './partition-key-meter.ts';

/** Requests and capacity units per DynamoDB operation (e.g. `UpdateItem`). */
export interface OperationUsage {
  requests: number;
  readCapacityUnits: number;
  writeCapacityUnits: number;
}

/**
 * Marks a request made only because the emulator lacks a feature AWS has (set as a property of the
 * command's input; the SDK does not send it). The meter files it under its own operation name,
 * ending in EMULATOR_ONLY_SUFFIX, which the bench reports but leaves out of AWS's bill.
 */
export const EMULATOR_ONLY = Symbol.for('ackline.emulatorOnly');
export const EMULATOR_ONLY_SUFFIX = '(emulator only)';

/**
 * Counts what a DynamoDB client spends: asks every request for
 * `ReturnConsumedCapacity: TOTAL` and adds up what DynamoDB reports, per
 * operation, and per partition key (PartitionKeyMeter). A write refused by its
 * condition reports nothing, but AWS bills it on the size of the item it found,
 * at least one unit: counted apart, as PartitionKeyMeter sizes it. For the
 * benchmark and the cost tests; not wired in production (the extra response
 * field is free, but nobody reads it there).
 */
export class CapacityMeter {
  private readonly usage = new Map<string, OperationUsage>();
  private readonly keys = new PartitionKeyMeter();

  /** @param detail also split each operation by table and item kind (`npm run bench -- --detail`). */
  constructor(private readonly detail = process.env.ACKLINE_METER_DETAIL === '1') {}

  attach(client: DynamoDBClient): this {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { ReturnConsumedCapacity?: string };
        if (input && typeof input === 'object' && input.ReturnConsumedCapacity === undefined) {
          input.ReturnConsumedCapacity = 'TOTAL';
        }
        const command = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
        const emulatorOnly = input && typeof input === 'object' && EMULATOR_ONLY in input;
        const detail = this.detail ? ` ${itemKindOf(input)}` : '';
        const operation = emulatorOnly
          ? `${command}${detail} ${EMULATOR_ONLY_SUFFIX}`
          : `${command}${detail}`;
        let result: Awaited<ReturnType<typeof next>>;
        try {
          result = await next(args);
        } catch (error) {
          const refusal = error as { name?: string; Item?: Record<string, AttributeValue> };
          if (refusal.name === 'ConditionalCheckFailedException') {
            const units = this.keys.refused(input, refusal.Item);
            this.add(`${command}${detail} (condition failed)`, { CapacityUnits: units }, true);
          }
          throw error;
        }
        const output = result.output as {
          ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[];
          Count?: number;
        };
        if (!emulatorOnly) this.keys.answered(command, input, output);
        this.add(
          this.detail && command === 'Query' ? `${operation} ${queryShape(input, output.Count)}` : operation,
          output.ConsumedCapacity,
          isWrite(command),
        );
        return result;
      },
      { step: 'initialize', name: 'acklineCapacityMeter' },
    );
    return this;
  }

  snapshot(): Record<string, OperationUsage> {
    return Object.fromEntries([...this.usage].map(([operation, usage]) => [operation, { ...usage }]));
  }

  totals(): OperationUsage {
    const total: OperationUsage = { requests: 0, readCapacityUnits: 0, writeCapacityUnits: 0 };
    for (const usage of this.usage.values()) {
      total.requests += usage.requests;
      total.readCapacityUnits += usage.readCapacityUnits;
      total.writeCapacityUnits += usage.writeCapacityUnits;
    }
    return total;
  }

  /** Capacity by partition key (emulator-only requests left out, as from AWS's bill). */
  keyUsage(): KeyUsage[] {
    return this.keys.keyUsage();
  }

  /** Compare-and-sets by item: committed and refused. */
  compareAndSetUsage(): CompareAndSetUsage[] {
    return this.keys.compareAndSetUsage();
  }

  reset(): void {
    this.usage.clear();
    this.keys.reset();
  }

  private add(
    operation: string,
    consumed: ConsumedCapacity | ConsumedCapacity[] | undefined,
    write: boolean,
  ) {
    const usage = this.usage.get(operation) ?? { requests: 0, readCapacityUnits: 0, writeCapacityUnits: 0 };
    usage.requests += 1;
    for (const capacity of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
      const units = unitsOf(capacity, write);
      usage.readCapacityUnits += units.readCapacityUnits;
      usage.writeCapacityUnits += units.writeCapacityUnits;
    }
    this.usage.set(operation, usage);
  }
}

function isWrite(operation: string): boolean {
  return /^(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)$/.test(operation);
}

/**
 * `[table kind]`: the table without its stage prefix, and the kind of item from the key's fixed
 * prefix (`ML#`, `CONS#`, `MEM#`; the Cursors table's sort keys `H`, `P#`, `R#`, `S`; a Query's
 * sort key condition), never a name.
 */
function itemKindOf(input: unknown): string {
  type Key = Record<string, { S?: string; N?: string } | undefined>;
  const request = input as {
    TableName?: string;
    Key?: Key;
    Item?: Key;
    KeyConditionExpression?: string;
    RequestItems?: Record<string, unknown>;
  };
  const table = (request.TableName ?? Object.keys(request.RequestItems ?? {}).join('+')).replace(/^.*-/, '');
  const key = request.Key ?? request.Item;
  const prefix = (value: string | undefined) => /^[A-Z]+#?/.exec(value ?? '')?.[0] ?? '';
  const kind = key
    ? prefix(table.endsWith('Cursors') ? key.sk?.S : key.pk?.S) || 'item'
    : request.KeyConditionExpression
      ? 'query'
      : 'batch';
  return `[${table} ${kind}]`;
}

/** A Query's direction and how many items it answered (0, 1, 2 or more): where reads are wasted. */
function queryShape(input: unknown, count: number | undefined): string {
  const backward = (input as { ScanIndexForward?: boolean }).ScanIndexForward === false;
  const items = count === undefined ? '?' : count >= 2 ? '2+' : String(count);
  return `(${backward ? 'backward, ' : ''}${items} ${items === '1' ? 'item' : 'items'})`;
}
