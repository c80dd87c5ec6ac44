import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueNameExists,
  SetQueueAttributesCommand,
  type SQSClient,
  TagQueueCommand,
} from '@aws-sdk/client-sqs';
import type { QueueDefinition } from '../config/resources.ts';
import { NEW_QUEUE_RETRY, type NewQueueRetry, retryWhileQueueMissing } from './sqs/new-queue-retry.ts';

/** What ensureQueueWithDeadLetter adds to a queue definition. */
export interface EnsureQueueOptions {
  /**
   * SQS attributes set on the queue over the definition's (e.g. `{ FifoQueue: 'true' }`); its
   * `FifoQueue`, when given, goes to the dead-letter queue too. Default: none.
   */
  readonly extraAttributes?: Record<string, string>;
  /** The dead-letter queue's name (default: `<name>-dlq`). */
  readonly deadLetterName?: string;
  /**
   * Tags both queues get at CreateQueue (IAM: `sqs:TagQueue` besides `sqs:CreateQueue`), so that a
   * stage's run-time queues can be found and deleted by tag. Default: none.
   */
  readonly tags?: Record<string, string>;
  /** How long to wait for the new dead-letter queue to be usable (default NEW_QUEUE_RETRY). */
  readonly newQueueRetry?: NewQueueRetry;
}

/**
 * Creates `name` and its dead-letter queue `name-dlq` from a queue definition
 * (idempotent: CreateQueue with the same attributes returns the existing URL).
 * A queue that exists with other attributes (made by an earlier version, e.g.
 * a doorbell that kept rings 14 days) is brought to the definition with
 * SetQueueAttributes and tagged. Used by the embedded stack's bootstrap and by
 * the control plane, which creates a doorbell queue per subscription at run
 * time. The dead-letter queue's ARN is read back with a retry while SQS still
 * answers QueueDoesNotExist for it (a new queue may be unusable for a second).
 * Cost: 3 SQS requests (2 more per queue brought to the definition).
 */
export async function ensureQueueWithDeadLetter(
  client: SQSClient,
  name: string,
  definition: QueueDefinition,
  options: EnsureQueueOptions = {},
): Promise<string> {
  const { extraAttributes = {}, deadLetterName = `${name}-dlq`, tags } = options;
  const dlqUrl = await createOrConverge(client, {
    name: deadLetterName,
    attributes: {
      MessageRetentionPeriod: String(definition.deadLetterRetentionSeconds),
      ...(extraAttributes.FifoQueue ? { FifoQueue: extraAttributes.FifoQueue } : {}),
    },
    tags,
  });
  const dlqAttributes = await retryWhileQueueMissing(
    () => client.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] })),
    options.newQueueRetry ?? NEW_QUEUE_RETRY,
  );
  return createOrConverge(client, {
    name,
    attributes: {
      VisibilityTimeout: String(definition.visibilityTimeoutSeconds),
      MessageRetentionPeriod: String(definition.messageRetentionSeconds),
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: dlqAttributes.Attributes?.QueueArn,
        maxReceiveCount: definition.maxReceiveCount,
      }),
      ...extraAttributes,
    },
    tags,
  });
}

/** One queue: created, or brought to `attributes` when it exists with others. */
async function createOrConverge(
  client: SQSClient,
  queue: {
    readonly name: string;
    readonly attributes: Record<string, string>;
    readonly tags: Record<string, string> | undefined;
  },
): Promise<string> {
  const { name, attributes, tags } = queue;
  try {
    const { QueueUrl } = await client.send(
      new CreateQueueCommand({ QueueName: name, Attributes: attributes, ...(tags ? { tags } : {}) }),
    );
    if (!QueueUrl) throw new Error(`CreateQueue ${name} returned no URL`);
    return QueueUrl;
  } catch (error) {
    if (!(error instanceof QueueNameExists)) throw error;
  }
  const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: name }));
  if (!QueueUrl) throw new Error(`GetQueueUrl ${name} returned no URL`);
  // FifoQueue cannot change once a queue exists; every other attribute of the definition can.
  const { FifoQueue: _fixed, ...settable } = attributes;
  await client.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: settable }));
  if (tags) await client.send(new TagQueueCommand({ QueueUrl, Tags: tags }));
  return QueueUrl;
}
