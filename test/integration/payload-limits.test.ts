import { describe, expect, it } from 'vitest';
import { invocationRefusals } from '../../infra/api-routes.ts';
import { LAMBDA_PAYLOAD_LIMIT_BYTES, proxyResultBytes } from '../../shared/http/lambda-payload.ts';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi, type ReceivedMessage, type TestConsumer } from '../support/consumer-fixtures.ts';

// Issue 22, criterion 1 ("Payload limits"): a synchronous Lambda invocation carries at most
// 6,291,456 bytes each way, and the local gateway enforces it as AWS does (413 for an event over
// it, 502 for an answer over it). A receive of maxMessages=100 once answered 14 MB (61 messages of
// 256 KiB): on AWS that answer fails after the claim is committed, and the messages stay held by a
// consumer that never saw them. Now a receive claims only what its answer can carry.

const KIB = 1024;
const MAX_PAYLOAD_BYTES = 256 * KIB;

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

/** `count` distinct payloads of `bytes` UTF-16 units each, made of `filler`. */
function payloadsOf(count: number, bytes: number, filler: string): string[] {
  return Array.from({ length: count }, (_, i) => `${i}:`.padEnd(bytes, filler));
}

/** One receive's answer: its messages and its size as Lambda counts it (the serialized proxy result). */
interface Answer {
  readonly messages: readonly ReceivedMessage[];
  readonly proxyResultBytes: number;
  /** The subscription's unacknowledged messages right after this answer (topic stats). */
  readonly unackedAfter: number | undefined;
}

/**
 * Receives (maxMessages=100, long polls of 1 s) until `count` messages arrived, measuring each
 * answer: the body as it came, in the proxy result the function returned (the local gateway passes
 * status, content type and body through unchanged).
 */
async function receiveAnswers(topic: TopicRef, consumer: TestConsumer, count: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  const deadline = Date.now() + 50_000;
  let received = 0;
  while (received < count && Date.now() < deadline) {
    const result = await consumer.sendReceive({ maxMessages: 100, waitMs: 1000 });
    expect(result.status, result.text.slice(0, 200)).toBe(200);
    const { messages } = result.body as { messages: ReceivedMessage[] };
    if (messages.length === 0) continue;
    received += messages.length;
    const bytes = proxyResultBytes({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: result.text,
    });
    const stats = await admin.stats(topic);
    answers.push({
      messages,
      proxyResultBytes: bytes,
      unackedAfter: stats.subscriptions.sub?.unackedMessages,
    });
  }
  return answers;
}

/** What was answered up to and including each answer. */
function answeredSoFar(answers: readonly Answer[]): number[] {
  return answers.map((_, i) => answers.slice(0, i + 1).reduce((sum, a) => sum + a.messages.length, 0));
}

describe("Lambda's 6 MB payload limit, over HTTP on the embedded stack", () => {
  it('100 messages of 256 KiB: published in requests under the limit, received with maxMessages=100 over several answers under it, none held unseen, then redelivered the same way', async () => {
    const topic = TopicRef.unique('sixmb');
    const payloads = payloadsOf(100, MAX_PAYLOAD_BYTES, 'x');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 0,
    });
    const ids = await admin.produceWithinLimit(
      topic,
      payloads.map((payload) => ({ payload })),
    );

    const first = await receiveAnswers(topic, consumer, payloads.length);
    await consumer.nack(first.flatMap((a) => a.messages));
    const again = await receiveAnswers(topic, consumer, payloads.length);
    await consumer.ack(again.flatMap((a) => a.messages));
    const stats = (await admin.stats(topic)).subscriptions.sub;

    expect(ids).toHaveLength(100);
    for (const answers of [first, again]) {
      const received = answers.flatMap((a) => a.messages);
      expect(received).toHaveLength(100);
      expect(new Set(received.map((m) => m.payload))).toEqual(new Set(payloads));
      expect(answers.length).toBeGreaterThanOrEqual(5); // 26 MB of payloads in answers of 6 MB at most
      for (const { proxyResultBytes: bytes } of answers)
        expect(bytes).toBeLessThanOrEqual(LAMBDA_PAYLOAD_LIMIT_BYTES);
    }
    // Held after each answer: exactly what was answered (nothing claimed that an answer dropped).
    expect(first.map((a) => a.unackedAfter)).toEqual(answeredSoFar(first));
    expect(again.map((a) => a.unackedAfter)).toEqual(answeredSoFar(again));
    expect(again.flatMap((a) => a.messages).every((m) => m.redeliveryCount === 1)).toBe(true);
    expect(Math.max(...first.map((a) => a.proxyResultBytes))).toBeGreaterThan(5_900_000);
    expect(stats).toMatchObject({ msgBacklog: 0, unackedMessages: 0 });
  });

  it('messages of 256 KiB of control characters (7 bytes each once the answer JSON is escaped again): three an answer, under the limit', async () => {
    const topic = TopicRef.unique('sixmbescaped');
    const payloads = payloadsOf(9, MAX_PAYLOAD_BYTES, '\u0001');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.produceWithinLimit(
      topic,
      payloads.map((payload) => ({ payload })),
    );

    const answers = await receiveAnswers(topic, consumer, payloads.length);
    await consumer.ack(answers.flatMap((a) => a.messages));

    expect(answers.map((a) => a.messages.length)).toEqual([3, 3, 3]);
    for (const { proxyResultBytes: bytes } of answers)
      expect(bytes).toBeLessThanOrEqual(LAMBDA_PAYLOAD_LIMIT_BYTES);
    expect(new Set(answers.flatMap((a) => a.messages.map((m) => m.payload)))).toEqual(new Set(payloads));
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it('a publish of 7.5 MB answers 413 with a JSON reason and stores nothing', async () => {
    const topic = TopicRef.unique('sixmbpublish');
    await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const messages = payloadsOf(30, 250 * KIB, 'x').map((payload) => ({ payload }));

    const refused = await admin.send('POST', topic.producePath, { body: { messages } });

    expect(JSON.stringify({ messages }).length).toBeGreaterThan(7_500_000);
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({ reason: invocationRefusals.requestTooLarge.reason });
    const stats = await admin.stats(topic);
    expect(stats.msgInCounter).toBe(0);
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });
});
