import type { TopicName } from '../../domain/topic-name.ts';
import type { StoredEntry } from '../../ports/ledger.ts';

/** A stored message as the admin API shows it (peek, get message by id). */
export interface MessageView {
  readonly messageId: string;
  readonly payload: string;
  readonly key: string | null;
  readonly properties: Readonly<Record<string, string>>;
  readonly publishTime: number;
  readonly eventTime: number | null;
  readonly deliverAt: number | null;
  /** `base64` when the payload is bytes (base64 in `payload`). */
  readonly payloadEncoding?: 'base64';
  readonly producerName?: string;
}

export function messageView(partition: TopicName, entry: StoredEntry): MessageView {
  return {
    messageId: `${entry.position.toString()}:${partition.partitionIndex}`,
    payload: entry.payload,
    key: entry.key ?? null,
    properties: entry.properties,
    publishTime: entry.publishTimeMs,
    eventTime: entry.eventTimeMs ?? null,
    deliverAt: entry.deliverAtMs ?? null,
    ...(entry.binary ? { payloadEncoding: 'base64' as const } : {}),
    ...(entry.producerName === undefined ? {} : { producerName: entry.producerName }),
  };
}
