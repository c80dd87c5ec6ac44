import { performance } from 'node:perf_hooks';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import type { OperationUsage } from '../shared/adapters/dynamodb/capacity-meter.ts';
import { UsageMeter, type UsageSnapshot } from '../shared/adapters/usage-meter.ts';
import { type BenchStack, Progress, perUnit, runLimited, sumUsage, sumWhere } from './harness.ts';
import { type CostPerMillion, costPerMillion } from './prices.ts';

/** The lifecycle workload: publish, receive and acknowledge, in batches, on one subscription. */
export interface LifecycleOptions {
  readonly messages: number;
  readonly payloadBytes: number;
  readonly batchSize: number;
  /** Parallel producers, and parallel consumers where the subscription admits several. */
  readonly concurrency: number;
}

/** One ackline run of the workload: on a fresh topic, with its own subscription and consumers. */
export interface LifecycleRunOptions extends LifecycleOptions {
  /** The topic's local name (public/default), fresh for each run. */
  readonly topic: string;
  readonly subscriptionType: 'Shared' | 'Exclusive';
  /** HTTP consumers of the subscription (Exclusive admits one). */
  readonly consumers: number;
}

/** What one run took and spent; {@link summariseLifecycle} turns runs into per-message figures. */
export interface LifecycleRun {
  readonly messages: number;
  readonly seconds: number;
  readonly messagesPerSecond: number;
  /** Messages delivered more than once (at-least-once duplicates; 0 expected here). */
  readonly duplicates: number;
  readonly usage: UsageSnapshot;
}

/** Per-message figures over one or more runs: total units over total messages. */
export interface LifecycleResult {
  readonly subscriptionType: 'Shared' | 'Exclusive';
  readonly consumers: number;
  /** Runs summed up. */
  readonly runs: number;
  readonly messages: number;
  readonly seconds: number;
  /** All runs' messages over all runs' seconds. */
  readonly messagesPerSecond: number;
  /** AWS requests and capacity per message, by `Service.Operation`. */
  readonly perMessage: Record<string, OperationUsage>;
  readonly sqsRequestsPerMessage: number;
  readonly dynamodbWriteUnitsPerMessage: number;
  readonly dynamodbReadUnitsPerMessage: number;
  readonly dynamodbRequestsPerMessage: number;
  /** API Gateway requests and Lambda invocations per message, by function. */
  readonly invocationsPerMessage: Record<string, number>;
  readonly usdPerMillionMessages: CostPerMillion;
  /** Messages delivered more than once (at-least-once duplicates; 0 expected here). */
  readonly duplicates: number;
}

interface Delivered {
  readonly messageId: string;
  readonly deliveryHandle: string;
}

/**
 * ackline: `concurrency` producers publish `messages` in batches, while `consumers` HTTP consumers
 * of one subscription receive batches and acknowledge each batch with one call (delivery
 * handles). Timed from the first publish to the last acknowledgement; metered from after the
 * consumers subscribed to after the last acknowledgement.
 */
export async function runLifecycle(stack: BenchStack, options: LifecycleRunOptions): Promise<LifecycleRun> {
  const topicPath = `/persistent/public/default/${options.topic}`;
  const consumers: string[] = [];
  for (let i = 0; i < options.consumers; i++) {
    const { consumerId } = await stack.call<{ consumerId: string }>(
      'POST',
      `/consumers${topicPath}/subscription/bench`,
      { subscriptionType: options.subscriptionType, subscriptionInitialPosition: 'Latest' },
    );
    consumers.push(consumerId);
  }
  const payload = 'x'.repeat(options.payloadBytes);
  const batches = Math.ceil(options.messages / options.batchSize);
  const progress = new Progress(`lifecycle: ${options.topic}`, options.messages);
  const seen = new Set<string>();
  let duplicates = 0;
  let acknowledged = 0;
  await stack.usage(true);
  const started = performance.now();
  const produce = runLimited(batches, options.concurrency, async (batch) => {
    const size = Math.min(options.batchSize, options.messages - batch * options.batchSize);
    await stack.call('POST', `/topics${topicPath}`, {
      messages: Array.from({ length: size }, () => ({ payload })),
    });
  });
  const consume = Promise.all(
    consumers.map(async (consumerId) => {
      while (acknowledged < options.messages) {
        const received = await stack.call<{ messages: Delivered[] }>(
          'POST',
          `/consumers/${consumerId}/receive?maxMessages=${options.batchSize}&waitMs=1000`,
        );
        if (received.messages.length === 0) continue;
        for (const message of received.messages) {
          if (seen.has(message.messageId)) duplicates++;
          seen.add(message.messageId);
        }
        await stack.call('POST', `/consumers/${consumerId}/ack`, {
          deliveryHandles: received.messages.map((message) => message.deliveryHandle),
        });
        acknowledged += received.messages.length;
        progress.add(received.messages.length);
      }
    }),
  );
  await Promise.all([produce, consume]);
  const seconds = (performance.now() - started) / 1000;
  progress.finish();
  const usage = await stack.usage();
  for (const consumerId of consumers) await stack.call('DELETE', `/consumers/${consumerId}`);
  await stack
    .call('DELETE', `/admin/v2${topicPath}?force=true`, undefined, [204, 200, 404, 409])
    .catch(() => {});
  return {
    messages: options.messages,
    seconds,
    messagesPerSecond: options.messages / seconds,
    duplicates,
    usage,
  };
}

/** Per-message figures of `runs` together: what they all spent over all their messages. */
export function summariseLifecycle(
  options: { readonly subscriptionType: 'Shared' | 'Exclusive'; readonly consumers: number },
  runs: readonly LifecycleRun[],
): LifecycleResult {
  const messages = runs.reduce((sum, run) => sum + run.messages, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const usage = sumUsage(runs.map((run) => run.usage));
  const perMessage = perUnit(usage.requests, messages);
  const total = (prefix: string, field: keyof OperationUsage) => sumWhere(perMessage, prefix, field);
  return {
    subscriptionType: options.subscriptionType,
    consumers: options.consumers,
    runs: runs.length,
    messages,
    seconds,
    messagesPerSecond: messages / seconds,
    perMessage,
    sqsRequestsPerMessage: total('SQS.', 'requests'),
    dynamodbWriteUnitsPerMessage: total('DynamoDB.', 'writeCapacityUnits'),
    dynamodbReadUnitsPerMessage: total('DynamoDB.', 'readCapacityUnits'),
    dynamodbRequestsPerMessage: total('DynamoDB.', 'requests'),
    invocationsPerMessage: Object.fromEntries(
      Object.entries(usage.invocations).map(([name, { count }]) => [name, count / messages]),
    ),
    usdPerMillionMessages: costPerMillion(usage, messages),
    duplicates: runs.reduce((sum, run) => sum + run.duplicates, 0),
  };
}

export interface BareSqsResult {
  /** Runs summed up. */
  readonly runs: number;
  readonly messages: number;
  readonly seconds: number;
  /** All runs' messages over all runs' seconds. */
  readonly messagesPerSecond: number;
  readonly perMessage: Record<string, OperationUsage>;
  readonly sqsRequestsPerMessage: number;
  readonly usdPerMillionMessages: CostPerMillion;
}

/** One bare SQS run: how long it took and its requests. */
export interface BareSqsRun {
  readonly messages: number;
  readonly seconds: number;
  readonly messagesPerSecond: number;
  readonly usage: UsageSnapshot;
}

/**
 * The same workload on a fresh bare SQS standard queue (`queueName`) of the same embedded SQS
 * server: SendMessageBatch, ReceiveMessage (10, 1 s wait), DeleteMessageBatch, with `concurrency`
 * producers and as many consumers.
 */
export async function runBareSqs(
  stack: BenchStack,
  options: LifecycleOptions & { readonly queueName: string },
): Promise<BareSqsRun> {
  const client = stack.sqsClient();
  const meter = new UsageMeter();
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: options.queueName }));
  meter.attachSqs(client);
  const payload = 'x'.repeat(options.payloadBytes);
  const batches = Math.ceil(options.messages / options.batchSize);
  const progress = new Progress(`lifecycle: bare SQS ${options.queueName}`, options.messages);
  let deleted = 0;
  const started = performance.now();
  const produce = runLimited(batches, options.concurrency, async (batch) => {
    const size = Math.min(options.batchSize, options.messages - batch * options.batchSize);
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: Array.from({ length: size }, (_, i) => ({ Id: String(i), MessageBody: payload })),
      }),
    );
  });
  const consume = Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (deleted < options.messages) {
        const { Messages = [] } = await client.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: options.batchSize, WaitTimeSeconds: 1 }),
        );
        if (Messages.length === 0) continue;
        await client.send(
          new DeleteMessageBatchCommand({
            QueueUrl,
            Entries: Messages.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle })),
          }),
        );
        deleted += Messages.length;
        progress.add(Messages.length);
      }
    }),
  );
  await Promise.all([produce, consume]);
  const seconds = (performance.now() - started) / 1000;
  progress.finish();
  const usage = meter.snapshot();
  await client.send(new DeleteQueueCommand({ QueueUrl })).catch(() => {});
  client.destroy();
  return { messages: options.messages, seconds, messagesPerSecond: options.messages / seconds, usage };
}

/** Per-message figures of bare SQS runs together. */
export function summariseBareSqs(runs: readonly BareSqsRun[]): BareSqsResult {
  const messages = runs.reduce((sum, run) => sum + run.messages, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const usage = sumUsage(runs.map((run) => run.usage));
  const perMessage = perUnit(usage.requests, messages);
  return {
    runs: runs.length,
    messages,
    seconds,
    messagesPerSecond: messages / seconds,
    perMessage,
    sqsRequestsPerMessage: sumWhere(perMessage, 'SQS.', 'requests'),
    usdPerMillionMessages: costPerMillion(usage, messages),
  };
}
