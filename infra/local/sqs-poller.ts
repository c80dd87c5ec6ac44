import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { localLambdaContext } from './lambda-invocation.ts';

export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface SqsPoller {
  stop(): Promise<void>;
}

/**
 * The embedded stack's stand-in for a Lambda SQS event-source mapping with
 * `reportBatchItemFailures`: polls the queue, hands batches of up to 10
 * records to the handler, deletes the records that succeeded and leaves the
 * reported failures to reappear after their visibility timeout. Each batch
 * is one invocation of the function `functionName`, handed a Lambda context
 * with its `timeoutMs` to run. Short polls every `idleMs` (local-aws-sqs holds
 * a long poll for a full batch).
 */
export function startSqsPoller(options: {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly handler: SqsBatchHandler;
  readonly functionName: string;
  readonly timeoutMs: number;
  readonly idleMs?: number;
  readonly onError?: (error: unknown) => void;
}): SqsPoller {
  let running = true;
  const idleMs = options.idleMs ?? 100;
  const loop = (async () => {
    while (running) {
      try {
        const result = await options.client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
            AttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
          }),
        );
        const messages = result.Messages ?? [];
        if (messages.length === 0) {
          await sleep(idleMs);
          continue;
        }
        const records: SQSRecord[] = messages.map((message) => ({
          messageId: message.MessageId ?? '',
          receiptHandle: message.ReceiptHandle ?? '',
          body: message.Body ?? '',
          attributes: (message.Attributes ?? {}) as unknown as SQSRecord['attributes'],
          messageAttributes: {},
          md5OfBody: message.MD5OfBody ?? '',
          eventSource: 'aws:sqs',
          eventSourceARN: options.queueArn,
          awsRegion: 'us-east-1',
        }));
        let failed = new Set<string>();
        try {
          const context = localLambdaContext({
            functionName: options.functionName,
            timeoutMs: options.timeoutMs,
          });
          const response = await options.handler({ Records: records }, context);
          failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
        } catch (error) {
          // A thrown handler fails the whole batch, as on Lambda.
          options.onError?.(error);
          continue;
        }
        const done = records.filter((record) => !failed.has(record.messageId));
        if (done.length > 0) {
          await options.client.send(
            new DeleteMessageBatchCommand({
              QueueUrl: options.queueUrl,
              Entries: done.map((record, index) => ({
                Id: String(index),
                ReceiptHandle: record.receiptHandle,
              })),
            }),
          );
        }
      } catch (error) {
        if (running) options.onError?.(error);
        await sleep(idleMs);
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
