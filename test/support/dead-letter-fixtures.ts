import type { TopicRef } from './admin-fixtures.ts';
import type { TestConsumer, TimedMessage } from './consumer-fixtures.ts';

/**
 * Helpers of the dead-letter suites ported from Pulsar's DeadLetterTopicTest (issue 21,
 * criterion 9): the default dead-letter topic's name, redelivery counts by payload, consumers
 * that never acknowledge (Pulsar's message listeners) and a dead-letter reader that stops when
 * the topic stays quiet. Every loop is bounded.
 */

/** Pulsar's default dead-letter topic, `{topic}-{subscription}-DLQ`. */
export function defaultDeadLetterTopic(topic: TopicRef, subscription: string): TopicRef {
  return topic.namespace.topic(`${topic.localName}-${subscription}-DLQ`);
}

/** `{ payload: [redeliveryCount, ...] }` of every delivery, counts in the order received. */
export function countsByPayload(deliveries: readonly TimedMessage[]): Record<string, number[]> {
  const counts: Record<string, number[]> = {};
  for (const message of deliveries) {
    counts[message.payload] = [...(counts[message.payload] ?? []), message.redeliveryCount];
  }
  return counts;
}

/** `{ payload: [0, 1, ..., maxRedeliverCount] }` for each payload: what {@link countsByPayload} should find. */
export function eachDelivered(sent: readonly string[], maxRedeliverCount: number): Record<string, number[]> {
  const counts = Array.from({ length: maxRedeliverCount + 1 }, (_, i) => i);
  return Object.fromEntries(sent.map((payload) => [payload, counts]));
}

/**
 * Consumers that never acknowledge (Pulsar's message listeners), each polling until `stop` is
 * called (or 40 s passed): `done` resolves to every delivery any of them received.
 */
export function listenNeverAcking(listeners: readonly TestConsumer[]): {
  stop: () => void;
  done: Promise<TimedMessage[]>;
} {
  const stopAt = { ms: Date.now() + 40_000 };
  const all: TimedMessage[] = [];
  const loops = listeners.map(async (listener) => {
    while (Date.now() < stopAt.ms) all.push(...(await listener.receive(10, 500)));
  });
  const stop = () => {
    stopAt.ms = 0;
  };
  return { stop, done: Promise.all(loops).then(() => all) };
}

/**
 * Dead letters, acknowledged as they arrive, until `quietMs` pass without one (Pulsar's
 * `receive(10, SECONDS)` until null), at most 40 polls.
 */
export async function readUntilQuiet(reader: TestConsumer, quietMs: number): Promise<TimedMessage[]> {
  const letters: TimedMessage[] = [];
  for (let polls = 0; polls < 40; polls++) {
    const batch = await reader.receiveN(10, quietMs);
    if (batch.length === 0) break;
    await reader.ack(batch);
    letters.push(...batch);
  }
  return letters;
}
