import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueueDefinition } from '../config/resources.ts';

/**
 * Creates `name` and its dead-letter queue `name-dlq` from a queue definition
 * (idempotent: CreateQueue with the same attributes returns the existing URL).
 * Used by the embedded stack's bootstrap and by the control plane, which
 * creates a delivery queue per subscription at run time. Cost: 3 SQS requests.
 */
export async function ensureQueueWithDeadLetter(
  client: SQSClient,
  name: string,
  definition: QueueDefinition,
  extraAttributes: Record<string, string> = {},
  deadLetterName = `${name}-dlq`,
): Promise<string> {
  const dlq = await client.send(
    new CreateQueueCommand({
      QueueName: deadLetterName,
      Attributes: {
        MessageRetentionPeriod: String(definition.messageRetentionSeconds),
        ...(extraAttributes.FifoQueue ? { FifoQueue: extraAttributes.FifoQueue } : {}),
      },
    }),
  );
  const dlqAttributes = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(definition.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(definition.messageRetentionSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqAttributes.Attributes?.QueueArn,
          maxReceiveCount: definition.maxReceiveCount,
        }),
        ...extraAttributes,
      },
    }),
  );
  if (!queue.QueueUrl) throw new Error(`CreateQueue ${name} returned no URL`);
  return queue.QueueUrl;
}
