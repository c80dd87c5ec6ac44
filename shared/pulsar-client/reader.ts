import { parseTopic } from '../client/admin-paths.ts';
import { type Consumer as AcklineConsumer, MAX_RECEIVER_QUEUE_SIZE } from '../client/consumer.ts';
import type { Message as AcklineMessage } from '../client/message.ts';
import { needsBinaryProtocol } from './binary-protocol.ts';
import { type CompatContext, checkNamespaceExists, resultOf } from './compat-context.ts';
import { IncomingMessages } from './incoming-messages.ts';
import { describeError } from './log.ts';
import { Message } from './message.ts';
import { fieldsOf, isEarliest, isLatest, MessageId, toAckline } from './message-id.ts';
import { ReaderPositions, reportedPositions } from './reader-positions.ts';
import { type ConsumerCryptoFailureAction, LogLevel } from './types.ts';

export interface ReaderConfig {
  topic: string;
  startMessageId: MessageId;
  receiverQueueSize?: number;
  readerName?: string;
  subscriptionRolePrefix?: string;
  readCompacted?: boolean;
  listener?: (message: Message, reader: Reader) => void;
  privateKeyPath?: string;
  cryptoFailureAction?: ConsumerCryptoFailureAction;
}

const FILE = 'reader.ts';
type ResetTarget = number | 'earliest' | 'latest' | { ledgerId: string; entryId: string; isExcluded: true };
/** How often an open reader asks the server for its topic's last message (`hasNext()`'s lag). */
export const READER_REFRESH_MS = 1_000;

interface ReaderInit {
  readonly context: CompatContext;
  readonly config: ReaderConfig;
  readonly topic: string;
  readonly subscription: string;
  readonly source: AcklineConsumer;
}

/**
 * Creates a compat reader: an Exclusive subscription of its own (`<subscriptionRolePrefix or
 * 'reader'>-<random>`), positioned at `startMessageId` (exclusive, as pulsar-client's readers) and
 * deleted by `close()`, as Pulsar's non-durable reader subscription.
 */
export async function createReader(context: CompatContext, config: ReaderConfig): Promise<Reader> {
  if (
    config === null ||
    typeof config !== 'object' ||
    typeof config.topic !== 'string' ||
    config.topic === ''
  ) {
    throw new Error('Topic is required and must be specified as a string when creating reader');
  }
  if (!(config.startMessageId instanceof MessageId)) {
    throw new Error(
      'StartMessageId is required and must be specified as a MessageId object when creating reader',
    );
  }
  const failed = 'Failed to create reader';
  if (config.privateKeyPath !== undefined) throw needsBinaryProtocol(`${failed}: end-to-end encryption`);
  let parts: ReturnType<typeof parseTopic>;
  try {
    parts = parseTopic(config.topic);
  } catch (error) {
    throw new Error(`${failed}: InvalidTopicName`, { cause: error });
  }
  const topic = `${parts.domain}://${parts.tenant}/${parts.namespace}/${parts.localName}`;
  await checkNamespaceExists(context, parts, failed);
  const subscription = `${config.subscriptionRolePrefix ?? 'reader'}-${globalThis.crypto.randomUUID().slice(0, 13).replace('-', '')}`;
  let source: AcklineConsumer;
  try {
    source = await context.sdk
      .newConsumer()
      .topic(topic)
      .subscriptionName(subscription)
      .subscriptionType('Exclusive')
      .subscriptionInitialPosition(isLatest(config.startMessageId) ? 'Latest' : 'Earliest')
      .receiverQueueSize(Math.min(config.receiverQueueSize ?? 1000, MAX_RECEIVER_QUEUE_SIZE))
      .subscribe();
  } catch (error) {
    throw new Error(`${failed}: ${resultOf(error)}`, { cause: error });
  }
  const reader = new Reader({ context, config, topic, subscription, source });
  try {
    await reader.start(config.startMessageId);
  } catch (error) {
    await reader.close();
    throw new Error(`${failed}: ${resultOf(error)}`, { cause: error });
  }
  return reader;
}

/**
 * pulsar-client's `Reader`. `hasNext()` answers at once from what the reader knows (see
 * docs/from-pulsar-client.md): the topic's last message as the server reported it at creation,
 * after each `readNext()` and every second, and as this client's producers published it.
 *
 * @example
 * const reader = await client.createReader({ topic: 'my-topic', startMessageId: MessageId.earliest() });
 * while (reader.hasNext()) console.log((await reader.readNext()).getData().toString());
 */
export class Reader {
  private readonly init: ReaderInit;
  private readonly incoming: IncomingMessages;
  private readonly positions = new ReaderPositions();
  private refreshing: Promise<void> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  /** The newest id read and not yet acknowledged, and the acknowledgement in flight. */
  private toAck: MessageId | undefined;
  private acking: Promise<void> | undefined;
  private listening: Promise<void> | undefined;
  private lost = false;
  private closing: Promise<null> | undefined;

  /** @internal use `client.createReader(config)`. */
  constructor(init?: ReaderInit) {
    if (init === undefined) throw new Error('Use client.createReader(config) to create a Reader');
    this.init = init;
    this.incoming = new IncomingMessages({
      onLost: (error) => {
        this.lost = true;
        init.context.logger.error(FILE, `The reader is no longer connected: ${error.message}`);
        this.incoming.close(new Error(`Failed to receive message: AlreadyClosed (${error.message})`));
      },
      onReceiveFailed: (reason) => init.context.logger.log(2, FILE, `read failed, retrying: ${reason}`),
    });
    this.incoming.add(init.source);
    init.context.open.add(this);
  }

  /** @internal positions the reader and starts its refresh and listener. */
  async start(startMessageId: MessageId): Promise<void> {
    await this.refresh();
    this.learnPublished();
    if (isLatest(startMessageId)) this.positions.readAllKnown();
    else if (!isEarliest(startMessageId)) await this.seekAfter(startMessageId);
    this.refreshTimer = setInterval(() => void this.refresh(), READER_REFRESH_MS);
    this.refreshTimer.unref();
    this.startListener();
  }

  /**
   * The next message; with a timeout, rejects with `Failed to receive message: TimeOut` when none came.
   */
  async readNext(timeout?: number): Promise<Message> {
    if (this.init.config.listener) {
      throw new Error('Failed to receive message: InvalidConfiguration (the reader has a listener)');
    }
    return this.read(await this.incoming.next(timeout).then((d) => d.message));
  }

  /** Whether a message is there to read, from what the reader knows now (no request). */
  hasNext(): boolean {
    this.learnPublished();
    return this.positions.hasUnread();
  }

  /** True from a successful create until `close()` or until the server dropped the reader. */
  isConnected(): boolean {
    return this.closing === undefined && !this.lost;
  }

  /** Reads next the message after `messageId` (or the first: `earliest()`, or none yet: `latest()`). */
  async seek(messageId: MessageId): Promise<null> {
    try {
      if (isEarliest(messageId) || isLatest(messageId)) {
        await this.resetTo(isEarliest(messageId) ? 'earliest' : 'latest');
      } else {
        await this.seekAfter(messageId);
      }
    } catch (error) {
      throw new Error(`Failed to seek message by id: ${resultOf(error)}`, { cause: error });
    }
    return null;
  }

  /** Reads next the first message published at or after `timestamp` (epoch ms). */
  async seekTimestamp(timestamp: number): Promise<null> {
    try {
      await this.resetTo(timestamp);
    } catch (error) {
      throw new Error(`Failed to seek message by timestamp: ${resultOf(error)}`, { cause: error });
    }
    return null;
  }

  /** Closes the reader and deletes its subscription. */
  close(): Promise<null> {
    this.closing ??= (async () => {
      clearInterval(this.refreshTimer);
      this.incoming.close(new Error('Failed to receive message: AlreadyClosed'));
      const { context, subscription, source } = this.init;
      context.open.delete(this);
      // The cumulative ack in flight first: the server refuses it once the subscription is deleted.
      await this.acking;
      // Deletes the reader's subscription (the consume permission suffices) and closes its consumer.
      await source.unsubscribe().catch(async (error: unknown) => {
        context.logger.log(
          2,
          FILE,
          `Could not delete the reader's subscription ${subscription}: ${describeError(error)}`,
        );
        await source.close().catch(() => undefined);
      });
      await this.listening;
      return null;
    })();
    return this.closing;
  }

  private read(delivered: AcklineMessage): Message {
    const message = Message.fromAckline(delivered, delivered.getProducerName() ?? '');
    const { ledgerId, entryId, partition } = fieldsOf(message.getMessageId());
    this.positions.readAfter(partition, [ledgerId, entryId]);
    this.acknowledgeUpTo(message.getMessageId());
    void this.refresh();
    return message;
  }

  /** The subscription is the reader's alone: acknowledging what it read keeps nothing pending. */
  private acknowledgeUpTo(messageId: MessageId): void {
    this.toAck = messageId;
    if (this.acking) return;
    this.acking = (async () => {
      while (this.toAck && this.closing === undefined) {
        const id = this.toAck;
        this.toAck = undefined;
        await this.init.source.acknowledgeCumulative(toAckline(id)).catch((error: unknown) => {
          // Refused because close() began: the subscription goes anyway (DEBUG, not a WARN).
          const level = this.closing === undefined ? LogLevel.WARN : LogLevel.DEBUG;
          this.init.context.logger.log(level, FILE, `ack failed: ${describeError(error)}`);
        });
      }
    })().finally(() => {
      this.acking = undefined;
    });
  }

  private async seekAfter(messageId: MessageId): Promise<void> {
    const { ledgerId, entryId, partition } = fieldsOf(messageId);
    await this.reset({ ledgerId: ledgerId.toString(), entryId: entryId.toString(), isExcluded: true });
    this.positions.readAfter(partition, [ledgerId, entryId]);
  }

  /** Resets to a time or an end, learning first (a dry run) where each partition's cursor lands. */
  private async resetTo(to: number | 'earliest' | 'latest'): Promise<void> {
    const { context, topic, subscription } = this.init;
    const report = await context.sdk.admin().topics().resetCursor(topic, subscription, to, { dryRun: true });
    await this.reset(to);
    this.positions.restart();
    for (const [partition, position] of reportedPositions(report, subscription)) {
      this.positions.readAfter(partition, position);
    }
  }

  private async reset(to: ResetTarget): Promise<void> {
    const { context, topic, subscription, source } = this.init;
    await context.sdk.admin().topics().resetCursor(topic, subscription, to);
    await source.redeliverUnacknowledgedMessages();
    this.incoming.clear();
  }

  /** Asks the server for the topic's last message (a dry-run reset to latest); one at a time. */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const { context, topic, subscription } = this.init;
      try {
        const report = await context.sdk
          .admin()
          .topics()
          .resetCursor(topic, subscription, 'latest', { dryRun: true });
        for (const [partition, position] of reportedPositions(report, subscription)) {
          this.positions.known(partition, position);
        }
      } catch (error) {
        if (this.closing === undefined)
          context.logger.log(2, FILE, `hasNext refresh failed: ${describeError(error)}`);
      }
      this.learnPublished();
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** What this client's producers published to the topic. */
  private learnPublished(): void {
    for (const [key, position] of this.init.context.lastPublished) {
      const [published, partition] = key.split('|');
      if (published === this.init.topic) this.positions.known(Number(partition), position);
    }
  }

  private startListener(): void {
    const { listener } = this.init.config;
    if (listener === undefined) return;
    this.listening = (async () => {
      while (this.closing === undefined && !this.lost) {
        let message: Message;
        try {
          message = this.read((await this.incoming.next()).message);
        } catch {
          return;
        }
        try {
          await listener(message, this);
        } catch (error) {
          this.init.context.logger.error(
            FILE,
            `Message listener error in processing message: ${describeError(error)}`,
          );
        }
      }
    })();
  }
}
