import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { tokenFor } from '../support/admin-fixtures.ts';
import { call } from '../support/http-client.ts';

// Issue 4, criteria 3 and 4: redelivery backoff measured on the embedded stack,
// from the moment of the nack (PIP-106) or of the delivery (PIP-130).
const url = inject('acklineUrl');
const token = tokenFor('admin');
/** The bound on lateness. */
const MAX_LATE_MS = 1_500;

interface Delivered {
  messageId: string;
  redeliveryCount: number;
  deliveryHandle: string;
}

function topicPath(label: string): { produce: string; subscribe: (sub: string) => string } {
  const name = `timing-${label}-${randomUUID().slice(0, 8)}`;
  return {
    produce: `/topics/persistent/ackline-it/timing/${name}`,
    subscribe: (sub) => `/consumers/persistent/ackline-it/timing/${name}/subscription/${sub}`,
  };
}

async function subscribe(path: string, body: Record<string, unknown>): Promise<string> {
  const result = await call(url, 'POST', path, { token, body: { subscriptionType: 'Shared', ...body } });
  expect(result.status, result.text).toBe(200);
  return (result.body as { consumerId: string }).consumerId;
}

async function publishOne(path: string): Promise<void> {
  const result = await call(url, 'POST', path, { token, body: { messages: [{ payload: 'timed' }] } });
  expect(result.status, result.text).toBe(200);
}

/** Waits (long-polling) for the next message; resolves with it and when it arrived. */
async function nextMessage(
  consumerId: string,
  waitMs: number,
): Promise<{ message?: Delivered; atMs: number }> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const remaining = deadline - Date.now();
    const result = await call(
      url,
      'POST',
      `/consumers/${consumerId}/receive?maxMessages=1&waitMs=${Math.max(0, Math.min(20_000, remaining))}`,
      { token },
    );
    expect(result.status, result.text).toBe(200);
    const [message] = (result.body as { messages: Delivered[] }).messages;
    if (message || Date.now() >= deadline) return { message, atMs: Date.now() };
  }
}

describe('negative acknowledgement backoff (PIP-106)', () => {
  it('brings a message back after 1, 2, 4, 8 s with B(1000, 8000, 2), never early, at most 1.5 s late', async () => {
    const topic = topicPath('nack');
    const consumerId = await subscribe(topic.subscribe('s'), {
      subscriptionInitialPosition: 'Earliest',
      negativeAckRedeliveryBackoff: { minDelayMs: 1000, maxDelayMs: 8000, multiplier: 2 },
    });
    await publishOne(topic.produce);
    let { message } = await nextMessage(consumerId, 5_000);
    const observed: { gapMs: number; count: number }[] = [];

    for (const _expected of [1000, 2000, 4000, 8000]) {
      const nackedAt = Date.now();
      const nack = await call(url, 'POST', `/consumers/${consumerId}/nack`, {
        token,
        body: { deliveryHandles: [message?.deliveryHandle] },
      });
      expect(nack.status, nack.text).toBe(204);
      const next = await nextMessage(consumerId, 12_000);
      observed.push({ gapMs: next.atMs - nackedAt, count: next.message?.redeliveryCount ?? -1 });
      message = next.message;
    }

    expect(observed.map((o) => o.count)).toEqual([1, 2, 3, 4]);
    [1000, 2000, 4000, 8000].forEach((expectedMs, i) => {
      expect(observed[i]?.gapMs).toBeGreaterThanOrEqual(expectedMs);
      expect(observed[i]?.gapMs).toBeLessThanOrEqual(expectedMs + MAX_LATE_MS);
    });
  });

  it('backs off when the nack names the message id only (the count is kept server-side)', async () => {
    const topic = topicPath('nack-by-id');
    const consumerId = await subscribe(topic.subscribe('s'), {
      subscriptionInitialPosition: 'Earliest',
      negativeAckRedeliveryBackoff: { minDelayMs: 1000, maxDelayMs: 8000, multiplier: 2 },
    });
    await publishOne(topic.produce);
    const first = await nextMessage(consumerId, 5_000);

    const nackedAt = Date.now();
    await call(url, 'POST', `/consumers/${consumerId}/nack`, {
      token,
      body: { messageIds: [first.message?.messageId] },
    });
    const second = await nextMessage(consumerId, 5_000);
    const secondNackAt = Date.now();
    await call(url, 'POST', `/consumers/${consumerId}/nack`, {
      token,
      body: { messageIds: [second.message?.messageId] },
    });
    const third = await nextMessage(consumerId, 6_000);

    expect(second.message?.redeliveryCount).toBe(1);
    expect(second.atMs - nackedAt).toBeGreaterThanOrEqual(1000);
    expect(third.message?.redeliveryCount).toBe(2);
    expect(third.atMs - secondNackAt).toBeGreaterThanOrEqual(2000);
    expect(third.atMs - secondNackAt).toBeLessThanOrEqual(2000 + MAX_LATE_MS);
  });
});

describe('ack timeout backoff (PIP-130)', () => {
  it('redelivers an unacknowledged message after 3, 4, 6, 6 s with ackTimeout 2000 and B(1000, 4000, 2)', async () => {
    const topic = topicPath('ack-timeout');
    const consumerId = await subscribe(topic.subscribe('s'), {
      subscriptionInitialPosition: 'Earliest',
      ackTimeoutMs: 2000,
      ackTimeoutRedeliveryBackoff: { minDelayMs: 1000, maxDelayMs: 4000, multiplier: 2 },
    });
    await publishOne(topic.produce);
    let previous = await nextMessage(consumerId, 5_000);
    const observed: { gapMs: number; count: number }[] = [];

    for (let i = 0; i < 4; i++) {
      const next = await nextMessage(consumerId, 10_000);
      observed.push({ gapMs: next.atMs - previous.atMs, count: next.message?.redeliveryCount ?? -1 });
      previous = next;
    }

    expect(observed.map((o) => o.count)).toEqual([1, 2, 3, 4]);
    [3000, 4000, 6000, 6000].forEach((expectedMs, i) => {
      expect(observed[i]?.gapMs).toBeGreaterThanOrEqual(expectedMs);
      expect(observed[i]?.gapMs).toBeLessThanOrEqual(expectedMs + MAX_LATE_MS);
    });
  });

  it('never redelivers with ackTimeoutMs 0', async () => {
    const topic = topicPath('no-timeout');
    const consumerId = await subscribe(topic.subscribe('s'), { subscriptionInitialPosition: 'Earliest' });
    await publishOne(topic.produce);
    const first = await nextMessage(consumerId, 5_000);

    const again = await nextMessage(consumerId, 3_500);

    expect(first.message?.redeliveryCount).toBe(0);
    expect(again.message).toBeUndefined();
  });
});
