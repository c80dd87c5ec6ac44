import type { Producer as AcklineProducer } from '../client/producer.ts';
import { resultOf } from './compat-context.ts';
import { fromAckline, type MessageId } from './message-id.ts';
import { fillBuilder, type OutgoingMessage, routingKeyOf } from './outgoing-message.ts';

/** How a compat producer batches (pulsar-client's settings, with its defaults applied). */
export interface BatchSettings {
  readonly enabled: boolean;
  readonly maxPublishDelayMs: number;
  readonly maxMessages: number;
  readonly maxBytes: number;
  readonly keyBased: boolean;
}

/**
 * Payload bytes of one produce request: the SDK sends what it is given as one request, and a request
 * must stay under Lambda's 6 MB once JSON has escaped the payloads (up to 6 bytes for a control
 * character) and the proxy event escaped them again.
 */
const MAX_REQUEST_PAYLOAD_BYTES = 512 * 1024;

interface Pending {
  readonly message: OutgoingMessage;
  readonly resolve: (id: MessageId) => void;
  readonly reject: (error: Error) => void;
}

/**
 * The send queue of one target (a topic, or one partition of a partitioned topic): messages are
 * published in the order `send()` was called, one request at a time, so a producer's messages are
 * stored in its order as Pulsar's are. With batching, a batch is closed by its delay, its size or
 * `flush()`; without, whatever queued while a request was in flight goes in the next request (each
 * message is still its own entry: ackline stores no batch entries). Key-based batching orders a batch
 * by key, keys in the order of their first message (pulsar-client-cpp#546).
 */
export class PartitionPublisher {
  private readonly queue: Pending[] = [];
  private queuedBytes = 0;
  private ready = 0;
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sdk: AcklineProducer,
    private readonly batching: BatchSettings,
    private readonly onPublished: (id: MessageId) => void,
  ) {}

  /** Queues a message; resolves to its id once stored. */
  enqueue(message: OutgoingMessage): Promise<MessageId> {
    return new Promise((resolve, reject) => {
      this.queue.push({ message, resolve, reject });
      this.queuedBytes += message.data.length;
      const { enabled, maxMessages, maxBytes, maxPublishDelayMs } = this.batching;
      if (!enabled || this.queue.length - this.ready >= maxMessages || this.queuedBytes >= maxBytes) {
        this.closeBatch();
      } else {
        this.timer ??= setTimeout(() => this.closeBatch(), maxPublishDelayMs);
      }
    });
  }

  /** Publishes everything queued; resolves when all of it is answered. */
  async flush(): Promise<void> {
    this.closeBatch();
    while (this.inFlight) await this.inFlight;
  }

  private closeBatch(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.ready = this.queue.length;
    this.queuedBytes = 0;
    this.pump();
  }

  private pump(): void {
    if (this.inFlight || this.ready === 0) return;
    let count = 0;
    let bytes = 0;
    const limit = Math.min(this.ready, this.batching.maxMessages);
    while (count < limit) {
      const size = this.queue[count]!.message.data.length;
      if (count > 0 && bytes + size > MAX_REQUEST_PAYLOAD_BYTES) break;
      bytes += size;
      count += 1;
    }
    const taken = this.queue.splice(0, count);
    this.ready -= taken.length;
    const batch = this.batching.keyBased ? byKey(taken) : taken;
    this.inFlight = this.publish(batch).finally(() => {
      this.inFlight = undefined;
      this.pump();
    });
  }

  private async publish(batch: readonly Pending[]): Promise<void> {
    const sent = batch.map((pending) => {
      try {
        return fillBuilder(this.sdk.newMessage(), pending.message).sendAsync();
      } catch (error) {
        return Promise.reject(error);
      }
    });
    await this.sdk.flush();
    const outcomes = await Promise.allSettled(sent);
    outcomes.forEach((outcome, index) => {
      const pending = batch[index]!;
      if (outcome.status === 'fulfilled') {
        const id = fromAckline(outcome.value);
        this.onPublished(id);
        pending.resolve(id);
      } else {
        pending.reject(sendError(outcome.reason));
      }
    });
  }
}

function sendError(error: unknown): Error {
  if (error instanceof Error && error.message.startsWith('Failed to send message')) return error;
  return new Error(`Failed to send message: ${resultOf(error)}`, { cause: error });
}

function byKey(batch: readonly Pending[]): Pending[] {
  const groups = new Map<string, Pending[]>();
  for (const pending of batch) {
    const key = routingKeyOf(pending.message);
    const group = groups.get(key);
    if (group) group.push(pending);
    else groups.set(key, [pending]);
  }
  return [...groups.values()].flat();
}
