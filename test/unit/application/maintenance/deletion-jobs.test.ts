// Topic and subscription deletion as resumable jobs, over in-memory ports: the call returns
// without purging the backlog, a crash in the middle of the call is finished by maintenance, and
// a topic created again under the name starts empty.
import { describe, expect, it } from 'vitest';
import { acknowledgeMessages } from '../../../../shared/application/consumers/consumer-acks.ts';
import { closeConsumer } from '../../../../shared/application/consumers/consumer-session.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import {
  PURGE_GRACE_MS,
  STALE_DELETION_MS,
} from '../../../../shared/application/maintenance/deletion-jobs.ts';
import { maintainSubscriptions } from '../../../../shared/application/maintenance/maintain-subscriptions.ts';
import { runScheduledJob } from '../../../../shared/application/maintenance/run-scheduled-job.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import { deleteSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic, deleteTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { InMemoryDeletionJobs } from '../../../support/in-memory-deletion-jobs.ts';
import { InMemoryDeliveryQueue } from '../../../support/in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { InMemoryTopicCatalog } from '../../../support/in-memory-topic-catalog.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/doomed');

function world() {
  const parts = {
    clock: new ManualClock(1_700_000_000_000),
    catalog: new InMemoryTopicCatalog(),
    ledger: new InMemoryLedger(400),
    dispatch: new InMemoryDispatchStore(),
    deliveryQueue: new InMemoryDeliveryQueue(),
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    deletions: new InMemoryDeletionJobs(),
  };
  return { ...parts, ports: inMemoryPorts(parts).ports };
}

type World = ReturnType<typeof world>;

/** A topic of two partitions with a backlog of `count` messages, a subscription and a consumer that acked some. */
async function populated(w: World, count: number) {
  await createTopic(w.ports, admin, topic, 2);
  const { consumerId } = await subscribeConsumer(w.ports, admin, {
    topic,
    subscription: 'billing',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {},
  });
  const router = new RoundRobinRouter(0);
  for (let sent = 0; sent < count; sent += 100) {
    const batch = Array.from({ length: Math.min(100, count - sent) }, (_, i) => ({
      payload: `m${sent + i}`,
      properties: {},
    }));
    await publishMessages(w.ports, admin, topic, { messages: batch, router });
  }
  const received = await receiveMessages(w.ports, admin, consumerId, { maxMessages: 20 });
  await acknowledgeMessages(w.ports, admin, consumerId, {
    messageIds: [],
    deliveryHandles: received.slice(0, 10).map((m) => m.deliveryHandle),
  });
  const partitions = [topic.partition(0), topic.partition(1)];
  const ledgerIds = (
    await Promise.all(partitions.map(async (partition) => (await w.ledger.state(partition))?.ledgers ?? []))
  )
    .flat()
    .map((ledger) => ledger.ledgerId);
  const cursorIds = (await Promise.all(partitions.map((partition) => w.catalog.listSubscriptions(partition))))
    .flat()
    .map((subscription) => subscription.cursorId);
  return { consumerId, partitions, ledgerIds, cursorIds };
}

/** Runs the scheduler's jobs as they come due, moving the clock, until none is left. */
async function drainScheduler(w: World, ports: UseCasePorts = w.ports): Promise<number> {
  let steps = 0;
  for (let round = 0; round < 1_000 && w.scheduler.jobs.length > 0; round++) {
    const jobs = w.scheduler.take().sort((a, b) => a.dueAtMs - b.dueAtMs);
    for (const job of jobs) {
      if (job.dueAtMs > w.clock.nowMs()) w.clock.set(job.dueAtMs);
      await runScheduledJob(ports, job);
      if (job.kind === 'purge') steps++;
    }
  }
  return steps;
}

function storedEntries(w: World, ledgerIds: readonly bigint[]): number {
  return ledgerIds.reduce((sum, ledgerId) => sum + w.ledger.storedEntries(ledgerId), 0);
}

async function expectGone(w: World, stored: Awaited<ReturnType<typeof populated>>) {
  expect(await w.catalog.getTopic(topic)).toBeUndefined();
  for (const partition of stored.partitions) {
    expect(await w.ledger.state(partition)).toBeUndefined();
    expect(await w.catalog.listSubscriptions(partition)).toEqual([]);
  }
  expect(storedEntries(w, stored.ledgerIds)).toBe(0);
  for (const ledgerId of stored.ledgerIds) expect(await w.ledger.ownerOf(ledgerId)).toBeUndefined();
  for (const cursorId of stored.cursorIds) {
    expect(w.dispatch.hasCursor(cursorId)).toBe(false);
    expect(w.deliveryQueue.rings.has(cursorId)).toBe(false);
  }
  expect(await w.consumers.get(stored.consumerId)).toBeUndefined();
  expect(w.consumers.records.size).toBe(0);
  expect(w.deletions.jobs.size).toBe(0);
}

describe('topic and subscription deletion (resumable jobs)', () => {
  it("as Pulsar's: 412 while a consumer is connected, changing nothing; force, a close or a lapsed lease lets it go", async () => {
    const w = world();
    const stored = await populated(w, 100);
    const refusals = [
      () => deleteSubscription(w.ports, admin, topic, { name: 'billing' }),
      () => deleteTopic(w.ports, admin, topic),
      () => deleteTopic(w.ports, admin, topic, { partitionedOnly: true }),
    ];
    for (const refused of refusals) {
      await expect(refused()).rejects.toThrow(
        expect.objectContaining({
          name: 'PreconditionFailedError',
          message: expect.stringMatching(
            /has active connected consumers: 1 on subscription billing.*force=true/,
          ),
        }),
      );
    }
    expect(await w.catalog.getTopic(topic)).toBeDefined();
    expect(await w.catalog.listSubscriptions(topic.partition(0))).toHaveLength(1);
    expect(w.deletions.jobs.size).toBe(0);
    expect(await w.consumers.get(stored.consumerId)).toBeDefined();

    await closeConsumer(w.ports, admin, stored.consumerId);
    await deleteSubscription(w.ports, admin, topic, { name: 'billing' });
    expect(await w.catalog.listSubscriptions(topic.partition(0))).toEqual([]);
  });

  it.each([
    [
      'subscription',
      (w: World) => deleteSubscription(w.ports, admin, topic, { name: 'billing', force: true }),
    ],
    ['topic', (w: World) => deleteTopic(w.ports, admin, topic, { force: true })],
  ])('a forced %s deletion disconnects the connected consumer: its next call answers 404, before any job ran', async (_what, forced) => {
    const w = world();
    const stored = await populated(w, 100);

    await forced(w);

    await expect(receiveMessages(w.ports, admin, stored.consumerId, { maxMessages: 100 })).rejects.toThrow(
      expect.objectContaining({ name: 'NotFoundError' }),
    );
    expect(await w.consumers.get(stored.consumerId)).toBeUndefined();
    // The jobs still purge the rest.
    await drainScheduler(w);
    expect(w.consumers.records.size).toBe(0);
  });

  it('a consumer whose lease lapsed does not hold a deletion back', async () => {
    const w = world();
    await populated(w, 10);
    w.clock.advance(24 * 3_600_000);
    await deleteTopic(w.ports, admin, topic);
    expect(await w.catalog.getTopic(topic)).toBeUndefined();
  });

  it('deleteTopic detaches the names and purges nothing itself; jobs purge page by page, then the last pass', async () => {
    const w = world();
    const stored = await populated(w, 6_000);
    expect(storedEntries(w, stored.ledgerIds)).toBe(6_000);

    await deleteTopic(w.ports, admin, topic, { force: true });

    // The call left the backlog to the jobs: every entry is still stored, nothing reaches it.
    expect(storedEntries(w, stored.ledgerIds)).toBe(6_000);
    expect(await w.catalog.getTopic(topic)).toBeUndefined();
    for (const partition of stored.partitions) expect(await w.ledger.state(partition)).toBeUndefined();
    expect(w.deletions.jobs.size).toBe(2);
    expect(w.scheduler.jobs.map((job) => job.kind)).toEqual(['purge', 'purge']);

    const steps = await drainScheduler(w);

    // 3,000 entries per partition at 20 pages of 100 a step: two steps per job, plus the last pass.
    expect(steps).toBeGreaterThan(4);
    expect(w.clock.nowMs()).toBeGreaterThanOrEqual(1_700_000_000_000 + PURGE_GRACE_MS);
    await expectGone(w, stored);
  });

  it('a crash in the middle of deleteTopic is finished by maintenance; a topic created again starts empty', async () => {
    const w = world();
    const stored = await populated(w, 500);
    // The process dies while detaching the second partition: jobs recorded, nothing scheduled.
    w.ledger.failNext('detachPartition', new Error('process killed'));

    await expect(deleteTopic(w.ports, admin, topic, { force: true })).rejects.toThrow('process killed');
    expect(w.deletions.jobs.size).toBe(2);
    expect(w.scheduler.jobs).toEqual([]);
    // The topic record goes last: until the deletion is finished the name is not free.
    expect(await w.catalog.getTopic(topic)).toBeDefined();

    // Maintenance before the job is stale leaves it alone; after, it resumes it.
    const early = await maintainSubscriptions(w.ports, { deadlineMs: Number.MAX_SAFE_INTEGER });
    expect(early.deletions).toEqual({ pending: 2, resumed: 0 });
    w.clock.advance(STALE_DELETION_MS + 1);
    const resumed = await maintainSubscriptions(w.ports, { deadlineMs: Number.MAX_SAFE_INTEGER });
    expect(resumed.deletions).toEqual({ pending: 2, resumed: 2 });
    expect(await w.catalog.getTopic(topic)).toBeUndefined();
    await drainScheduler(w);
    await expectGone(w, stored);

    await createTopic(w.ports, admin, topic, 2);
    for (const partition of stored.partitions) {
      const state = await w.ledger.state(partition);
      expect(state?.msgInCounter).toBe(0);
      for (const ledger of state?.ledgers ?? []) expect(stored.ledgerIds).not.toContain(ledger.ledgerId);
      expect(await w.catalog.listSubscriptions(partition)).toEqual([]);
    }
  });

  it('a topic deleted and created again before its jobs ran keeps the new incarnation whole when they run', async () => {
    const w = world();
    const stored = await populated(w, 300);
    await deleteTopic(w.ports, admin, topic, { force: true });
    await createTopic(w.ports, admin, topic, 2);
    const { consumerId } = await subscribeConsumer(w.ports, admin, {
      topic,
      subscription: 'billing',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    await publishMessages(w.ports, admin, topic, {
      messages: [{ payload: 'new', properties: {} }],
      router: new RoundRobinRouter(0),
    });

    await drainScheduler(w);

    expect(storedEntries(w, stored.ledgerIds)).toBe(0);
    expect(await w.consumers.get(consumerId)).toBeDefined();
    expect(await w.catalog.getTopic(topic)).toBeDefined();
    const received = await receiveMessages(w.ports, admin, consumerId, { maxMessages: 10 });
    expect(received.map((message) => message.payload)).toEqual(['new']);
  });

  it('deleteSubscription: a crash after recording the jobs is finished by maintenance; the cursor, queue and consumer go', async () => {
    const w = world();
    const stored = await populated(w, 200);
    w.catalog.failNext('deleteSubscription', new Error('process killed'));

    await expect(deleteSubscription(w.ports, admin, topic, { name: 'billing', force: true })).rejects.toThrow(
      'process killed',
    );

    w.clock.advance(STALE_DELETION_MS + 1);
    await maintainSubscriptions(w.ports, { deadlineMs: Number.MAX_SAFE_INTEGER });
    await drainScheduler(w);
    for (const partition of stored.partitions)
      expect(await w.catalog.listSubscriptions(partition)).toEqual([]);
    for (const cursorId of stored.cursorIds) {
      expect(w.dispatch.hasCursor(cursorId)).toBe(false);
      expect(w.deliveryQueue.rings.has(cursorId)).toBe(false);
    }
    expect(w.consumers.records.size).toBe(0);
    expect(w.deletions.jobs.size).toBe(0);
    // The topic and its messages stay.
    expect(storedEntries(w, stored.ledgerIds)).toBe(200);
  });
});
