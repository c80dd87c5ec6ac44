// Maintenance's work per run follows activity, not everything ever created: it reads the activity
// index, visits what is due, and takes settled subscriptions out. Reads are counted by items
// returned (test/support/counting-ports.ts).
import { describe, expect, it } from 'vitest';
import { acknowledgeMessages } from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { MARK_EVERY_MS } from '../../../../shared/application/maintenance/activity.ts';
import {
  BACKLOG_REVISIT_MS,
  maintainSubscriptions,
} from '../../../../shared/application/maintenance/maintain-subscriptions.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import { acknowledgeMessage } from '../../../../shared/application/subscriptions/acknowledge-message.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import { skipMessages } from '../../../../shared/application/subscriptions/skip-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { countingPorts } from '../../../support/counting-ports.ts';
import { InMemoryActivityIndex } from '../../../support/in-memory-activity-index.ts';
import { InMemoryAuditLog } from '../../../support/in-memory-audit-log.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const router = new RoundRobinRouter(0);
const run = (ports: UseCasePorts) => maintainSubscriptions(ports, { deadlineMs: Number.MAX_SAFE_INTEGER });

function world() {
  const clock = new ManualClock(1_700_000_000_000);
  const activity = new InMemoryActivityIndex();
  // A deployment that had the index from its start (seeding is tested below).
  void activity.markSeeded();
  const audit = new InMemoryAuditLog();
  const { ports } = inMemoryPorts({
    clock,
    activity,
    audit,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  return { clock, activity, audit, ports };
}

/** `count` topics, each with a subscription that consumed (skipped) the one message published to it. */
async function idleTopics(ports: UseCasePorts, count: number): Promise<TopicName[]> {
  const topics: TopicName[] = [];
  for (let i = 0; i < count; i++) {
    const topic = TopicName.parse(`persistent://public/idle/t${i}`);
    await createTopic(ports, admin, topic, 0);
    await createSubscription(ports, admin, topic, {
      name: 'sub',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    await publishMessages(ports, admin, topic, { messages: [{ payload: 'once', properties: {} }], router });
    await skipMessages(ports, admin, topic, { subscriptionName: 'sub', numMessages: 1 });
    topics.push(topic);
  }
  return topics;
}

describe('maintenance work follows activity', () => {
  it('with 1,000 idle topics a run reads nothing but the empty index, once they settled', async () => {
    const w = world();
    await idleTopics(w.ports, 1_000);
    w.clock.advance(MARK_EVERY_MS);
    const counted = countingPorts(w.ports);

    const settling = await run(counted.ports);
    const settlingReads = counted.itemsRead();
    counted.reset();
    const idle = await run(counted.ports);
    const idleReads = counted.itemsRead();

    expect(settling).toMatchObject({ subscriptions: 1_000, due: 1_000, settled: 1_000 });
    expect(settlingReads).toBeGreaterThan(1_000);
    expect(idle).toMatchObject({ subscriptions: 0, due: 0, visited: 0 });
    // The index list (empty), the deletion jobs (none), the seeding flag: a constant.
    expect(idleReads).toBeLessThanOrEqual(2);
    console.log(
      `items read per maintenance run, 1,000 idle topics: ${settlingReads} settling, then ${idleReads}`,
    );
    // 1,000 topics in memory: under 2 s alone, more on a loaded machine.
  }, 20_000);

  it('a subscription marked within the last minute is kept, so a mark a process left out is never lost', async () => {
    const w = world();
    await idleTopics(w.ports, 1);

    const first = await run(w.ports);
    w.clock.advance(MARK_EVERY_MS);
    const second = await run(w.ports);

    expect(first).toMatchObject({ due: 1, settled: 0 });
    expect(second).toMatchObject({ due: 1, settled: 1 });
    expect(w.activity.entries.size).toBe(0);
  });

  it('activity after settling brings a subscription back: a publish marks it, the next run visits it', async () => {
    const w = world();
    const [topic] = await idleTopics(w.ports, 3);
    w.clock.advance(MARK_EVERY_MS);
    await run(w.ports);
    expect(w.activity.entries.size).toBe(0);

    await publishMessages(w.ports, admin, topic as TopicName, {
      messages: [{ payload: 'again', properties: {} }],
      router,
    });
    const summary = await run(w.ports);

    expect(summary).toMatchObject({ subscriptions: 1, due: 1, visited: 1 });
  });

  it('a backlog visited within a minute of its mark is not deferred: a consumer that comes in the process that marked it gets its acks folded by the next run', async () => {
    const w = world();
    const topic = TopicName.parse('persistent://public/idle/early-visit');
    await createTopic(w.ports, admin, topic, 0);
    await createSubscription(w.ports, admin, topic, {
      name: 'sub',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    await publishMessages(w.ports, admin, topic, {
      messages: [{ payload: 'waiting', properties: {} }],
      router,
    });
    // Visited at once: a backlog and no consumer yet.
    const early = await run(w.ports);
    // A consumer subscribes and acknowledges within the minute: this process's marks are skipped.
    const { consumerId } = await subscribeConsumer(w.ports, admin, {
      topic,
      subscription: 'sub',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    const [message] = await receiveMessages(w.ports, admin, consumerId, { maxMessages: 1 });
    await acknowledgeMessages(w.ports, admin, consumerId, {
      messageIds: [],
      deliveryHandles: [message?.deliveryHandle as string],
    });
    w.clock.advance(5_000);
    const next = await run(w.ports);

    expect(early).toMatchObject({ due: 1, visited: 1 });
    expect(next).toMatchObject({ due: 1, visited: 1, foldedCursors: 1 });
  });

  it('a backlog nobody consumes is visited every BACKLOG_REVISIT_MS, and its age reported from the index in between', async () => {
    const w = world();
    const topic = TopicName.parse('persistent://public/idle/backlogged');
    await createTopic(w.ports, admin, topic, 0);
    await createSubscription(w.ports, admin, topic, {
      name: 'sub',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    await publishMessages(w.ports, admin, topic, {
      messages: [{ payload: 'waiting', properties: {} }],
      router,
    });
    w.clock.advance(60_000);

    const visit = await run(w.ports);
    w.clock.advance(5 * 60_000);
    const between = await run(w.ports);
    w.clock.advance(BACKLOG_REVISIT_MS);
    const revisit = await run(w.ports);

    expect(visit).toMatchObject({ due: 1, visited: 1, oldestBacklog: { ageMs: 60_000 } });
    expect(between).toMatchObject({
      subscriptions: 1,
      due: 0,
      visited: 0,
      oldestBacklog: { ageMs: 6 * 60_000 },
    });
    expect(revisit).toMatchObject({ due: 1, visited: 1 });
  });

  it('the first run on a deployment older than the index enters every subscription once, then reads the index only', async () => {
    const w = world();
    await idleTopics(w.ports, 5);
    w.activity.entries.clear();
    const unseeded = new InMemoryActivityIndex();
    const ports = { ...w.ports, activity: unseeded };

    const seeding = await run(ports);
    w.clock.advance(MARK_EVERY_MS);
    const settling = await run(ports);

    expect(seeding).toMatchObject({ subscriptions: 5, visited: 5 });
    expect(await unseeded.seeded()).toBe(true);
    expect(settling).toMatchObject({ subscriptions: 5, settled: 5 });
    expect(unseeded.entries.size).toBe(0);
  });

  it('audit records past the retention (30 days) are deleted by maintenance; newer ones stay', async () => {
    const w = world();
    const topic = TopicName.parse('persistent://public/idle/audited');
    await createTopic(w.ports, admin, topic, 0);
    await createSubscription(w.ports, admin, topic, {
      name: 'sub',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    const [published] = await publishMessages(w.ports, admin, topic, {
      messages: [{ payload: 'a', properties: {} }],
      router,
    });
    const [ledgerId, entryId] = (published?.messageId ?? '').split(':');
    const acknowledge = (requestId: string) =>
      acknowledgeMessage(w.ports, {
        topic,
        ledgerId,
        entryId,
        subscriptionNames: ['sub'],
        dryRun: false,
        principal: admin,
        requestId,
      });
    await acknowledge('old');
    w.clock.advance(20 * 86_400_000);
    await acknowledge('newer');

    w.clock.advance(10 * 86_400_000);
    const summary = await run(w.ports);

    expect(summary.expiredAuditRecords).toBe(1);
    expect(w.audit.size).toBe(1);
    expect(
      (await w.audit.list(topic.toString(), 10, w.clock.nowMs())).map((record) => record.requestId),
    ).toEqual(['newer']);
  });
});
