import {
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
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
import { NEW_QUEUE_RETRY, type NewQueueRetry, retryWhileQueueMissing } from './new-queue-retry.ts';
import { SQS_MAX_BATCH_ENTRIES } from './sqs-limits.ts';

/** What a doorbell ring carries: nothing but itself. */
const RING_BODY = '{"ring":1}';

/**
 * The most short polls one drainRings makes (SQS_MAX_BATCH_ENTRIES rings each): a drain after an
 * outage takes at most 100 rings, and the next wake that finds nothing drains again.
 */
const MAX_DRAIN_RECEIVES = 10;

/** How SqsDeliveryQueue names, makes and reaches the doorbell queues. */
export interface SqsDeliveryQueueOptions {
  /** The deployment's queue-name prefix (`ackline-<stage>--`, see resources.ts queuePrefix). */
  readonly queuePrefix: string;
  /** The longest delay one ring carries (default 900 s, SQS's). */
  readonly maxDelaySeconds?: number;
  /** The queues' attributes (default subscriptionQueueTemplate). */
  readonly template?: QueueDefinition;
  /** Tags every queue gets at CreateQueue (default none; the functions pass runTimeQueueTags). */
  readonly tags?: Record<string, string>;
  /** How long a call keeps trying while SQS says a queue does not exist (default NEW_QUEUE_RETRY). */
  readonly newQueueRetry?: NewQueueRetry;
}

/**
 * Subscription doorbell queues on SQS: `<prefix>s-<cursorId>` plus `-dlq`, created at run time
 * from the subscription queue template. Queue URLs are resolved once per process and cached
 * (they never change for a name). SQS may answer QueueDoesNotExist for a queue created a moment
 * ago (see NewQueueRetry): every call is tried again within NEW_QUEUE_RETRY's bound, and only
 * then is the queue taken as deleted with its subscription (a NotFoundError, 404).
 */
export class SqsDeliveryQueue implements DeliveryQueue {
  readonly maxDelaySeconds: number;
  private readonly urls = new Map<string, string>();
  private readonly queuePrefix: string;
  private readonly template: QueueDefinition;
  private readonly tags: Record<string, string> | undefined;
  private readonly retry: NewQueueRetry;

  constructor(
    private readonly client: SQSClient,
    options: SqsDeliveryQueueOptions,
  ) {
    this.queuePrefix = options.queuePrefix;
    this.maxDelaySeconds = options.maxDelaySeconds ?? 900;
    this.template = options.template ?? subscriptionQueueTemplate;
    this.tags = options.tags;
    this.retry = options.newQueueRetry ?? NEW_QUEUE_RETRY;
  }

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
      newQueueRetry: this.retry,
      ...(this.tags ? { tags: this.tags } : {}),
    });
    this.urls.set(this.queueName(queue), url);
  }

  /**
   * Deletes the queue and its dead-letter queue. A name that does not resolve is taken as deleted
   * already (no retry: a resumed deletion job deletes again); a URL this process holds (it created
   * or used the queue) is deleted with the new-queue retry, and taken as deleted after the last.
   */
  async delete(queue: SubscriptionQueue): Promise<void> {
    for (const name of [this.queueName(queue), this.deadLetterName(queue)]) {
      const cached = this.urls.get(name);
      try {
        if (cached) {
          await retryWhileQueueMissing(
            () => this.client.send(new DeleteQueueCommand({ QueueUrl: cached })),
            this.retry,
          );
        } else {
          const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: name }));
          await this.client.send(new DeleteQueueCommand({ QueueUrl }));
        }
      } catch (error) {
        if (!(error instanceof QueueDoesNotExist)) throw error;
      }
      this.urls.delete(name);
    }
  }

  async deadLetterCount(queue: SubscriptionQueue): Promise<number> {
    const name = this.deadLetterName(queue);
    try {
      return await this.countOf(await this.urlOf(name), [
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
    await this.onQueue(queue, (url) =>
      this.client.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: RING_BODY,
          DelaySeconds: Math.min(this.maxDelaySeconds, Math.max(0, Math.ceil(delaySeconds))),
        }),
      ),
    );
  }

  /**
   * A long poll for one ring (local-aws-sqs holds a long poll for more until the batch is full),
   * then a short poll for the others, all deleted: rings carry nothing. An empty short poll here
   * decides nothing: SQS samples only some of its servers then.
   */
  async waitForRing(queue: SubscriptionQueue, waitMs: number): Promise<boolean> {
    const waitSeconds = Math.min(20, Math.max(0, Math.floor(waitMs / 1000)));
    return this.onQueue(queue, async (url) => {
      let first = await this.receive(url, 1, waitSeconds);
      if (first.length === 0 && waitSeconds === 0 && waitMs > 0) {
        // Under a second: SQS long polls in whole seconds, so wait here and look once more.
        await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, 1_000)));
        first = await this.receive(url, 1, 0);
      }
      if (first.length === 0) return false;
      await this.remove(url, [...first, ...(await this.receive(url, SQS_MAX_BATCH_ENTRIES, 0))]);
      return true;
    });
  }

  /**
   * Short polls of SQS_MAX_BATCH_ENTRIES, each batch deleted, until one comes back empty or after
   * MAX_DRAIN_RECEIVES. A short poll samples only some SQS servers, so rings may remain: a drain
   * takes rings that are there, it never shows that none are.
   */
  async drainRings(queue: SubscriptionQueue): Promise<number> {
    return this.onQueue(queue, async (url) => {
      let drained = 0;
      for (let receives = 0; receives < MAX_DRAIN_RECEIVES; receives++) {
        const rings = await this.receive(url, SQS_MAX_BATCH_ENTRIES, 0);
        if (rings.length === 0) break;
        await this.remove(url, rings);
        drained += rings.length;
      }
      return drained;
    });
  }

  private async receive(url: string, max: number, waitSeconds: number): Promise<Message[]> {
    const { Messages = [] } = await this.client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: max,
        VisibilityTimeout: 30,
        WaitTimeSeconds: waitSeconds,
      }),
    );
    return Messages;
  }

  /** Deletes received rings, SQS_MAX_BATCH_ENTRIES per DeleteMessageBatch. */
  private async remove(url: string, messages: readonly Message[]): Promise<void> {
    const receipts = messages.flatMap((message) => message.ReceiptHandle ?? []);
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

  /**
   * `call` on the queue's URL, tried again (URL resolved anew) while SQS answers QueueDoesNotExist,
   * within the new-queue retry's bound; after the last attempt the queue is taken as deleted.
   * @throws NotFoundError when the queue still does not exist after the last attempt.
   */
  private async onQueue<T>(queue: SubscriptionQueue, call: (url: string) => Promise<T>): Promise<T> {
    const name = this.queueName(queue);
    try {
      return await retryWhileQueueMissing(async (attempt) => {
        if (attempt > 1) this.urls.delete(name);
        return call(await this.urlOf(name));
      }, this.retry);
    } catch (error) {
      if (error instanceof QueueDoesNotExist) {
        this.urls.delete(name);
        throw gone(name, error);
      }
      throw error;
    }
  }

  /** The URL of queue `name`, cached. @throws QueueDoesNotExist */
  private async urlOf(name: string): Promise<string> {
    const cached = this.urls.get(name);
    if (cached) return cached;
    const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: name }));
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
