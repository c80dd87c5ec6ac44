import type { ClientClock } from './client-clock.ts';
import { parseLastSequenceId } from './data-answers.ts';
import { type DataHttp, dataTopic, lastSequenceIdPath } from './data-http.ts';
import { AcklineClientArgumentError } from './errors.ts';
import { Producer } from './producer.ts';
import { type ProducerAccessMode, registerProducerAccess } from './producer-access.ts';

const ACCESS_MODES: readonly ProducerAccessMode[] = [
  'Shared',
  'Exclusive',
  'WaitForExclusive',
  'ExclusiveWithFencing',
];

/** What a {@link ProducerBuilder} needs from its client. */
export interface ProducerBuilderContext {
  readonly http: DataHttp;
  /** Times an exclusive producer's heartbeat and a WaitForExclusive producer's next attempt. */
  readonly clock: ClientClock;
  /** Throws when the client is closed. */
  checkOpen(): void;
  /** Tracks a created producer until it closes. */
  register(producer: Producer): void;
  unregister(producer: Producer): void;
}

/** The server's limit of messages per produce request. */
const MAX_MESSAGES_PER_REQUEST = 1000;

/**
 * Configures a {@link Producer}, as Pulsar's `ProducerBuilder`; `topic` is required. Batching is on,
 * with Pulsar's defaults: `sendAsync` messages sent within 1 ms go in one request of at most 1000
 * messages and 128 KiB (a single larger message goes alone); `send()` sends at once.
 *
 * @example
 * const producer = await client
 *   .newProducer()
 *   .topic('my-tenant/my-ns/orders')
 *   .batchingMaxPublishDelay(10)
 *   .create();
 */
export class ProducerBuilder {
  private topicName: string | undefined;
  private batchingEnabled = true;
  private maxPublishDelayMs = 1;
  private maxMessages = MAX_MESSAGES_PER_REQUEST;
  private maxBytes = 128 * 1024;
  private name: string | undefined;
  private initialSequence: number | undefined;
  private mode: ProducerAccessMode | undefined;

  /** Use `client.newProducer()`. */
  constructor(private readonly context: ProducerBuilderContext) {}

  /**
   * The topic: `persistent://tenant/ns/topic`, `tenant/ns/topic` or a bare `topic` (in
   * `public/default`). The server creates a missing topic on first publish, as Pulsar's
   * `allowAutoTopicCreation`.
   * @example client.newProducer().topic('persistent://my-tenant/my-ns/orders');
   */
  topic(topic: string): this {
    this.topicName = topic;
    return this;
  }

  /**
   * The producer's name (Pulsar's `producerName`), stored on every message it sends
   * (`message.getProducerName()`). A named producer numbers its messages with sequence ids, continuing
   * after the last one the server stored for the name; on a topic with deduplication on
   * (`brokerDeduplicationEnabled`), a message whose sequence id is not above it is acknowledged with
   * the stored MessageId and not stored again, so a retried send never stores twice. Without a name,
   * messages carry the publishing role's name and no sequence id.
   * @example client.newProducer().topic('t/ns/orders').producerName('orders-importer');
   */
  producerName(name: string): this {
    this.name = name;
    return this;
  }

  /**
   * The sequence id a named producer's numbering continues after, when the server has stored none
   * higher for its name (Pulsar's `initialSequenceId`; default -1: the first message is 0).
   * @example client.newProducer().topic('t/ns/orders').producerName('importer').initialSequenceId(999);
   */
  initialSequenceId(sequenceId: number): this {
    this.initialSequence = sequenceId;
    return this;
  }

  /**
   * Whether `sendAsync` messages are batched (default true); when false every message is one request.
   * @example client.newProducer().topic('t/ns/orders').enableBatching(false);
   */
  enableBatching(enabled: boolean): this {
    this.batchingEnabled = enabled;
    return this;
  }

  /**
   * How long a batch waits for more `sendAsync` messages (default 1 ms).
   * @example client.newProducer().topic('t/ns/orders').batchingMaxPublishDelay(10);
   */
  batchingMaxPublishDelay(delayMs: number): this {
    this.maxPublishDelayMs = delayMs;
    return this;
  }

  /**
   * The most messages in one request (1..1000, default 1000).
   * @example client.newProducer().topic('t/ns/orders').batchingMaxMessages(100);
   */
  batchingMaxMessages(maxMessages: number): this {
    this.maxMessages = maxMessages;
    return this;
  }

  /**
   * The most bytes of messages in one request (default 131072); keep well under the gateway's body
   * limit.
   * @example client.newProducer().topic('t/ns/orders').batchingMaxBytes(1024 * 1024);
   */
  batchingMaxBytes(maxBytes: number): this {
    this.maxBytes = maxBytes;
    return this;
  }

  /**
   * Pulsar's producer access mode: `Shared` (any number of producers), `Exclusive` (creating it fails
   * with AcklineProducerFencedError while another exclusive producer holds the topic),
   * `WaitForExclusive` (creating it waits until the topic is free), `ExclusiveWithFencing` (takes the
   * topic over: the producer it replaces is fenced, its later sends fail). An exclusive producer
   * holds the topic while it publishes or heartbeats (a lease of 30 s: a process that dies frees it
   * 30 s later) and until it closes. A Shared producer is refused (AcklineProducerBusyError) while
   * an exclusive producer holds the topic. Unset: Shared, and creating sends no registration.
   * @example const leader = await client.newProducer().topic('t/ns/log').accessMode('WaitForExclusive').create();
   */
  accessMode(mode: ProducerAccessMode): this {
    this.mode = mode;
    return this;
  }

  /**
   * Checks the settings and resolves to the producer. Sends nothing for an unnamed producer (the data
   * API is stateless); a named one first asks the server for the last sequence id stored for its
   * name (`GET /topics/{domain}/{tenant}/{ns}/{topic}/producers/{name}/lastSequenceId`); one with an
   * access mode then registers it (`POST /topics/{domain}/{tenant}/{ns}/{topic}/producers`).
   * @throws AcklineClientArgumentError (rejects) on a missing topic or an invalid batching setting;
   * AcklineProducerFencedError (Exclusive) or AcklineProducerBusyError (Shared) when an exclusive
   * producer holds the topic.
   * @example const producer = await client.newProducer().topic('my-tenant/my-ns/orders').create();
   */
  async create(): Promise<Producer> {
    this.context.checkOpen();
    if (this.topicName === undefined || this.topicName.length === 0) {
      throw new AcklineClientArgumentError('Cannot create a producer: topic is required');
    }
    const topic = dataTopic(this.topicName);
    checkInteger(this.maxPublishDelayMs, 'batchingMaxPublishDelay', 0, 60_000);
    checkInteger(this.maxMessages, 'batchingMaxMessages', 1, MAX_MESSAGES_PER_REQUEST);
    checkInteger(this.maxBytes, 'batchingMaxBytes', 1, Number.MAX_SAFE_INTEGER);
    if (this.name !== undefined && (typeof this.name !== 'string' || this.name.length === 0)) {
      throw new AcklineClientArgumentError('Invalid producerName: expected a non-empty string');
    }
    if (this.initialSequence !== undefined) {
      checkInteger(this.initialSequence, 'initialSequenceId', -1, Number.MAX_SAFE_INTEGER);
    }
    if (this.mode !== undefined && !ACCESS_MODES.includes(this.mode)) {
      throw new AcklineClientArgumentError(
        `Invalid accessMode '${String(this.mode)}': expected one of ${ACCESS_MODES.join(', ')}`,
      );
    }
    let lastSequenceId = this.initialSequence ?? -1;
    if (this.name !== undefined) {
      const stored = parseLastSequenceId(
        await this.context.http.json({ method: 'GET', path: lastSequenceIdPath(topic, this.name) }),
      );
      lastSequenceId = Math.max(lastSequenceId, stored);
    }
    const lease =
      this.mode === undefined
        ? undefined
        : await registerProducerAccess({
            http: this.context.http,
            clock: this.context.clock,
            topic,
            producerName: this.name,
            accessMode: this.mode,
          });
    const producer = new Producer({
      http: this.context.http,
      topic,
      batching: {
        enabled: this.batchingEnabled,
        maxPublishDelayMs: this.maxPublishDelayMs,
        maxMessages: this.maxMessages,
        maxBytes: this.maxBytes,
      },
      producerName: this.name,
      lastSequenceId,
      onClose: (closed) => this.context.unregister(closed),
      ...(this.mode ? { accessMode: this.mode } : {}),
      ...(lease ? { lease } : {}),
    });
    this.context.register(producer);
    return producer;
  }
}

function checkInteger(value: number, what: string, minimum: number, maximum: number): void {
  if (!Number.isSafeInteger(value) || value < minimum || value > maximum) {
    throw new AcklineClientArgumentError(
      `Invalid ${what} '${value}': expected an integer from ${minimum} to ${maximum}`,
    );
  }
}
