import type { MessageId } from '../domain/message-id.ts';
import { parsePublishResults } from './data-answers.ts';
import { type DataHttp, type DataTopic, producePath } from './data-http.ts';
import {
  AcklineClientClosedError,
  AcklineClientError,
  AcklineProducerFencedError,
  AcklinePublishError,
} from './errors.ts';
import {
  type MessageSink,
  type MessageValue,
  type ProduceMessage,
  TypedMessageBuilder,
} from './message-builder.ts';
import { conflictOf, type ProducerAccessMode, type ProducerLease } from './producer-access.ts';

/** How a {@link Producer} batches; see `ProducerBuilder`. */
export interface BatchingSettings {
  readonly enabled: boolean;
  readonly maxPublishDelayMs: number;
  readonly maxMessages: number;
  readonly maxBytes: number;
}

/** Everything a {@link Producer} is built with. */
export interface ProducerSettings {
  readonly http: DataHttp;
  readonly topic: DataTopic;
  readonly batching: BatchingSettings;
  /** The producer's name; with one, messages carry sequence ids. */
  readonly producerName: string | undefined;
  /** The sequence id the producer's numbering continues after (-1: starts at 0). */
  readonly lastSequenceId: number;
  /** Called once the producer has closed (the client stops tracking it). */
  readonly onClose: (producer: Producer) => void;
  /** Its access mode (`ProducerBuilder.accessMode`); undefined: Shared, never registered. */
  readonly accessMode?: ProducerAccessMode;
  /** An exclusive producer's hold on the topic. */
  readonly lease?: ProducerLease;
}

interface PendingMessage {
  readonly message: ProduceMessage;
  readonly bytes: number;
  readonly resolve: (messageId: MessageId) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Publishes to one topic through the data API (`POST /topics/{domain}/{tenant}/{namespace}/{topic}`,
 * Pulsar's REST produce), as Pulsar's `Producer<String>`. A message is stored (durably) when its
 * `send()` resolves. Holds no connection; with batching, messages sent within the batching delay
 * share one request (one Lambda invocation, one ledger append per partition).
 *
 * @example
 * const producer = await client.newProducer().topic('my-tenant/my-ns/orders').create();
 * const id = await producer.send('order 1');
 * await producer.newMessage().key('customer-7').value('order 2').deliverAfter(60_000).send();
 * await producer.close();
 */
export class Producer {
  private batch: PendingMessage[] = [];
  private batchBytes = 0;
  private batchTimer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private closing: Promise<void> | undefined;
  private readonly sink: MessageSink = { enqueue: (message, flushNow) => this.enqueue(message, flushNow) };
  /** The sequence id given to the last message sent (named producers only). */
  private lastSequenceIdSent: number;
  /** The highest sequence id the server acknowledged (named producers only). */
  private lastSequenceIdPublished: number;

  /** Use `client.newProducer()...create()`. */
  constructor(private readonly settings: ProducerSettings) {
    this.lastSequenceIdSent = settings.lastSequenceId;
    this.lastSequenceIdPublished = settings.lastSequenceId;
  }

  /**
   * The producer's name (set with `ProducerBuilder.producerName`), or undefined: its messages then
   * carry the publishing role's name.
   * @example producer.getProducerName(); // 'orders-importer'
   */
  getProducerName(): string | undefined {
    return this.settings.producerName;
  }

  /**
   * Pulsar's `getLastSequenceId()`: the highest sequence id the server acknowledged for this named
   * producer, starting from what the server had stored for the name when the producer was created
   * (-1: none). A producer that restarts continues after it, so deduplication drops what it resends.
   * @example const resumeAfter = producer.getLastSequenceId();
   */
  getLastSequenceId(): number {
    return this.lastSequenceIdPublished;
  }

  /**
   * The topic's full name.
   * @example producer.getTopic(); // 'persistent://my-tenant/my-ns/orders'
   */
  getTopic(): string {
    return this.settings.topic.name;
  }

  /**
   * Starts a message with a key, properties, event time or delivery delay.
   * @example await producer.newMessage().key('customer-7').value('order 1').property('traceId', 'abc').send();
   */
  newMessage(): TypedMessageBuilder {
    return new TypedMessageBuilder(this.sink);
  }

  /**
   * Sends a message made of `value` only, and any batched before it, now.
   * @example const id = await producer.send('order 1'); id.toString(); // '12:3:-1'
   */
  async send(value: MessageValue): Promise<MessageId> {
    return this.newMessage().value(value).send();
  }

  /**
   * Sends a message made of `value` only with the next batch (see {@link TypedMessageBuilder.sendAsync}).
   * @example const ids = await Promise.all(['a', 'b', 'c'].map((v) => producer.sendAsync(v))); // one request
   */
  async sendAsync(value: MessageValue): Promise<MessageId> {
    return this.newMessage().value(value).sendAsync();
  }

  /**
   * Sends the pending batch now and waits until every message sent so far is answered. Never
   * rejects: each message's own promise carries its outcome.
   * @example producer.sendAsync('a'); await producer.flush();
   */
  async flush(): Promise<void> {
    this.sendBatch();
    await Promise.all(this.inFlight);
  }

  /**
   * Refuses new messages, sends the pending batch and waits for every message sent so far to be
   * answered (Pulsar's `close()`). Closing again resolves at once.
   * @example await producer.close();
   */
  async close(): Promise<void> {
    this.closing ??= this.flush()
      .then(() => this.settings.lease?.release())
      .finally(() => this.settings.onClose(this));
    return this.closing;
  }

  /**
   * The access mode it was created with (Pulsar's `ProducerAccessMode`; `Shared` by default).
   * @example producer.getAccessMode(); // 'Exclusive'
   */
  getAccessMode(): ProducerAccessMode {
    return this.settings.accessMode ?? 'Shared';
  }

  /**
   * False once the server fenced this exclusive producer (another producer took the topic): every
   * send then rejects with AcklineProducerFencedError.
   * @example if (!producer.isConnected()) await producer.close();
   */
  isConnected(): boolean {
    return this.closing === undefined && this.settings.lease?.fenced === undefined;
  }

  private enqueue(unnumbered: ProduceMessage, flushNow: boolean): Promise<MessageId> {
    if (this.closing) {
      return Promise.reject(new AcklineClientClosedError(`Producer for ${this.getTopic()} is closed`));
    }
    const fenced = this.settings.lease?.fenced;
    if (fenced) return Promise.reject(fenced);
    const message = this.numbered(unnumbered);
    const { batching } = this.settings;
    const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
    const sent = new Promise<MessageId>((resolve, reject) => {
      const pending: PendingMessage = { message, bytes, resolve, reject };
      if (!batching.enabled) {
        this.publish([pending]);
        return;
      }
      // A message that would overflow the batch goes in the next one.
      if (
        this.batch.length > 0 &&
        (this.batch.length >= batching.maxMessages || this.batchBytes + bytes > batching.maxBytes)
      ) {
        this.sendBatch();
      }
      this.batch.push(pending);
      this.batchBytes += bytes;
      if (flushNow || this.batch.length >= batching.maxMessages || this.batchBytes >= batching.maxBytes) {
        this.sendBatch();
      } else {
        this.batchTimer ??= setTimeout(() => this.sendBatch(), batching.maxPublishDelayMs);
      }
    });
    return sent;
  }

  /** A named producer's message gets the next sequence id, unless it set its own (Pulsar's numbering). */
  private numbered(message: ProduceMessage): ProduceMessage {
    if (this.settings.producerName === undefined) return message;
    const sequenceId = message.sequenceId ?? this.lastSequenceIdSent + 1;
    this.lastSequenceIdSent = sequenceId;
    return { ...message, sequenceId };
  }

  private sendBatch(): void {
    clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    const batch = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    if (batch.length > 0) this.publish(batch);
  }

  /**
   * A publish refused because of the topic's exclusive producer (409) as Pulsar names it: this
   * exclusive producer fenced (and fenced from now on), or a Shared one busy. Other errors as they are.
   */
  private accessRefusal(error: unknown): unknown {
    if (!(error instanceof AcklineClientError) || error.statusCode !== 409) return error;
    const { lease } = this.settings;
    const refusal = conflictOf(error, lease !== undefined);
    if (lease && refusal instanceof AcklineProducerFencedError) lease.fence(refusal);
    return refusal;
  }

  /** One produce request; settles every message's promise and never rejects itself. */
  private publish(batch: readonly PendingMessage[]): void {
    const { lease } = this.settings;
    const request = this.settings.http
      .json({
        method: 'POST',
        path: producePath(this.settings.topic),
        body: {
          producerName: this.settings.producerName,
          ...(lease ? { producerId: lease.producerId } : {}),
          messages: batch.map((pending) => pending.message),
        },
      })
      .then((body) => {
        lease?.renewed();
        parsePublishResults(body, batch.length).forEach((outcome, index) => {
          const pending = batch[index]!;
          if ('messageId' in outcome) {
            const { sequenceId } = pending.message;
            if (sequenceId !== undefined && sequenceId > this.lastSequenceIdPublished) {
              this.lastSequenceIdPublished = sequenceId;
            }
            pending.resolve(outcome.messageId);
          } else pending.reject(new AcklinePublishError(outcome.errorCode, outcome.reason));
        });
      })
      .catch((error: unknown) => {
        const refusal = this.accessRefusal(error);
        for (const pending of batch) pending.reject(refusal);
      })
      .finally(() => this.inFlight.delete(request));
    this.inFlight.add(request);
  }
}
