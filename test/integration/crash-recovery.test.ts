import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { AdminApi, SUPERUSER_ROLE, TopicRef, tokenFor } from '../support/admin-fixtures.ts';
import { ConsumerApi, sleep, type TestConsumer, type TimedMessage } from '../support/consumer-fixtures.ts';
import {
  type EmbeddedProcess,
  makeDataDir,
  startEmbeddedProcess,
  TEST_TOKEN_SECRET,
} from '../support/embedded-process.ts';

// Crash recovery of issue 4 (criterion 11): a stack of its own runs a publish/consume workload and
// is killed with SIGKILL in the middle of it, then started again on the same data directory. Every
// message not acknowledged must be delivered (at least once) after the restart, and no
// acknowledged one. Requests in flight when the stack died are "uncertain": their messages may or
// may not be stored, their acknowledgements may or may not have landed, so the checks leave them
// out. The subscription queues live in local SQS's memory: they come back from the cursors.

const TOTAL = 200;
const BATCH = 25;
/** Kill once this many messages were published (confirmed), with acknowledgements in flight. */
const KILL_AFTER_PUBLISHED = 150;

const index = (payload: string) => Number(payload.slice(1));

/** What the client knows for sure, and what it cannot know, about the run before the crash. */
class WorkloadRecord {
  readonly published = new Set<string>();
  readonly uncertainPublished = new Set<string>();
  /** Shared subscription `work`: individually acknowledged payloads. */
  readonly acked = new Set<string>();
  readonly uncertainAcked = new Set<string>();
  /** Failover subscription `ordered`: the highest index cumulatively acknowledged (204 seen). */
  orderedAckedUpTo = -1;
  /** The highest index of a cumulative ack in flight at the crash. */
  orderedUncertainUpTo = -1;
}

describe('crash recovery', () => {
  const dataDirs: string[] = [];
  const running: EmbeddedProcess[] = [];

  afterAll(async () => {
    for (const stack of running) await stack.stop('SIGTERM');
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  });

  async function start(dataDir: string) {
    const stack = await startEmbeddedProcess({ dataDir });
    running.push(stack);
    const token = tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET });
    return { stack, admin: new AdminApi(stack.url, token), consumers: new ConsumerApi(stack.url, token) };
  }

  it('after SIGKILL mid-workload, every unacknowledged message is delivered and no acknowledged one', async () => {
    const startedAt = Date.now();
    const dataDir = await makeDataDir('ackline-crash-');
    dataDirs.push(dataDir);
    const first = await start(dataDir);
    const topic = TopicRef.unique('crash');
    const work = await first.consumers.subscribe(topic, 'work', { subscriptionType: 'Shared' });
    const ordered = await first.consumers.subscribe(topic, 'ordered', { subscriptionType: 'Failover' });
    const record = new WorkloadRecord();

    // Act 1: publish in batches while both subscriptions consume; the Shared one acknowledges every
    // other message (by handle or by id), the Failover one acknowledges cumulatively.
    let next = 0;
    let killed = false;
    while (!killed) {
      const payloads = Array.from({ length: Math.min(BATCH, TOTAL - next) }, (_, i) => `w${next + i}`);
      next += payloads.length;
      const publish = publishBatch(first.admin, topic, payloads, record);
      const consumeWork = receiveTwice(work).then(async (batch) => {
        const toAck = batch.filter((m) => index(m.payload) % 2 === 0);
        const byHandle = toAck.filter((m) => index(m.payload) % 4 === 0);
        const byId = toAck.filter((m) => index(m.payload) % 4 === 2);
        await Promise.all([
          track(() => work.ack(byHandle), byHandle, record),
          track(() => work.ackIds(byId.map((m) => m.messageId)), byId, record),
        ]);
      });
      const consumeOrdered = receiveTwice(ordered).then(async (batch) => {
        // Acknowledge up to the middle of the batch: the rest stays delivered but unacknowledged.
        const upTo = batch[Math.floor(batch.length / 2)];
        if (!upTo) return;
        try {
          await ordered.ackCumulative(upTo.messageId);
          record.orderedAckedUpTo = Math.max(record.orderedAckedUpTo, index(upTo.payload));
        } catch {
          record.orderedUncertainUpTo = Math.max(record.orderedUncertainUpTo, index(upTo.payload));
        }
      });
      if (record.published.size >= KILL_AFTER_PUBLISHED) {
        // Requests are in flight: kill the stack under them a moment later.
        await sleep(30);
        first.stack.child.kill('SIGKILL');
        killed = true;
      }
      await Promise.allSettled([publish, consumeWork, consumeOrdered]);
      if (next >= TOTAL && !killed) {
        first.stack.child.kill('SIGKILL');
        killed = true;
      }
    }
    await first.stack.stop('SIGKILL');

    // Act 2: start again on the same data directory; the consumers keep their ids.
    const second = await start(dataDir);
    const workAgain = work.as(second.consumers);
    const orderedAgain = ordered.as(second.consumers);
    const mustArrive = [...record.published].filter(
      (p) => !record.acked.has(p) && !record.uncertainAcked.has(p),
    );
    const orderedMustArrive = [...record.published].filter(
      (p) => index(p) > Math.max(record.orderedAckedUpTo, record.orderedUncertainUpTo),
    );
    // What each consumer was handed and did not acknowledge is still pending for it (the pending
    // state is durable, unlike a Pulsar broker's): it asks for it again, as a client that dropped
    // those messages would.
    await Promise.all([workAgain.redeliverUnacknowledged(), orderedAgain.redeliverUnacknowledged()]);
    const [afterWork, afterOrdered] = await Promise.all([
      drain(workAgain, new Set(mustArrive), 20_000),
      drain(orderedAgain, new Set(orderedMustArrive), 20_000),
    ]);
    if (afterWork.length > 0) await workAgain.ack(afterWork);
    if (afterOrdered.length > 0)
      await orderedAgain.ackCumulative(afterOrdered[afterOrdered.length - 1]!.messageId);
    // A publish in flight at the kill may have been stored: its messages are owed too, and may come
    // after the drain stopped waiting (a loaded machine). Take them until the backlog is empty; each
    // must be one of those uncertain publishes.
    const late = await settle(second.admin, topic, { work: workAgain, ordered: orderedAgain });
    const backlogs = await second.admin.backlogs(topic);

    // Assert
    const workPayloads = new Set(afterWork.map((m) => m.payload));
    const orderedIndexes = afterOrdered.map((m) => index(m.payload));
    expect(record.acked.size).toBeGreaterThan(20);
    expect(record.orderedAckedUpTo).toBeGreaterThan(0);
    expect(mustArrive.filter((p) => !workPayloads.has(p))).toEqual([]);
    expect([...record.acked].filter((p) => workPayloads.has(p))).toEqual([]);
    expect(orderedMustArrive.filter((p) => !orderedIndexes.includes(index(p)))).toEqual([]);
    expect(orderedIndexes.filter((i) => i <= record.orderedAckedUpTo)).toEqual([]);
    expect(orderedIndexes).toEqual([...orderedIndexes].sort((a, b) => a - b));
    expect(late.filter((p) => !record.uncertainPublished.has(p))).toEqual([]);
    expect(backlogs).toEqual({ work: 0, ordered: 0 });
    expect(Date.now() - startedAt).toBeLessThan(60_000);
  }, 90_000);
});

/** Publishes one batch, recording its payloads as published, or as uncertain when the call failed. */
async function publishBatch(
  admin: AdminApi,
  topic: TopicRef,
  payloads: readonly string[],
  record: WorkloadRecord,
): Promise<void> {
  if (payloads.length === 0) return;
  try {
    await admin.produce(
      topic,
      payloads.map((payload) => ({ payload })),
    );
    for (const payload of payloads) record.published.add(payload);
  } catch {
    for (const payload of payloads) record.uncertainPublished.add(payload);
  }
}

/**
 * Receives and acknowledges on each subscription until the topic's backlogs are empty (at most
 * 20 s); answers the payloads taken this way.
 */
async function settle(
  admin: AdminApi,
  topic: TopicRef,
  consumers: { readonly work: TestConsumer; readonly ordered: TestConsumer },
): Promise<string[]> {
  const taken: string[] = [];
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const backlogs = await admin.backlogs(topic);
    if ((backlogs.work ?? 0) === 0 && (backlogs.ordered ?? 0) === 0) break;
    const [work, ordered] = await Promise.all([
      consumers.work.receive(10, 1000),
      consumers.ordered.receive(10, 1000),
    ]);
    if (work.length > 0) await consumers.work.ack(work);
    const last = ordered[ordered.length - 1];
    if (last) await consumers.ordered.ackCumulative(last.messageId);
    taken.push(...work.map((m) => m.payload), ...ordered.map((m) => m.payload));
  }
  return taken;
}

/** Two receive calls in a row (up to 20 messages). */
async function receiveTwice(consumer: TestConsumer): Promise<TimedMessage[]> {
  const first = await consumer.receive(10, 200);
  return [...first, ...(await consumer.receive(10, 200))];
}

/** Records the payloads of `messages` as acknowledged when `ack` succeeded, as uncertain otherwise. */
async function track(
  ack: () => Promise<void>,
  messages: readonly TimedMessage[],
  record: WorkloadRecord,
): Promise<void> {
  if (messages.length === 0) return;
  try {
    await ack();
    for (const m of messages) record.acked.add(m.payload);
  } catch {
    for (const m of messages) record.uncertainAcked.add(m.payload);
  }
}

/**
 * Receives (without acknowledging) until every payload of `expected` arrived or `timeoutMs`
 * passed, then 1.5 s more so that deliveries which should not happen have a chance to show up.
 */
async function drain(
  consumer: TestConsumer,
  expected: Set<string>,
  timeoutMs: number,
): Promise<TimedMessage[]> {
  const received: TimedMessage[] = [];
  const missing = new Set(expected);
  const deadline = Date.now() + timeoutMs;
  while (missing.size > 0 && Date.now() < deadline) {
    const batch = await consumer.receive(10, Math.min(1000, deadline - Date.now()));
    for (const m of batch) missing.delete(m.payload);
    received.push(...batch);
  }
  received.push(...(await consumer.receiveFor(1500)));
  return received;
}
