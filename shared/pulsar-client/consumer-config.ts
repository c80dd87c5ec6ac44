import type { SubscriptionType as AcklineSubscriptionType } from '../client/admin-types.ts';
import { refuseBinaryOnly } from './binary-protocol.ts';
import type { ConsumerConfig } from './consumer.ts';

const TOPIC_REQUIRED =
  'Topic, topics or topicsPattern is required and must be specified as a string when creating consumer';
const SUBSCRIPTION_REQUIRED =
  'Subscription is required and must be specified as a string when creating consumer';
/** Pulsar's smallest ack timeout (ConsumerConfiguration: 0 or at least 10 s). */
const MIN_ACK_TIMEOUT_MS = 10_000;
/** pulsar-client's default negative-ack redelivery delay. */
const DEFAULT_NACK_REDELIVER_TIMEOUT_MS = 60_000;
/** pulsar-client's default receiver queue. */
const DEFAULT_RECEIVER_QUEUE_SIZE = 1000;
/** pulsar-client-cpp's BatchReceivePolicy defaults. */
const DEFAULT_BATCH_RECEIVE = { maxNumMessages: -1, maxNumBytes: 10 * 1024 * 1024, timeoutMs: 100 };

/** Where a consumer reads: topics by name, or a pattern over one namespace's topics. */
export type ConsumerTopics = { readonly topics: readonly string[] } | { readonly pattern: string };

/** A consumer's settings as checked, with pulsar-client's defaults applied. */
export interface CheckedConsumerConfig {
  readonly where: ConsumerTopics;
  readonly subscription: string;
  readonly subscriptionType: AcklineSubscriptionType;
  readonly ackTimeoutMs: number;
  readonly nackDelayMs: number;
  readonly receiverQueueSize: number;
  readonly batchReceive: {
    readonly maxNumMessages: number;
    readonly maxNumBytes: number;
    readonly timeoutMs: number;
  };
}

/**
 * Checks a consumer's settings in pulsar-client's order and with its messages, and refuses what
 * ackline cannot serve (encryption, schemas other than bytes and strings).
 * @throws Error naming the setting.
 */
export function checkConsumerConfig(config: ConsumerConfig): CheckedConsumerConfig {
  if (config === null || typeof config !== 'object') throw new Error(TOPIC_REQUIRED);
  const where = topicsOf(config);
  if (typeof config.subscription !== 'string' || config.subscription === '')
    throw new Error(SUBSCRIPTION_REQUIRED);
  const ackTimeoutMs = config.ackTimeoutMs ?? 0;
  if (ackTimeoutMs !== 0 && !(ackTimeoutMs >= MIN_ACK_TIMEOUT_MS)) {
    throw new Error('Ack timeout should be 0 or greater than or equal to 10000');
  }
  const nackDelayMs = config.nAckRedeliverTimeoutMs ?? DEFAULT_NACK_REDELIVER_TIMEOUT_MS;
  if (!(nackDelayMs >= 0)) throw new Error('NAck timeout should be greater than or equal to zero');
  const batchReceive = { ...DEFAULT_BATCH_RECEIVE, ...config.batchReceivePolicy };
  if (batchReceive.maxNumMessages <= 0 && batchReceive.maxNumBytes <= 0 && batchReceive.timeoutMs <= 0) {
    throw new Error('At least one of maxNumMessages, maxNumBytes and timeoutMs must be specified.');
  }
  const failed = 'Failed to create consumer';
  refuseBinaryOnly({
    encryption: [config.privateKeyPath, config.cryptoKeyReader],
    schema: config.schema,
    failed,
  });
  const receiverQueueSize = config.receiverQueueSize ?? DEFAULT_RECEIVER_QUEUE_SIZE;
  if (!(Number.isInteger(receiverQueueSize) && receiverQueueSize >= 0)) {
    throw new Error(`${failed}: receiverQueueSize must be an integer >= 0`);
  }
  return {
    where,
    subscription: config.subscription,
    subscriptionType: subscriptionTypeOf(config.subscriptionType),
    ackTimeoutMs,
    nackDelayMs: Math.round(nackDelayMs),
    receiverQueueSize,
    batchReceive,
  };
}

function topicsOf(config: ConsumerConfig): ConsumerTopics {
  const { topic, topics, topicsPattern } = config as {
    topic?: unknown;
    topics?: unknown;
    topicsPattern?: unknown;
  };
  if (typeof topic === 'string' && topic !== '') return { topics: [topic] };
  if (Array.isArray(topics) && topics.length > 0 && topics.every((t) => typeof t === 'string' && t !== '')) {
    return { topics: [...new Set(topics as string[])] };
  }
  if (typeof topicsPattern === 'string' && topicsPattern !== '') return { pattern: topicsPattern };
  throw new Error(TOPIC_REQUIRED);
}

function subscriptionTypeOf(type: ConsumerConfig['subscriptionType']): AcklineSubscriptionType {
  switch (type ?? 'Exclusive') {
    case 'Exclusive':
      return 'Exclusive';
    case 'Shared':
      return 'Shared';
    case 'Failover':
      return 'Failover';
    case 'KeyShared':
      return 'Key_Shared';
    default:
      throw new Error(`Failed to create consumer: InvalidConfiguration (subscriptionType ${String(type)})`);
  }
}
