import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminApi, type NewMessage, SUPERUSER_ROLE, TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import { ConsumerApi, type ReceivedMessage, type TestConsumer } from '../support/consumer-fixtures.ts';
import {
  type EmbeddedProcess,
  makeDataDir,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';

// Issue "delivery engine", criterion 5: messages up to the largest payload the produce API takes
// (256 KiB) work on every path. Two bug reports reproduced: ten 120 KiB messages on a
// subscription with an ack timeout made receive answer 500 (the ack-timeout jobs went out as one
// SendMessageBatch over SQS's 1 MiB); eight 120 KiB messages delayed by an hour made publish answer
// 500, and the stack could then no longer start on that data directory. A stack of its own, with
// 2 s SQS hops so that short delays travel through the scheduler, restarted at the end.

const KIB = 1024;
const MAX_PAYLOAD_BYTES = 256 * KIB;
const HOUR_MS = 3_600_000;

/** `count` distinct payloads of `bytes` UTF-8 bytes each, made of `filler` (a 1- or 2-byte character). */
function payloadsOf(count: number, bytes: number, filler = 'x', prefix = ''): string[] {
  return Array.from({ length: count }, (_, i) => {
    const head = `${prefix}${i}:`;
    return head + filler.repeat(Math.floor((bytes - head.length) / Buffer.byteLength(filler)));
  });
}

/** Sizes and payload contents that travel differently: inline, by reference, escaped past 1 MiB. */
const PAYLOAD_KINDS: [string, string[]][] = [
  ['ten 120 KiB', payloadsOf(10, 120 * KIB)],
  ['ten 250 KiB', payloadsOf(10, 250 * KIB)],
  ['ten 256 KiB of two-byte characters', payloadsOf(10, MAX_PAYLOAD_BYTES, 'é')],
  // JSON escapes a control character as six bytes: each token would be 1.1 MiB inline. In a proxy
  // event or answer, where the JSON is escaped again, each message is 1.3 MB (7 bytes a character):
  // five need two produce requests and two receives within Lambda's 6 MB (produceWithinLimit).
  ['five 190 KiB of control characters', payloadsOf(5, 190 * KIB, '\u0001')],
];

/** The payloads received, by index (payloads start with `<index>:`), failing on an unexpected one. */
function sameMessages(received: readonly ReceivedMessage[], expected: readonly string[]): boolean {
  const byPayload = new Set(expected);
  return (
    received.length === expected.length &&
    new Set(received.map((m) => m.payload)).size === expected.length &&
    received.every((m) => byPayload.has(m.payload))
  );
}

/** A short summary of what arrived (payloads are too large to print). */
function summary(received: readonly ReceivedMessage[]): string[] {
  return received.map((m) => `${m.messageId} #${m.redeliveryCount} ${Buffer.byteLength(m.payload)} B`);
}

describe('messages up to the largest payload, on every path', () => {
  let stack: EmbeddedProcess;
  let admin: AdminApi;
  let consumers: ConsumerApi;

  beforeAll(async () => {
    stack = await startEmbeddedProcess({
      dataDir: await makeDataDir('ackline-sizes-'),
      env: { ACKLINE_MAX_DELAY_SECONDS: '2' },
    });
    const token = tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET });
    admin = new AdminApi(stack.url, token);
    consumers = new ConsumerApi(stack.url, token);
  });

  afterAll(async () => {
    await stack?.stop('SIGTERM');
    if (stack) await rm(stack.dataDir, { recursive: true, force: true });
  });

  async function receiveAll(consumer: TestConsumer, count: number, timeoutMs: number) {
    const received = await consumer.receiveN(count, timeoutMs);
    return { received, text: summary(received) };
  }

  it.each(
    PAYLOAD_KINDS,
  )('%s with an ack timeout: received, redelivered on timeout, acknowledged', async (_, payloads) => {
    const topic = TopicRef.unique('bigacktimeout');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      ackTimeoutMs: 1000,
    });
    await admin.produceWithinLimit(
      topic,
      payloads.map((payload) => ({ payload })),
    );

    const first = await receiveAll(consumer, payloads.length, 10_000);
    const again = await receiveAll(consumer, payloads.length, 10_000);
    await consumer.ack(again.received);

    expect(first.text).toHaveLength(payloads.length);
    expect(sameMessages(first.received, payloads)).toBe(true);
    expect(again.received.map((m) => m.redeliveryCount)).toEqual(payloads.map(() => 1));
    expect(sameMessages(again.received, payloads)).toBe(true);
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it.each(
    PAYLOAD_KINDS,
  )('%s delayed past one SQS hop (through the scheduler): published, then delivered', async (_, payloads) => {
    const topic = TopicRef.unique('bigdelayed');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const publishedAtMs = Date.now();
    await admin.produceWithinLimit(
      topic,
      payloads.map((payload) => ({ payload, deliverAfterMs: 3000 })),
    );

    const { received, text } = await receiveAll(consumer, payloads.length, 15_000);
    await consumer.ack(received);

    expect(text).toHaveLength(payloads.length);
    expect(sameMessages(received, payloads)).toBe(true);
    for (const m of received) expect(m.receivedAtMs - publishedAtMs).toBeGreaterThanOrEqual(3000);
  });

  it('ten 250 KiB messages nacked on an Exclusive subscription with a 1 s delay (ordered queues take every delay through the scheduler)', async () => {
    const topic = TopicRef.unique('bigordered');
    const payloads = payloadsOf(10, 250 * KIB);
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Exclusive',
      negativeAckRedeliveryDelayMs: 1000,
    });
    await admin.produce(
      topic,
      payloads.map((payload) => ({ payload })),
    );

    const first = await receiveAll(consumer, payloads.length, 10_000);
    await consumer.nack(first.received);
    const again = await receiveAll(consumer, payloads.length, 15_000);
    await consumer.ack(again.received);

    expect(first.received.map((m) => m.payload)).toEqual(payloads);
    expect(again.text).toHaveLength(payloads.length);
    expect(again.received.map((m) => m.payload)).toEqual(payloads);
    expect(again.received.map((m) => m.redeliveryCount)).toEqual(payloads.map(() => 1));
  });

  it('characters SQS refuses in a body (U+FFFE, U+FFFF) travel, delayed through the scheduler and after an ack timeout', async () => {
    const topic = TopicRef.unique('sqschars');
    const payload = 'a\uFFFEb\uFFFF'.repeat(1000);
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      ackTimeoutMs: 1000,
    });
    await admin.produce(topic, [{ payload, deliverAfterMs: 3000 }]);

    const first = await consumer.receiveN(1, 10_000);
    const again = await consumer.receiveN(1, 10_000);
    await consumer.ack(again);

    expect(first.map((m) => m.payload === payload)).toEqual([true]);
    expect(again.map((m) => [m.payload === payload, m.redeliveryCount])).toEqual([[true, 1]]);
  });

  it('ten 256 KiB messages nacked, redelivered, then dead-lettered: all arrive on the dead-letter topic', async () => {
    const topic = TopicRef.unique('bignack');
    const payloads = payloadsOf(10, MAX_PAYLOAD_BYTES, 'é');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 0,
      deadLetterPolicy: { maxRedeliverCount: 1, initialSubscriptionName: 'dlq-reader' },
    });
    await admin.produce(
      topic,
      payloads.map((payload) => ({ payload, key: 'k', properties: { p: 'v' } })),
    );

    const first = await receiveAll(consumer, payloads.length, 10_000);
    await consumer.nack(first.received);
    const again = await receiveAll(consumer, payloads.length, 10_000);
    await consumer.nack(again.received);
    const reader = await consumers.subscribe(
      topic.namespace.topic(`${topic.localName}-sub-DLQ`),
      'dlq-reader',
      {
        subscriptionType: 'Shared',
      },
    );
    const letters = await receiveAll(reader, payloads.length, 15_000);
    await reader.ack(letters.received);

    expect(first.received.map((m) => m.redeliveryCount)).toEqual(payloads.map(() => 0));
    expect(again.received.map((m) => m.redeliveryCount)).toEqual(payloads.map(() => 1));
    expect(letters.text).toHaveLength(payloads.length);
    expect(sameMessages(letters.received, payloads)).toBe(true);
    for (const m of letters.received)
      expect(m.properties).toMatchObject({ p: 'v', REAL_SUBSCRIPTION: 'sub' });
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it('eight 120 KiB and ten 256 KiB messages delayed by an hour, and ten unread: the stack restarts on its data and delivers', async () => {
    const topic = TopicRef.unique('bigrestart');
    const delayed: NewMessage[] = [
      ...payloadsOf(8, 120 * KIB, 'x', 'later-'),
      ...payloadsOf(10, MAX_PAYLOAD_BYTES, 'é', 'later-big-'),
    ].map((payload) => ({ payload, deliverAfterMs: HOUR_MS }));
    const unread = payloadsOf(10, 250 * KIB, 'x', 'now-');
    const before = [
      await consumers.subscribe(topic, 'shared', { subscriptionType: 'Shared', ackTimeoutMs: 1000 }),
      await consumers.subscribe(topic, 'other', { subscriptionType: 'Key_Shared' }),
    ];
    await admin.produce(topic, delayed);
    await admin.produce(
      topic,
      unread.map((payload) => ({ payload })),
    );
    // Those consumers go away (a Key_Shared member keeps its keys until it closes or its lease ends).
    for (const consumer of before) await consumer.close();

    const dataDir = stack.dataDir;
    expect(await stack.stop('SIGTERM')).toBe(0);
    stack = await startEmbeddedProcess({ dataDir, env: { ACKLINE_MAX_DELAY_SECONDS: '2' } });
    admin = new AdminApi(stack.url, admin.token);
    consumers = new ConsumerApi(stack.url, consumers.token);
    // No ack timeout now: the test acknowledges once all arrived, which under load can take longer.
    const shared = await consumers.subscribe(topic, 'shared', { subscriptionType: 'Shared' });
    const other = await consumers.subscribe(topic, 'other', { subscriptionType: 'Key_Shared' });
    const fromShared = await receiveAll(shared, unread.length, 15_000);
    const fromOther = await receiveAll(other, unread.length, 15_000);
    await shared.ack(fromShared.received);
    await other.ack(fromOther.received);
    const early = [...(await shared.receive(10, 500)), ...(await other.receive(10, 500))];

    expect(sameMessages(fromShared.received, unread)).toBe(true);
    expect(sameMessages(fromOther.received, unread)).toBe(true);
    expect(summary(early)).toEqual([]);
    expect(await admin.backlogs(topic)).toEqual({ shared: delayed.length, other: delayed.length });
  });
});
