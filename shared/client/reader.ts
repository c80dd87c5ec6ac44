import { MessageId } from '../domain/message-id.ts';
import type { Consumer, SeekTarget } from './consumer.ts';
import type { ConsumerBuilder } from './consumer-builder.ts';
import type { DataHttp } from './data-http.ts';
import { AcklineClientArgumentError, AcklineClientError } from './errors.ts';
import type { Message } from './message.ts';

/**
 * How long hasNext() polls for a message it does not hold: at least a second, as a short SQS poll
 * may miss a ring that is there (docs/design/aws-limits.md).
 */
const HAS_NEXT_WAIT_MS = 1_000;

/** Where a reader starts: a message, or an edge of the topic. */
export type ReaderStart = MessageId | 'earliest' | 'latest';

/** What a {@link ReaderBuilder} needs from its client. */
export interface ReaderBuilderContext {
  readonly http: DataHttp;
  /** A consumer builder of the same client. */
  readonly newConsumer: () => ConsumerBuilder;
}

/**
 * Configures a {@link Reader}, as Pulsar's `ReaderBuilder`: `topic` and `startMessageId` are
 * required.
 *
 * @example
 * const reader = await client.newReader().topic('my-tenant/my-ns/orders').startMessageId('earliest').create();
 * while (await reader.hasNext()) console.log((await reader.readNext()).getValue());
 * await reader.close();
 */
export class ReaderBuilder {
  private topicName: string | undefined;
  private start: ReaderStart | undefined;
  private inclusive = false;
  private name: string | undefined;
  private prefix = 'reader';
  private queueSize: number | undefined;

  /** Use `client.newReader()`. */
  constructor(private readonly context: ReaderBuilderContext) {}

  /**
   * The topic (one topic; a partitioned one is read across its partitions).
   * @example client.newReader().topic('my-tenant/my-ns/orders');
   */
  topic(topic: string): this {
    this.topicName = topic;
    return this;
  }

  /**
   * Where to start: `'earliest'`, `'latest'` (only what is published from now on), or after a
   * message (at it with {@link startMessageIdInclusive}).
   * @example client.newReader().startMessageId(MessageId.parse('12:3:-1'));
   */
  startMessageId(start: ReaderStart): this {
    this.start = start;
    return this;
  }

  /**
   * Starts at the start message itself rather than after it (Pulsar's `startMessageIdInclusive`).
   * @example client.newReader().startMessageId(id).startMessageIdInclusive();
   */
  startMessageIdInclusive(): this {
    this.inclusive = true;
    return this;
  }

  /**
   * The reader's subscription name (default: `<prefix>-<10 random hex digits>`, as Pulsar's).
   * @example client.newReader().readerName('audit-reader');
   */
  readerName(name: string): this {
    this.name = name;
    return this;
  }

  /**
   * The prefix of the generated subscription name (default `reader`, Pulsar's `subscriptionRolePrefix`).
   * @example client.newReader().subscriptionRolePrefix('audit');
   */
  subscriptionRolePrefix(prefix: string): this {
    this.prefix = prefix;
    return this;
  }

  /**
   * As the consumer's receiverQueueSize (default 1,000).
   * @example client.newReader().receiverQueueSize(100);
   */
  receiverQueueSize(size: number): this {
    this.queueSize = size;
    return this;
  }

  /**
   * Subscribes the reader's subscription (Exclusive) and positions it at the start.
   * @throws AcklineClientArgumentError (rejects) without a topic or a start.
   * @example const reader = await client.newReader().topic('t/ns/orders').startMessageId('earliest').create();
   */
  async create(): Promise<Reader> {
    if (this.topicName === undefined)
      throw new AcklineClientArgumentError('Cannot create a reader: topic is required');
    const start = this.start;
    if (start === undefined) {
      throw new AcklineClientArgumentError('Cannot create a reader: startMessageId is required');
    }
    if (start !== 'earliest' && start !== 'latest' && !(start instanceof MessageId)) {
      throw new AcklineClientArgumentError(
        `Invalid startMessageId '${String(start)}': a MessageId, 'earliest' or 'latest'`,
      );
    }
    // Web Crypto (a global in Node 20+): the SDK imports nothing but node:timers/promises.
    const random = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(5))).toString('hex');
    const subscription = this.name ?? `${this.prefix}-${random}`;
    const builder = this.context
      .newConsumer()
      .topic(this.topicName)
      .subscriptionName(subscription)
      .subscriptionType('Exclusive')
      .subscriptionInitialPosition(start === 'earliest' ? 'Earliest' : 'Latest');
    if (this.queueSize !== undefined) builder.receiverQueueSize(this.queueSize);
    const consumer = await builder.subscribe();
    if (start instanceof MessageId) {
      try {
        await consumer.seek(start);
      } catch (error) {
        await consumer.unsubscribe().catch(() => consumer.close());
        throw error;
      }
    }
    return new Reader(consumer, start instanceof MessageId && !this.inclusive ? start : undefined);
  }
}

/**
 * Pulsar's `Reader`: reads a topic in order from a chosen message, without acknowledging. ackline
 * has no non-durable cursor: the reader holds a subscription of its own (Exclusive, named
 * `reader-<hex>` unless named), which it acknowledges cumulatively as it reads (so the server's
 * per-consumer cap of unacknowledged messages never stalls it) and deletes on `close()`. A process
 * that dies without closing leaves the subscription: delete it (`admin.topics().deleteSubscription`),
 * or name the reader to take it up again.
 *
 * @example
 * const reader = await client.newReader().topic('my-tenant/my-ns/orders').startMessageId('earliest').create();
 * const message = await reader.readNext(1_000);
 * await reader.close();
 */
export class Reader {
  private peeked: Message | undefined;
  /** The newest message read and not yet acknowledged; one cumulative ack in flight at a time. */
  private toAcknowledge: Message | undefined;
  private acknowledging: Promise<void> | undefined;

  /** Use `client.newReader()...create()`. */
  constructor(
    private readonly consumer: Consumer,
    /** A start message read past (exclusive start): dropped when it comes. */
    private skip: MessageId | undefined,
  ) {}

  /**
   * The topic's full name.
   * @example reader.getTopic();
   */
  getTopic(): string {
    return this.consumer.getTopic();
  }

  /**
   * The reader's subscription (generated unless named).
   * @example reader.getSubscription(); // 'reader-5f3a9c0e1b'
   */
  getSubscription(): string {
    return this.consumer.getSubscription();
  }

  /**
   * The next message; waits for one. With `timeoutMs`, undefined when none came in time.
   * @example const message = await reader.readNext();
   */
  readNext(): Promise<Message>;
  readNext(timeoutMs: number): Promise<Message | undefined>;
  async readNext(timeoutMs?: number): Promise<Message | undefined> {
    const peeked = this.peeked;
    if (peeked !== undefined) {
      this.peeked = undefined;
      return this.read(peeked);
    }
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (;;) {
      const left = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
      const message = left === undefined ? await this.consumer.receive() : await this.consumer.receive(left);
      if (message === undefined) return undefined;
      if (!this.skipped(message)) return this.read(message);
      if (left === 0) return undefined;
    }
  }

  /**
   * Whether a message is there to read: one kept, or one a poll brings within HAS_NEXT_WAIT_MS (1 s,
   * kept for the next readNext). Answers false after that second when none is there; a message
   * published during it or just before may be answered false once (the server's poll is a short one).
   * @example while (await reader.hasNext()) handle(await reader.readNext());
   */
  async hasNext(): Promise<boolean> {
    while (this.peeked === undefined) {
      const message = await this.consumer.receive(HAS_NEXT_WAIT_MS);
      if (message === undefined) return false;
      if (!this.skipped(message)) this.peeked = message;
    }
    return true;
  }

  /**
   * Moves the reader to a message (it is read next) or an edge.
   * @example await reader.seek('earliest');
   */
  async seek(target: SeekTarget): Promise<void> {
    this.peeked = undefined;
    this.skip = undefined;
    await this.consumer.seek(target);
  }

  /**
   * Moves the reader to the first message published at or after `timestampMs`.
   * @example await reader.seekTimestamp(Date.now() - 60_000);
   */
  async seekTimestamp(timestampMs: number): Promise<void> {
    this.peeked = undefined;
    this.skip = undefined;
    await this.consumer.seekTimestamp(timestampMs);
  }

  /**
   * Closes the reader and deletes its subscription (a subscription another consumer joined is
   * left, and the reader only closes).
   * @example await reader.close();
   */
  async close(): Promise<void> {
    await this.acknowledging?.catch(() => undefined);
    try {
      await this.consumer.unsubscribe();
    } catch (error) {
      if (!(error instanceof AcklineClientError)) throw error;
      await this.consumer.close();
    }
  }

  /** The exclusive start message, the first time it comes. */
  private skipped(message: Message): boolean {
    if (this.skip === undefined || !message.getMessageId().equals(this.skip)) return false;
    this.skip = undefined;
    this.acknowledgeLater(message);
    return true;
  }

  private read(message: Message): Message {
    this.acknowledgeLater(message);
    return message;
  }

  private acknowledgeLater(message: Message): void {
    this.toAcknowledge = message;
    if (this.acknowledging) return;
    this.acknowledging = (async () => {
      while (this.toAcknowledge !== undefined) {
        const next = this.toAcknowledge;
        this.toAcknowledge = undefined;
        await this.consumer.acknowledgeCumulative(next).catch(() => undefined);
      }
    })().finally(() => {
      this.acknowledging = undefined;
    });
  }
}
