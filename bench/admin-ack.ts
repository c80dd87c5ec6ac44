import { performance } from 'node:perf_hooks';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../infra/local/embedded-stack.ts';
import { ACK_PAGE_SIZE } from '../shared/adapters/dynamodb/dynamodb-cursor-store.ts';
import { cursorsTable } from '../shared/config/resources.ts';
import { type BenchStack, type Distribution, distribution, Progress, runLimited } from './harness.ts';

export interface LatencyRun {
  readonly calls: number;
  readonly concurrency: number;
  readonly latencyMs: Distribution;
  readonly callsPerSecond: number;
}

export interface AdminAckResult {
  readonly acknowledgeMessage: LatencyRun;
  readonly bareUpdateItem: LatencyRun;
  /** acknowledgeMessage calls per second over bare UpdateItem calls per second. */
  readonly ratio: number;
  /** DynamoDB requests per acknowledgeMessage call, by operation. */
  readonly dynamodbRequestsPerCall: Record<string, number>;
}

const TOPIC_PATH = '/persistent/public/default/bench-admin-ack';

/**
 * PIP-423's acknowledgeMessage through the HTTP gateway, one distinct entry
 * per call on a named Shared subscription, `calls` calls at `concurrency`;
 * then, against the same dynalite, bare UpdateItem calls (an `ADD` to a
 * number set, what one acknowledgement writes) at the same concurrency.
 */
export async function runAdminAck(
  stack: BenchStack,
  options: { calls: number; concurrency: number },
): Promise<AdminAckResult> {
  await stack.call('PUT', `/admin/v2${TOPIC_PATH}`, undefined, [204, 200]);
  await stack.call('PUT', `/admin/v2${TOPIC_PATH}/subscription/ops?subscriptionType=Shared`, {
    initialPosition: 'Latest',
  });
  const ids: string[] = [];
  for (let published = 0; published < options.calls; published += 1000) {
    const size = Math.min(1000, options.calls - published);
    const result = await stack.call<{ messagePublishResults: { messageId: string }[] }>(
      'POST',
      `/topics${TOPIC_PATH}`,
      { messages: Array.from({ length: size }, (_, i) => ({ payload: `admin ${published + i}` })) },
    );
    ids.push(...result.messagePublishResults.map((r) => r.messageId));
  }
  await stack.usage(true);
  const acknowledgeMessage = await timed('admin acknowledgeMessage', options, async (call) => {
    const [ledgerId, entryId] = (ids[call] as string).split(':');
    await stack.call(
      'POST',
      `/admin/v2${TOPIC_PATH}/acknowledgeMessage?ledgerId=${ledgerId}&entryId=${entryId}&subscriptionNames=ops`,
      undefined,
      [204],
    );
  });
  const usage = await stack.usage(true);

  const bareUpdateItem = await stack.withDynamoDb(async (client) => {
    await ensureTable(client, 'bench-bare-updates', cursorsTable);
    return timed('bare DynamoDB UpdateItem', options, async (call) => {
      await client.send(
        new UpdateItemCommand({
          TableName: 'bench-bare-updates',
          Key: { pk: { S: 'bench' }, sk: { S: `P#${Math.floor(call / Number(ACK_PAGE_SIZE))}` } },
          UpdateExpression: 'ADD a :offset',
          ExpressionAttributeValues: { ':offset': { NS: [String(call % Number(ACK_PAGE_SIZE))] } },
        }),
      );
    });
  });
  return {
    acknowledgeMessage,
    bareUpdateItem,
    ratio: acknowledgeMessage.callsPerSecond / bareUpdateItem.callsPerSecond,
    dynamodbRequestsPerCall: Object.fromEntries(
      Object.entries(usage.requests)
        .filter(([operation]) => operation.startsWith('DynamoDB.'))
        .map(([operation, value]) => [operation, value.requests / options.calls]),
    ),
  };
}

async function timed(
  label: string,
  options: { calls: number; concurrency: number },
  call: (index: number) => Promise<void>,
): Promise<LatencyRun> {
  const latencies: number[] = [];
  const progress = new Progress(label, options.calls);
  const started = performance.now();
  await runLimited(options.calls, options.concurrency, async (index) => {
    const callStarted = performance.now();
    await call(index);
    latencies.push(performance.now() - callStarted);
    progress.add();
  });
  const seconds = (performance.now() - started) / 1000;
  progress.finish();
  return {
    calls: options.calls,
    concurrency: options.concurrency,
    latencyMs: distribution(latencies),
    callsPerSecond: options.calls / seconds,
  };
}
