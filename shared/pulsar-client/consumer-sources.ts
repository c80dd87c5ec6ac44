import { parseTopic } from '../client/admin-paths.ts';
import { type Consumer as AcklineConsumer, MAX_RECEIVER_QUEUE_SIZE } from '../client/consumer.ts';
import { type CompatContext, checkNamespaceExists, resultOf } from './compat-context.ts';
import type { ConsumerConfig } from './consumer.ts';
import type { CheckedConsumerConfig } from './consumer-config.ts';

const FAILED = 'Failed to create consumer';
const PARTITION_SUFFIX = /-partition-\d+$/;

/** What a compat consumer subscribes each of its topics with. */
export interface SourceSettings {
  readonly context: CompatContext;
  readonly config: ConsumerConfig;
  readonly checked: CheckedConsumerConfig;
}

/** The full names of the topics the consumer reads now: its `topics`, or its pattern's matches. */
export async function topicsNow(settings: SourceSettings): Promise<string[]> {
  const { where } = settings.checked;
  if ('topics' in where) {
    return where.topics.map((topic) => {
      const parts = parseOrFail(topic);
      return `${parts.domain}://${parts.tenant}/${parts.namespace}/${parts.localName}`;
    });
  }
  const pattern = where.pattern;
  const parts = parseOrFail(pattern.replace(/\/[^/]*$/, '/x'));
  const namespace = `${parts.tenant}/${parts.namespace}`;
  let listed: readonly string[];
  try {
    listed = await settings.context.sdk.admin().topics().getList(namespace);
  } catch (error) {
    throw new Error(`${FAILED}: ${resultOf(error)}`, { cause: error });
  }
  const regex = new RegExp(`^(?:${pattern.includes('://') ? '' : 'persistent://'}${pattern})$`);
  const topics = new Set(listed.map((name) => name.replace(PARTITION_SUFFIX, '')));
  return [...topics].filter((topic) => regex.test(topic)).sort();
}

/** Checks the namespaces of `topics` exist, as Pulsar (once per namespace). */
export async function checkNamespaces(settings: SourceSettings, topics: readonly string[]): Promise<void> {
  const namespaces = new Map(topics.map((topic) => [namespaceOf(topic), parseOrFail(topic)]));
  for (const parts of namespaces.values()) await checkNamespaceExists(settings.context, parts, FAILED);
}

/**
 * Subscribes one topic through the ackline SDK. With an ack timeout the SDK consumer prefetches
 * nothing (receiver queue 0), so a message's ack timeout starts when `receive()` can hand it over.
 */
export async function subscribeSource(settings: SourceSettings, topic: string): Promise<AcklineConsumer> {
  const { context, config, checked } = settings;
  const builder = context.sdk
    .newConsumer()
    .topic(topic)
    .subscriptionName(checked.subscription)
    .subscriptionType(checked.subscriptionType)
    .negativeAckRedeliveryDelay(checked.nackDelayMs)
    .receiverQueueSize(
      checked.ackTimeoutMs > 0 ? 0 : Math.min(checked.receiverQueueSize, MAX_RECEIVER_QUEUE_SIZE),
    );
  if (config.subscriptionInitialPosition)
    builder.subscriptionInitialPosition(config.subscriptionInitialPosition);
  if (config.consumerName) builder.consumerName(config.consumerName);
  if (checked.ackTimeoutMs > 0) builder.ackTimeout(checked.ackTimeoutMs);
  const keyShared = config.keySharedPolicy;
  if (checked.subscriptionType === 'Key_Shared' && keyShared?.keyShareMode === 'Sticky') {
    // The server owns the check (ranges within 0..65535, none overlapping another consumer's).
    builder.keySharedPolicy({ mode: 'STICKY', hashRanges: keyShared.stickyRanges ?? [] });
  }
  const deadLetter = config.deadLetterPolicy;
  if (deadLetter?.maxRedeliverCount !== undefined && deadLetter.maxRedeliverCount > 0) {
    builder.deadLetterPolicy({
      maxRedeliverCount: deadLetter.maxRedeliverCount,
      ...(deadLetter.deadLetterTopic ? { deadLetterTopic: deadLetter.deadLetterTopic } : {}),
      ...(deadLetter.initialSubscriptionName
        ? { initialSubscriptionName: deadLetter.initialSubscriptionName }
        : {}),
    });
  }
  try {
    return await builder.subscribe();
  } catch (error) {
    throw new Error(`${FAILED}: ${resultOf(error)}`, { cause: error });
  }
}

function namespaceOf(topic: string): string {
  const parts = parseOrFail(topic);
  return `${parts.tenant}/${parts.namespace}`;
}

function parseOrFail(topic: string): ReturnType<typeof parseTopic> {
  try {
    return parseTopic(topic);
  } catch (error) {
    throw new Error(`${FAILED}: InvalidTopicName (${topic})`, { cause: error });
  }
}
