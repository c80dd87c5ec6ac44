import {
  type AttributeValue,
  type ConsumedCapacity,
  type DynamoDBClient,
  GetItemCommand,
} from '@aws-sdk/client-dynamodb';
import { tables } from '../../config/resources.ts';
import { itemBytes } from './item-size.ts';

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
 * operation. For the benchmark and the cost tests; not wired in production
 * (the extra response field is free, but nobody reads it there).
 */
export class CapacityMeter {
  private readonly usage = new Map<string, OperationUsage>();

  /** @param detail also split each operation by table and item kind (`npm run bench -- --detail`). */
  constructor(private readonly detail = process.env.ACKLINE_METER_DETAIL === '1') {}

  attach(client: DynamoDBClient): this {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as WriteInput;
        const command = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
        if (input && typeof input === 'object') askForWhatItCosts(command, input);
        const emulatorOnly = input && typeof input === 'object' && EMULATOR_ONLY in input;
        const detail = this.detail ? ` ${itemKindOf(input)}` : '';
        const operation = emulatorOnly
          ? `${command}${detail} ${EMULATOR_ONLY_SUFFIX}`
          : `${command}${detail}`;
        let result: Awaited<ReturnType<typeof next>>;
        try {
          result = await next(args);
        } catch (error) {
          // AWS bills a refused conditional write by the item that refused it: counted apart.
          if ((error as { name?: string }).name === 'ConditionalCheckFailedException') {
            const units = await refusedWriteUnits(client, input, error as { Item?: Item });
            this.add(`${command}${detail} (condition failed)`, { CapacityUnits: units }, true);
          }
          throw error;
        }
        const output = result.output as {
          ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[];
          Count?: number;
        };
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

  reset(): void {
    this.usage.clear();
  }

  private add(
    operation: string,
    consumed: ConsumedCapacity | ConsumedCapacity[] | undefined,
    write: boolean,
  ) {
    const usage = this.usage.get(operation) ?? { requests: 0, readCapacityUnits: 0, writeCapacityUnits: 0 };
    usage.requests += 1;
    for (const capacity of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
      // DynamoDB Local and dynalite report only CapacityUnits; AWS also splits read and write.
      const read = capacity.ReadCapacityUnits ?? (write ? 0 : (capacity.CapacityUnits ?? 0));
      const written = capacity.WriteCapacityUnits ?? (write ? (capacity.CapacityUnits ?? 0) : 0);
      usage.readCapacityUnits += read;
      usage.writeCapacityUnits += written;
    }
    this.usage.set(operation, usage);
  }
}

type Item = Record<string, AttributeValue>;

/** The fields of a request the meter reads or sets. */
interface WriteInput {
  ReturnConsumedCapacity?: string;
  ReturnValuesOnConditionCheckFailure?: string;
  ConditionExpression?: string;
  TableName?: string;
  Key?: Item;
  Item?: Item;
}

/**
 * Asks every request for its consumed capacity, and a conditional single-item write for the item
 * it is refused by (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, free: no read unit), unless
 * the caller asked already.
 */
function askForWhatItCosts(command: string, input: WriteInput): void {
  if (input.ReturnConsumedCapacity === undefined) input.ReturnConsumedCapacity = 'TOTAL';
  if (
    /^(PutItem|UpdateItem|DeleteItem)$/.test(command) &&
    input.ConditionExpression !== undefined &&
    input.ReturnValuesOnConditionCheckFailure === undefined
  ) {
    input.ReturnValuesOnConditionCheckFailure = 'ALL_OLD';
  }
}

/**
 * What AWS bills a conditional write that its condition refused: a write unit per started KB of
 * the item that refused it, at least one (no item). The refusal carries the item on AWS and on
 * DynamoDB Local (ALL_OLD); dynalite ignores the parameter, so when it carries none the item is
 * read (a GetItem filed as emulator-only, apart from AWS's bill).
 */
async function refusedWriteUnits(
  client: DynamoDBClient,
  input: WriteInput,
  refusal: { Item?: Item },
): Promise<number> {
  const item = refusal.Item ?? (await readRefusingItem(client, input));
  return item ? Math.max(1, Math.ceil(itemBytes(item) / 1024)) : 1;
}

async function readRefusingItem(client: DynamoDBClient, input: WriteInput): Promise<Item | undefined> {
  const key = input.Key ?? keyOf(input.TableName, input.Item);
  if (!input.TableName || !key) return undefined;
  const read = { TableName: input.TableName, Key: key, ConsistentRead: true, [EMULATOR_ONLY]: true };
  const { Item: item } = await client.send(new GetItemCommand(read));
  return item;
}

/** The key attributes of a put's item, by the table definitions (physical names end `-<logicalName>`). */
function keyOf(tableName: string | undefined, item: Item | undefined): Item | undefined {
  const table = tables.find(({ logicalName }) => tableName?.endsWith(`-${logicalName}`));
  if (!table || !item) return undefined;
  const { partitionKey, sortKey } = table;
  const [pk, sk] = [item[partitionKey.name], item[sortKey.name]];
  return pk && sk ? { [partitionKey.name]: pk, [sortKey.name]: sk } : undefined;
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
