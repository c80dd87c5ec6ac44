import { performance } from 'node:perf_hooks';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import type { OperationUsage } from '../shared/adapters/dynamodb/capacity-meter.ts';
import { UsageMeter, type UsageSnapshot } from '../shared/adapters/usage-meter.ts';
import { type BenchStack, Progress, perUnit, runLimited, sumWhere } from './harness.ts';
import { type CostPerMillion, costPerMillion } from './prices.ts';

/** The lifecycle workload: publish, receive and acknowledge, in batches, on one Shared subscription. */
export interface LifecycleOptions {
  readonly messages: number;
  readonly payloadBytes: number;
  readonly batchSize: number;
  /** Parallel producers and parallel consumers. */
  readonly concurrency: number;
}

export interface LifecycleResult {
  readonly messages: number;
  readonly seconds: number;
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

const TOPIC_PATH = '/persistent/public/default/bench-lifecycle';

interface Delivered {
  readonly messageId: string;
  readonly deliveryHandle: string;
}

/**
 * ackline: `concurrency` producers publish `messages` in batches, while
 * `concurrency` HTTP consumers of one Shared subscription receive batches and
 * acknowledge each batch with one call (delivery handles, so the tokens are
 * deleted at once). Timed from the first publish to the last acknowledgement;
 * metered from after the consumers subscribed.
 */
export async function runLifecycle(stack: BenchStack, options: LifecycleOptions): Promise<LifecycleResult> {
  const consumers: string[] = [];
  for (let i = 0; i < options.concurrency; i++) {
    const { consumerId } = await stack.call<{ consumerId: string }>(
      'POST',
      `/consumers${TOPIC_PATH}/subscription/bench`,
      { subscriptionType: 'Shared', subscriptionInitialPosition: 'Latest' },
    );
    consumers.push(consumerId);
  }
  const payload = 'x'.repeat(options.payloadBytes);
  const batches = Math.ceil(options.messages / options.batchSize);
  const progress = new Progress('lifecycle: ackline', options.messages);
  const seen = new Set<string>();
  let duplicates = 0;
  let acknowledged = 0;
  await stack.usage(true);
  const started = performance.now();
  const produce = runLimited(batches, options.concurrency, async (batch) => {
    const size = Math.min(options.batchSize, options.messages - batch * options.batchSize);
    await stack.call('POST', `/topics${TOPIC_PATH}`, {
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
  await stack.call('DELETE', `/admin/v2${TOPIC_PATH}`, undefined, [204, 200, 404, 409, 412]).catch(() => {});
  return summarise(options.messages, seconds, usage, duplicates);
}

export interface BareSqsResult {
  readonly messages: number;
  readonly seconds: number;
  readonly messagesPerSecond: number;
  readonly perMessage: Record<string, OperationUsage>;
  readonly sqsRequestsPerMessage: number;
  readonly usdPerMillionMessages: CostPerMillion;
}

/**
 * The same workload on a bare SQS standard queue of the same embedded SQS
 * server: SendMessageBatch, ReceiveMessage (10, 1 s wait), DeleteMessageBatch.
 */
export async function runBareSqs(stack: BenchStack, options: LifecycleOptions): Promise<BareSqsResult> {
  const client = stack.sqsClient();

  const meter = new UsageMeter();
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'bench-bare-sqs' }));
  meter.attachSqs(client);
  const payload = 'x'.repeat(options.payloadBytes);
  const batches = Math.ceil(options.messages / options.batchSize);
  const progress = new Progress('lifecycle: bare SQS', options.messages);
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
  client.destroy();
  const { requests } = meter.snapshot();
  const perMessage = perUnit(requests, options.messages);
  const sqsRequestsPerMessage = sumWhere(perMessage, 'SQS.', 'requests');
  return {
    messages: options.messages,
    seconds,
    messagesPerSecond: options.messages / seconds,
    perMessage,
    sqsRequestsPerMessage,
    usdPerMillionMessages: costPerMillion({ requests, invocations: {} }, options.messages),
  };
}

function summarise(
  messages: number,
  seconds: number,
  usage: UsageSnapshot,
  duplicates: number,
): LifecycleResult {
  const perMessage = perUnit(usage.requests, messages);
  const total = (prefix: string, field: keyof OperationUsage) => sumWhere(perMessage, prefix, field);
  return {
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
    duplicates,
  };
}
