import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { deleteAll, type Item } from '../../shared/adapters/dynamodb/dynamodb-support.ts';
import { systemClock } from '../../shared/adapters/system-clock.ts';
import { entriesTable } from '../../shared/config/resources.ts';
import type { Clock } from '../../shared/ports/clock.ts';
import { type EmbeddedStack, LOCAL_CREDENTIALS, LOCAL_REGION } from './embedded-stack.ts';
import { startLocalSchedule } from './local-schedule.ts';

/**
 * The embedded stack's stand-in for DynamoDB's Time to Live on the entries table (dynalite has
 * none): deletes the batches whose `ttl` (epoch seconds) has passed, as AWS does some time after
 * the expiry (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html). On AWS
 * those deletes consume no write units, so this runs on a client of its own that the usage meter
 * never sees: the bench bills what AWS bills. Readers never rely on it: they filter on `ttl`.
 * Audit records (the catalog's `ttl`) keep their own path (maintenance deletes them locally).
 */

/** How often the embedded stack sweeps by default: DynamoDB takes days; nothing waits on it. */
export const LOCAL_TTL_SWEEP_INTERVAL_MS = 10 * 60_000;

export interface LocalTimeToLive {
  /** One sweep: scans the entries table and deletes what expired. Returns how many items went. */
  sweep(): Promise<number>;
  close(): void;
}

export function localTimeToLive(options: {
  readonly dynamodbEndpoint: string;
  /** The entries table's physical name (the stack's ACKLINE_ENTRIES_TABLE). */
  readonly tableName: string;
  readonly clock: Clock;
}): LocalTimeToLive {
  const client = new DynamoDBClient({
    endpoint: options.dynamodbEndpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  const table = options.tableName;
  const attribute = entriesTable.timeToLiveAttribute as string;
  return {
    sweep: async () => {
      const nowSeconds = Math.floor(options.clock.nowMs() / 1_000);
      let deleted = 0;
      let startKey: Item | undefined;
      do {
        const page = await client.send(
          new ScanCommand({
            TableName: table,
            FilterExpression: '#ttl <= :now',
            ProjectionExpression: 'ledgerId, firstEntryId',
            ExpressionAttributeNames: { '#ttl': attribute },
            ExpressionAttributeValues: { ':now': { N: String(nowSeconds) } },
            ExclusiveStartKey: startKey,
          }),
        );
        const keys = page.Items ?? [];
        await deleteAll(client, table, keys);
        deleted += keys.length;
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return deleted;
    },
    close: () => client.destroy(),
  };
}

/** Sweeps the stack's entries table every `intervalMs` (the first one interval after the start). */
export function startTimeToLiveSweeps(stack: EmbeddedStack, intervalMs: number): { stop(): Promise<void> } {
  const timeToLive = localTimeToLive({
    dynamodbEndpoint: stack.dynamodbEndpoint,
    tableName: stack.env[entriesTable.envVar] as string,
    clock: systemClock,
  });
  const schedule = startLocalSchedule({ name: 'dynamodb-ttl', intervalMs, run: () => timeToLive.sweep() });
  return {
    stop: async () => {
      await schedule.stop();
      timeToLive.close();
    },
  };
}
