import type { Message as AcklineMessage } from '../client/message.ts';
import type { Delivery } from './incoming-messages.ts';
import type { OutgoingMessage } from './outgoing-message.ts';

/**
 * Message chunking (`chunkingEnabled`), as Pulsar's PIP-37 but in the compat layer: ackline stores
 * payloads of at most 256 KiB (docs/design/storage.md#message-sizes), so a larger message is
 * published as consecutive chunk messages that carry these reserved properties, and the compat
 * consumer hands them over as one message once all have arrived. Other ackline clients see the chunks.
 */
export const CHUNK_UUID = '__pulsar.chunk.uuid';
export const CHUNK_INDEX = '__pulsar.chunk.index';
export const CHUNK_COUNT = '__pulsar.chunk.count';
/** ackline's largest payload, in bytes (the server's limit; see docs/design/storage.md). */
export const MAX_CHUNK_BYTES = 256 * 1024;

/** The chunks of a message larger than {@link MAX_CHUNK_BYTES}, or the message itself. */
export function splitIntoChunks(message: OutgoingMessage): OutgoingMessage[] {
  const { data } = message;
  if (data.length <= MAX_CHUNK_BYTES) return [message];
  const parts: Buffer[] = [];
  let start = 0;
  while (start < data.length) {
    const end = Math.min(start + MAX_CHUNK_BYTES, data.length);
    parts.push(data.subarray(start, end));
    start = end;
  }
  const uuid = globalThis.crypto.randomUUID();
  return parts.map((part, index) => ({
    ...message,
    data: part,
    properties: {
      ...message.properties,
      [CHUNK_UUID]: uuid,
      [CHUNK_INDEX]: String(index),
      [CHUNK_COUNT]: String(parts.length),
    },
  }));
}

/** What happens to an incomplete chunked message pushed out of the assembler. */
export type DroppedChunks = (deliveries: readonly Delivery[], acknowledge: boolean) => void;

/**
 * Collects chunks until a message is whole. At most `maxPending` incomplete messages are kept
 * (pulsar-client's `maxPendingChunkedMessage`, default 10): past it the oldest is dropped,
 * acknowledged when `autoAckOldest` (`autoAckOldestChunkedMessageOnQueueFull`), else negatively
 * acknowledged so it comes back.
 */
export class ChunkAssembler {
  private readonly pending = new Map<string, (Delivery | undefined)[]>();

  constructor(
    private readonly settings: { maxPending: number; autoAckOldest: boolean; onDropped: DroppedChunks },
  ) {}

  /** The deliveries of a whole message (one for an unchunked message), or undefined while incomplete. */
  add(delivery: Delivery): Delivery[] | undefined {
    const chunk = chunkOf(delivery.message);
    if (chunk === undefined) return [delivery];
    const parts =
      this.pending.get(chunk.uuid) ?? new Array<Delivery | undefined>(chunk.count).fill(undefined);
    parts[chunk.index] = delivery;
    this.pending.delete(chunk.uuid);
    if (parts.every((part) => part !== undefined)) return parts as Delivery[];
    this.pending.set(chunk.uuid, parts);
    if (this.pending.size > this.settings.maxPending) {
      const [oldest, kept] = this.pending.entries().next().value as [string, (Delivery | undefined)[]];
      this.pending.delete(oldest);
      this.settings.onDropped(
        kept.filter((part) => part !== undefined),
        this.settings.autoAckOldest,
      );
    }
    return undefined;
  }
}

function chunkOf(message: AcklineMessage): { uuid: string; index: number; count: number } | undefined {
  const properties = message.getProperties();
  const uuid = properties[CHUNK_UUID];
  const index = Number(properties[CHUNK_INDEX]);
  const count = Number(properties[CHUNK_COUNT]);
  if (uuid === undefined || !Number.isInteger(index) || !Number.isInteger(count)) return undefined;
  if (count < 1 || index < 0 || index >= count) return undefined;
  return { uuid, index, count };
}
