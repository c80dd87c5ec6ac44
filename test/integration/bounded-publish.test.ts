import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminApi,
  NamespaceRef,
  SUPERUSER_ROLE,
  TopicRef,
  tokenFor,
  uniqueRole,
} from '../support/admin-fixtures.ts';
import { ConsumerApi, type TestConsumer } from '../support/consumer-fixtures.ts';
import {
  type EmbeddedProcess,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';

// Issue 22, criterion 7, over real HTTP on an embedded stack of its own (its load would slow the
// shared stack's other suites): a publish's requests do not grow with the subscriptions or the
// distinct delays (1,500 subscriptions, 20 messages with 20 distinct delays: 2xx within 1 s, every
// subscription woken), and concurrent requests are isolated as Lambda isolates them (300 long
// polls held by one role do not hold up another tenant's publish).

let stack: EmbeddedProcess;
let admin: AdminApi;
let consumers: ConsumerApi;

beforeAll(async () => {
  stack = await startEmbeddedProcess();
  const token = tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET });
  admin = new AdminApi(stack.url, token);
  consumers = new ConsumerApi(stack.url, token);
}, 60_000);

afterAll(async () => {
  await stack?.stop('SIGTERM');
  if (stack) await rm(stack.dataDir, { recursive: true, force: true });
});

/** Runs `each` over 0..count-1, `limit` at a time. */
async function inParallel(
  count: number,
  limit: number,
  each: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await each(next++);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/** How long `call` takes, in ms, and what it answered. */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await call();
  return { ms: performance.now() - started, value };
}

describe('a publish to a topic with 1,500 subscriptions', () => {
  it('answers 2xx within 1 s for 20 messages with 20 distinct delays, and wakes a waiting receiver of the last subscription', async () => {
    const topic = TopicRef.unique('fanout');
    await admin.createTopic(topic);
    await admin.expectStatus(204, 'POST', `${topic.adminPath}/maxSubscriptionsPerTopic`, { body: 2_000 });
    await inParallel(1_500, 16, async (i) => {
      await admin.createSubscription(topic, `s${i.toString().padStart(4, '0')}`);
    });
    // A receiver of the last subscription, waiting.
    const waiting: TestConsumer = await consumers.subscribe(topic, 's1499', { subscriptionType: 'Shared' });
    const firstWait = timed(() => waiting.receive(10, 15_000));

    const published = await timed(() =>
      admin.send('POST', topic.producePath, {
        body: {
          messages: Array.from({ length: 20 }, (_, i) => ({
            payload: `d${i}`,
            deliverAfterMs: (i + 1) * 1_000,
          })),
        },
      }),
    );

    expect(published.value.status).toBe(200);
    expect(published.ms).toBeLessThan(1_000);
    // The fan-out wakes the receiver, whose dispatch sets a timer for each delayed message: it
    // receives d0 first, woken before its 15 s wait ends (how long after d0's due time depends on
    // the fan-out's 1,500 rings: measured and printed, bounded loosely for a loaded machine).
    const woke = await firstWait;
    const received = woke.value.map((m) => m.payload);
    expect(received[0]).toBe('d0');
    expect(received).toEqual(received.map((_, i) => `d${i}`));
    expect(woke.ms).toBeLessThan(12_000);

    // An undelayed publish wakes a waiting receiver of the last subscription within a second or so.
    const secondWait = timed(() => waiting.receive(10, 15_000));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sentAt = performance.now();
    const again = await timed(() =>
      admin.send('POST', topic.producePath, { body: { messages: [{ payload: 'now' }] } }),
    );
    expect(again.value.status).toBe(200);
    // Not the criterion's publish: it runs while the first one's 1,500 rings and 20 timers load
    // the stack, so it is bounded loosely (printed below).
    expect(again.ms).toBeLessThan(3_000);
    const nowWoke = await secondWait;
    // With it, the delayed messages that fell due since the first receive (their timers woke it too).
    expect(nowWoke.value.map((m) => m.payload)).toContain('now');
    const wakeMs = performance.now() - sentAt;
    console.log(
      `1,500 subscriptions: 20 delays published in ${Math.round(published.ms)} ms, one in ${Math.round(again.ms)} ms; ` +
        `first receive (${received.length} messages) answered ${Math.round(woke.ms)} ms after the wait began (d0 due at 1,000 ms); ` +
        `an undelayed one ${Math.round(wakeMs)} ms after its publish was sent`,
    );
    expect(wakeMs).toBeLessThan(10_000);
  }, 240_000);
});

describe('concurrent requests are isolated as Lambda isolates them', () => {
  it('with 300 long polls held by one role, another tenant publishes within a second', async () => {
    const role = uniqueRole('poller');
    const held = TopicRef.unique('held');
    await admin.createTopic(held);
    await admin.expectStatus(204, 'POST', `${held.namespace.permissionsPath}/${role}`, { body: ['consume'] });
    const pollers = new ConsumerApi(stack.url, tokenFor(role, { secret: TEST_TOKEN_SECRET }));
    const pollerConsumers: TestConsumer[] = [];
    await inParallel(300, 16, async () => {
      pollerConsumers.push(await pollers.subscribe(held, 'waiting', { subscriptionType: 'Shared' }));
    });
    const pollsStarted = performance.now();
    const pollEnds: number[] = [];
    const polls = pollerConsumers.map((consumer) =>
      consumer.sendReceive({ maxMessages: 1, waitMs: 20_000 }).then((answer) => {
        pollEnds.push(performance.now() - pollsStarted);
        return answer;
      }),
    );
    // Let the polls reach their wait (300 cold containers start on a machine of two cores).
    await new Promise((resolve) => setTimeout(resolve, 5_000));

    // The other tenant's topic has a subscription: its publish rings it, so it needs an SQS socket.
    const other = new NamespaceRef(`other-${uniqueRole('tenant')}`, 'ns').topic('orders');
    await admin.createTopic(other);
    await admin.createSubscription(other, 'audit');
    const publishes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { ms, value } = await timed(() =>
        admin.send('POST', other.producePath, { body: { messages: [{ payload: `p${i}` }] } }),
      );
      expect(value.status).toBe(200);
      publishes.push(ms);
    }
    console.log(
      `300 long polls held: another tenant's publishes answered in ${publishes.map(Math.round).join(', ')} ms; ` +
        `${pollEnds.length} polls had ended`,
    );
    expect(pollEnds).toEqual([]);
    // Within a second: the median of five. Each is under 3 s: this machine's two cores are shared
    // with other suites (a load average near 20 was seen), and one publish can wait for a core.
    const sorted = [...publishes].sort((a, b) => a - b);
    expect(sorted[2]).toBeLessThan(1_000);
    expect(sorted[4]).toBeLessThan(3_000);

    // The polls were held all along, and end as they should: empty, each a 200.
    const answers = await Promise.all(polls);
    const failed = answers.filter((answer) => answer.status !== 200);
    pollEnds.sort((a, b) => a - b);
    console.log(
      `polls ended ${Math.round(pollEnds[0] ?? 0)} to ${Math.round(pollEnds[pollEnds.length - 1] ?? 0)} ms after they began; ` +
        `${failed.length} failed${failed[0] ? `, e.g. ${failed[0].status} ${failed[0].text}` : ''}`,
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    // Held for their whole wait, not refused or cut short.
    expect(pollEnds[0]).toBeGreaterThan(19_000);
  }, 240_000);
});
