import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminApi, SUPERUSER_ROLE, TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import { ConsumerApi, payloads } from '../support/consumer-fixtures.ts';
import {
  type EmbeddedProcess,
  makeDataDir,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';

// Issue "delivery engine", I7: Pulsar's maxUnackedMessagesPerConsumer and
// maxUnackedMessagesPerSubscription, set for the deployment (ACKLINE_MAX_UNACKED_PER_CONSUMER,
// ACKLINE_MAX_UNACKED_PER_SUBSCRIPTION). A stack of its own with small caps.

const PER_CONSUMER = 5;
const PER_SUBSCRIPTION = 12;

let stack: EmbeddedProcess | undefined;
let dataDir: string | undefined;
let admin: AdminApi;
let consumers: ConsumerApi;

beforeAll(async () => {
  dataDir = await makeDataDir('ackline-caps-');
  stack = await startEmbeddedProcess({
    dataDir,
    env: {
      ACKLINE_MAX_UNACKED_PER_CONSUMER: String(PER_CONSUMER),
      ACKLINE_MAX_UNACKED_PER_SUBSCRIPTION: String(PER_SUBSCRIPTION),
    },
  });
  const token = tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET });
  admin = new AdminApi(stack.url, token);
  consumers = new ConsumerApi(stack.url, token);
});

afterAll(async () => {
  await stack?.stop('SIGTERM');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('caps of unacknowledged messages (I7)', () => {
  it('a Shared consumer stops at its cap while another goes on; its acks let it go on; the subscription stops at its cap', async () => {
    const topic = TopicRef.unique('caps');
    await admin.createTopic(topic);
    const a = await consumers.subscribe(topic, 'work', {
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
    });
    const b = await consumers.subscribe(topic, 'work', {
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
    });
    await admin.produce(
      topic,
      Array.from({ length: 30 }, (_, i) => ({ payload: `m${i}` })),
    );

    const a1 = await a.receive(10, 0);
    expect(a1).toHaveLength(PER_CONSUMER);
    // Blocked: a long poll waits (without taking the doorbell from b) and answers nothing.
    const started = Date.now();
    expect(await a.receive(10, 1_500)).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);

    const b1 = await b.receive(10, 0);
    expect(b1).toHaveLength(PER_CONSUMER);
    expect(new Set([...payloads(a1), ...payloads(b1)]).size).toBe(2 * PER_CONSUMER);

    // a acknowledges 3: it gets at most 3 more (within a few seconds: its count is taken again).
    await a.ack(a1.slice(0, 3));
    const a2 = await a.receiveN(3, 5_000);
    expect(a2).toHaveLength(3);
    expect(await a.receive(10, 0)).toEqual([]);

    // The subscription's cap counts the window from mark-delete to the read position: 0-2 acked
    // (folded away), 3-4 held by a, 5-9 acked by b, 10-12 held by a: 10 of 12, so a third consumer,
    // far from its own cap, gets 2 and no more while a holds entry 3.
    await b.ack(b1);
    const c = await consumers.subscribe(topic, 'work', {
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
    });
    const more = await c.receiveN(10, 2_000);
    expect(more).toHaveLength(PER_SUBSCRIPTION - 10);
    const all = [...payloads(a1), ...payloads(b1), ...payloads(a2), ...payloads(more)];
    expect(new Set(all).size).toBe(all.length);
  });

  it('a sole Shared consumer blocked at its cap gets its entries again at their ack timeout', async () => {
    const topic = TopicRef.unique('capst');
    await admin.createTopic(topic);
    const only = await consumers.subscribe(topic, 'slow', {
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
      ackTimeoutMs: 1_000,
    });
    await admin.produce(
      topic,
      Array.from({ length: 8 }, (_, i) => ({ payload: `t${i}` })),
    );
    const first = await only.receive(10, 0);
    expect(payloads(first)).toEqual(['t0', 't1', 't2', 't3', 't4']);
    // Never acknowledged: past the ack timeout they come back to it (Pulsar's client redelivers
    // them, which unblocks the consumer), though it is still at its cap.
    const again = await only.receiveN(PER_CONSUMER, 8_000);
    expect(payloads(again)).toEqual(payloads(first));
    expect(again.every((message) => message.redeliveryCount === 1)).toBe(true);
  });

  it('an Exclusive consumer stops at the per-consumer cap and goes on after a cumulative ack', async () => {
    const topic = TopicRef.unique('capsx');
    await admin.createTopic(topic);
    const only = await consumers.subscribe(topic, 'one', {
      subscriptionType: 'Exclusive',
      subscriptionInitialPosition: 'Earliest',
    });
    await admin.produce(
      topic,
      Array.from({ length: 12 }, (_, i) => ({ payload: `x${i}` })),
    );
    const first = await only.receiveN(PER_CONSUMER, 3_000);
    expect(payloads(first)).toEqual(['x0', 'x1', 'x2', 'x3', 'x4']);
    expect(await only.receive(10, 500)).toEqual([]);
    await only.ackCumulative((first[1] as { messageId: string }).messageId);
    expect(payloads(await only.receiveN(2, 3_000))).toEqual(['x5', 'x6']);
  });
});
