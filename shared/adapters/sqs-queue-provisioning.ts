import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueueDefinition } from '../config/resources.ts';

/** What ensureQueueWithDeadLetter adds to a queue definition. */
export interface EnsureQueueOptions {
  /**
   * SQS attributes set on the queue over the definition's (e.g. `{ FifoQueue: 'true' }`); its
   * `FifoQueue`, when given, goes to the dead-letter queue too. Default: none.
   */
  readonly extraAttributes?: Record<string, string>;
  /** The dead-letter queue's name (default: `<name>-dlq`). */
  readonly deadLetterName?: string;
}

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
  options: EnsureQueueOptions = {},
): Promise<string> {
  const { extraAttributes = {}, deadLetterName = `${name}-dlq` } = options;
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
