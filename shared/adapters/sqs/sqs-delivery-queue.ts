import {
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type QueueAttributeName,
  QueueDoesNotExist,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type QueueDefinition, subscriptionQueueTemplate } from '../../config/resources.ts';
import { NotFoundError } from '../../domain/errors.ts';
import type { DeliveryQueue, SubscriptionQueue } from '../../ports/delivery-queue.ts';
import { ensureQueueWithDeadLetter } from '../sqs-queue-provisioning.ts';
import { SQS_MAX_BATCH_ENTRIES } from './sqs-limits.ts';

/** What a doorbell ring carries: nothing but itself. */
const RING_BODY = '{"ring":1}';

/**
 * Subscription doorbell queues on SQS: `<prefix>s-<cursorId>` plus `-dlq`, created at run time
 * from the subscription queue template. Queue URLs are resolved once per process and cached
 * (they never change for a name).
 */
export class SqsDeliveryQueue implements DeliveryQueue {
  private readonly urls = new Map<string, string>();

  constructor(
    private readonly client: SQSClient,
    private readonly queuePrefix: string,
    readonly maxDelaySeconds: number = 900,
    private readonly template: QueueDefinition = subscriptionQueueTemplate,
  ) {}

  /** `<prefix>s-<cursorId>`, with `.fifo` for an ordered queue (SQS requires the suffix). */
  queueName(queue: SubscriptionQueue): string {
    return `${this.queuePrefix}s-${queue.cursorId}${queue.ordered ? '.fifo' : ''}`;
  }

  private deadLetterName(queue: SubscriptionQueue): string {
    return `${this.queuePrefix}s-${queue.cursorId}-dlq${queue.ordered ? '.fifo' : ''}`;
  }

  async create(queue: SubscriptionQueue): Promise<void> {
    const url = await ensureQueueWithDeadLetter(this.client, this.queueName(queue), this.template, {
      extraAttributes: queue.ordered ? { FifoQueue: 'true' } : {},
      deadLetterName: this.deadLetterName(queue),
    });
    this.urls.set(this.queueName(queue), url);
  }

  async delete(queue: SubscriptionQueue): Promise<void> {
    for (const name of [this.queueName(queue), this.deadLetterName(queue)]) {
      try {
        const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: name }));
        await this.client.send(new DeleteQueueCommand({ QueueUrl }));
      } catch (error) {
        if (!(error instanceof QueueDoesNotExist)) throw error;
      }
    }
    this.urls.delete(this.queueName(queue));
    this.urls.delete(this.deadLetterName(queue));
  }

  /** Deletes received rings, SQS_MAX_BATCH_ENTRIES per DeleteMessageBatch. */
  private async remove(queue: SubscriptionQueue, receipts: readonly string[]): Promise<void> {
    if (receipts.length === 0) return;
    const url = await this.url(queue);
    for (let i = 0; i < receipts.length; i += SQS_MAX_BATCH_ENTRIES) {
      await this.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: receipts.slice(i, i + SQS_MAX_BATCH_ENTRIES).map((receipt, index) => ({
            Id: String(index),
            ReceiptHandle: receipt,
          })),
        }),
      );
    }
  }

  async deadLetterCount(queue: SubscriptionQueue): Promise<number> {
    const name = this.deadLetterName(queue);
    let url = this.urls.get(name);
    try {
      if (url === undefined) {
        ({ QueueUrl: url } = await this.client.send(new GetQueueUrlCommand({ QueueName: name })));
        if (!url) throw new Error(`No URL for queue ${name}`);
        this.urls.set(name, url);
      }
      return await this.countOf(url, [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
      ]);
    } catch (error) {
      // A subscription being created or deleted has no dead-letter queue (yet, or any more).
      if (!(error instanceof QueueDoesNotExist)) throw error;
      this.urls.delete(name);
      return 0;
    }
  }

  /** The sum of the queue's count attributes `names` (one GetQueueAttributes). */
  private async countOf(url: string, names: QueueAttributeName[]): Promise<number> {
    const { Attributes } = await this.client.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: names }),
    );
    return names.reduce((sum, name) => sum + Number(Attributes?.[name] ?? 0), 0);
  }

  async ring(queue: SubscriptionQueue, delaySeconds: number): Promise<void> {
    const url = await this.url(queue);
    await this.client
      .send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: RING_BODY,
          DelaySeconds: Math.min(this.maxDelaySeconds, Math.max(0, Math.ceil(delaySeconds))),
        }),
      )
      .catch((error: unknown) => {
        if (error instanceof QueueDoesNotExist) throw gone(url, error);
        throw error;
      });
  }

  /**
   * A long poll for one ring (local-aws-sqs holds a long poll for more until the batch is full),
   * then a short poll for the others, all deleted: rings carry nothing.
   */
  async waitForRing(queue: SubscriptionQueue, waitMs: number): Promise<boolean> {
    const url = await this.url(queue);
    const waitSeconds = Math.min(20, Math.max(0, Math.floor(waitMs / 1000)));
    const receive = (max: number, wait: number) =>
      this.client
        .send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: max,
            VisibilityTimeout: 30,
            WaitTimeSeconds: wait,
          }),
        )
        .catch((error: unknown) => {
          if (error instanceof QueueDoesNotExist) throw gone(url, error);
          throw error;
        });
    let first = (await receive(1, waitSeconds)).Messages ?? [];
    if (first.length === 0 && waitSeconds === 0 && waitMs > 0) {
      // Under a second: SQS long polls in whole seconds, so wait here and look once more.
      await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, 1_000)));
      first = (await receive(1, 0)).Messages ?? [];
    }
    if (first.length === 0) return false;
    const rest = (await receive(10, 0)).Messages ?? [];
    const receipts = [...first, ...rest].flatMap((message) => message.ReceiptHandle ?? []);
    await this.remove(queue, receipts);
    return true;
  }

  private async url(queue: SubscriptionQueue): Promise<string> {
    const name = this.queueName(queue);
    const cached = this.urls.get(name);
    if (cached) return cached;
    let QueueUrl: string | undefined;
    try {
      ({ QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: name })));
    } catch (error) {
      if (error instanceof QueueDoesNotExist) throw gone(name, error);
      throw error;
    }
    if (!QueueUrl) throw new Error(`No URL for queue ${name}`);
    this.urls.set(name, QueueUrl);
    return QueueUrl;
  }
}

/** The queue of a deleted subscription: its consumers get a 404, not a 500. */
function gone(queue: string, cause: unknown): NotFoundError {
  return new NotFoundError(`The subscription queue ${queue} does not exist: the subscription was deleted`, {
    cause,
  });
}
