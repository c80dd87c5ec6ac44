// Message TTL and retention (issue 13, criterion 3) over in-memory ports and a manual clock: the
// storage after a retention run is exactly what the policy keeps.
import { describe, expect, it } from 'vitest';
import { acknowledgeMessages } from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import {
  enforcePolicies,
  pagesBetween,
} from '../../../../shared/application/maintenance/enforce-policies.ts';
import { maintainSubscriptions } from '../../../../shared/application/maintenance/maintain-subscriptions.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import {
  resetCursorToEdge,
  resetCursorToMessageId,
  resetCursorToTimestamp,
} from '../../../../shared/application/subscriptions/reset-subscription.ts';
import {
  getPolicy,
  setMessageTTL,
  setRetention,
} from '../../../../shared/application/tenancy/manage-policies.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { getInternalStats, getTopicStats } from '../../../../shared/application/topics/topic-stats.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { planRetention, type StoredBatch } from '../../../../shared/domain/retention-plan.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';
import { consumeAll, publishPayloads, sharedEarliestConsumer } from '../../../support/use-case-steps.ts';

const admin: Principal = { role: 'admin', superuser: true };
const T0 = 1_700_000_000_000;
const MB = 1024 * 1024;

/** Pulsar's broker default, ackline's default too (a deployment sets another with ACKLINE_DEFAULT_RETENTION_*). */
const PULSAR_DEFAULT = { retentionTimeInMinutes: 0, retentionSizeInMB: 0 };
/** A deployment default that keeps everything. */
const KEEP_ALL = { retentionTimeInMinutes: -1, retentionSizeInMB: -1 };

function world(defaultRetention?: typeof PULSAR_DEFAULT) {
  const clock = new ManualClock(T0);
  const built = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  }).ports;
  const ports =
    defaultRetention === undefined ? built : { ...built, settings: { ...built.settings, defaultRetention } };
  // As the maintenance handler: the fold first (it moves mark-delete over what was acknowledged).
  const run = async () => {
    const { activePartitions } = await maintainSubscriptions(ports, { deadlineMs: clock.nowMs() + 60_000 });
    return enforcePolicies(ports, { deadlineMs: clock.nowMs() + 60_000, activePartitions });
  };
  return { clock, ports, run };
}

describe('planRetention (Pulsar: deleted when consumed and past the time or over the size)', () => {
  const batch = (entryId: number, publishTimeMs: number, bytes = 10): StoredBatch => ({
    ledgerId: 1n,
    firstEntryId: BigInt(entryId),
    count: 1,
    publishTimeMs,
    bytes,
  });
  const batches = [batch(0, 0), batch(1, 60_000), batch(2, 120_000), batch(3, 180_000)];
  it.each([
    {
      label: '0/0: everything consumed goes',
      retentionTimeMs: 0,
      retentionSizeBytes: 0,
      consumed: 3,
      expected: 4,
    },
    {
      label: '0/0: nothing past what is consumed',
      retentionTimeMs: 0,
      retentionSizeBytes: 0,
      consumed: 1,
      expected: 2,
    },
    {
      label: 'time 1 min: what is older',
      retentionTimeMs: 60_000,
      retentionSizeBytes: -1,
      consumed: 3,
      expected: 3,
    },
    {
      label: 'size 20 B: the oldest until 20 B are left',
      retentionTimeMs: -1,
      retentionSizeBytes: 20,
      consumed: 3,
      expected: 2,
    },
    {
      label: 'size 25 B and time 2 min: whichever lets more go',
      retentionTimeMs: 120_000,
      retentionSizeBytes: 25,
      consumed: 3,
      expected: 2,
    },
    { label: '-1/-1: nothing', retentionTimeMs: -1, retentionSizeBytes: -1, consumed: 3, expected: 0 },
  ])('$label', ({ retentionTimeMs, retentionSizeBytes, consumed, expected }) => {
    const plan = planRetention(batches, 40, {
      consumedUpTo: Position.of(1n, BigInt(consumed)),
      retentionTimeMs,
      retentionSizeBytes,
      nowMs: 180_001,
    });
    expect(plan.deleted.map((b) => Number(b.firstEntryId))).toEqual(
      Array.from({ length: expected }, (_, i) => i),
    );
  });

  it('pagesBetween names the cursor pages wholly gone', () => {
    const ledgers = [
      { ledgerId: 1n, entries: 250n },
      { ledgerId: 2n, entries: 300n },
    ];
    const pages = pagesBetween(ledgers, Position.of(1n, 150n), Position.of(2n, 120n));
    expect(pages.map((p) => `${p.ledgerId}:${p.page}`)).toEqual(['1:1', '1:2', '2:0']);
  });
});

describe('message TTL', () => {
  it('acknowledges, on every subscription, what was published more than the TTL ago', async () => {
    const { clock, ports, run } = world();
    const topic = TopicName.parse('persistent://tenant/ns/ttl');
    await createTopic(ports, admin, topic, 0);
    await createSubscription(ports, admin, topic, { name: 'a', type: 'Shared', initialPosition: 'Earliest' });
    await createSubscription(ports, admin, topic, {
      name: 'b',
      type: 'Exclusive',
      initialPosition: 'Earliest',
    });
    await publishPayloads(ports, admin, topic, ['o1', 'o2', 'o3']);
    clock.advance(120_000);
    await publishPayloads(ports, admin, topic, ['n1', 'n2']);
    clock.advance(10_000);
    await setMessageTTL(ports, admin, { namespace: 'tenant/ns' }, 60);
    // The TTL alone: retention keeps everything here (the default, 0/0, would delete what expired).
    await setRetention(
      ports,
      admin,
      { namespace: 'tenant/ns' },
      { retentionTimeInMinutes: -1, retentionSizeInMB: -1 },
    );

    const summary = await run();

    expect(summary).toMatchObject({ partitions: 1, expiredCursors: 2, trimmedEntries: 0 });
    const stats = await getTopicStats(ports, admin, topic);
    expect(stats.subscriptions.a?.msgBacklog).toBe(2);
    expect(stats.subscriptions.b?.msgBacklog).toBe(2);
    // A topic's own TTL wins over its namespace's.
    await setMessageTTL(ports, admin, { topic }, 0);
    expect(await getPolicy(ports, admin, { topic }, { name: 'messageTTLInSeconds', applied: true })).toBe(0);
    clock.advance(120_000);
    expect((await run()).expiredCursors).toBe(0);
  });
});

describe('retention', () => {
  it('time: deletes what every subscription consumed and is older, and their cursor pages; storage is what is kept', async () => {
    const { clock, ports, run } = world();
    const topic = TopicName.parse('persistent://tenant/ns/retain');
    const consumerId = await sharedEarliestConsumer(ports, admin, topic);
    await publishPayloads(
      ports,
      admin,
      topic,
      Array.from({ length: 250 }, (_, i) => `old-${i}`.padEnd(10, '.')),
    );
    clock.advance(120_000);
    await publishPayloads(
      ports,
      admin,
      topic,
      Array.from({ length: 50 }, (_, i) => `new-${i}`.padEnd(10, '.')),
    );
    await consumeAll(ports, admin, consumerId);
    await publishPayloads(ports, admin, topic, ['unread'.padEnd(10, '.')]);
    await setRetention(ports, admin, { topic }, { retentionTimeInMinutes: 1, retentionSizeInMB: -1 });
    const before = await getTopicStats(ports, admin, topic);
    expect(before.storageSize).toBe(3_010);

    const summary = await run();

    // 250 older than a minute, consumed: deleted. 50 newer and 1 unread: kept.
    expect(summary).toMatchObject({ trimmedEntries: 250, trimmedBytes: 2_500, deletedPages: 2 });
    const after = await getTopicStats(ports, admin, topic);
    expect(after.storageSize).toBe(510);
    const internal = (await getInternalStats(ports, admin, topic)) as {
      numberOfEntries: number;
      totalSize: number;
    };
    expect(internal).toMatchObject({ numberOfEntries: 51, totalSize: 510 });
    const ledgerId = (await ports.ledger.state(topic))?.ledgers[0]?.ledgerId as bigint;
    expect(await ports.ledger.readEntry(Position.of(ledgerId, 249n))).toBeUndefined();
    expect((await ports.ledger.readEntry(Position.of(ledgerId, 250n)))?.payload).toBe('new-0.....');
    // The subscription's pages of what went are gone (pages 0 and 1: entries 0..199).
    const sub = (await ports.catalog.listSubscriptions(topic))[0];
    const pages = await ports.dispatch.readPages(sub?.cursorId as string, [
      { ledgerId, page: 0n },
      { ledgerId, page: 1n },
    ]);
    expect(
      pages.every((page) => page.version === 0 && page.acked.size === 0 && page.floor === undefined),
    ).toBe(true);
    // A subscription created now at Earliest starts at the first entry kept.
    await createSubscription(ports, admin, topic, {
      name: 'late',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    expect((await getTopicStats(ports, admin, topic)).subscriptions.late?.msgBacklog).toBe(51);
    // A second run deletes nothing more (the rest is within the time limit or unread).
    expect((await run()).trimmedEntries).toBe(0);
  });

  it('size: keeps what the size allows of what was consumed; never what a subscription still needs', async () => {
    const { ports, run } = world();
    const topic = TopicName.parse('persistent://tenant/ns/sized');
    const consumerId = await sharedEarliestConsumer(ports, admin, topic);
    const half = 'x'.repeat(MB / 2);
    await publishPayloads(ports, admin, topic, [half, half, half]);
    await consumeAll(ports, admin, consumerId);
    await publishPayloads(ports, admin, topic, [half]);
    await setRetention(
      ports,
      admin,
      { namespace: 'tenant/ns' },
      { retentionTimeInMinutes: -1, retentionSizeInMB: 1 },
    );

    const summary = await run();

    // 2 MB stored, 1 MB allowed: the two oldest consumed go; the unread one stays whatever the size.
    expect(summary).toMatchObject({ trimmedEntries: 2, trimmedBytes: MB });
    expect((await getTopicStats(ports, admin, topic)).storageSize).toBe(MB);
    await setRetention(
      ports,
      admin,
      { namespace: 'tenant/ns' },
      { retentionTimeInMinutes: 0, retentionSizeInMB: 0 },
    );
    expect((await run()).trimmedEntries).toBe(1);
    expect((await getTopicStats(ports, admin, topic)).storageSize).toBe(MB / 2);
  });

  it('a deployment default of -1/-1 keeps everything: no policy anywhere trims nothing, even without a subscription', async () => {
    const { ports, run } = world(KEEP_ALL);
    const topic = TopicName.parse('persistent://tenant/ns/kept');
    await createTopic(ports, admin, topic, 2);
    await publishPayloads(ports, admin, topic, ['a', 'b', 'c', 'd']);
    expect(await getPolicy(ports, admin, { topic }, { name: 'retention', applied: true })).toEqual({
      retentionTimeInMinutes: -1,
      retentionSizeInMB: -1,
    });
    expect(await run()).toMatchObject({ trimmedEntries: 0 });
    expect((await getTopicStats(ports, admin, topic)).storageSize).toBeGreaterThan(0);
  });

  it('without a subscription everything consumed is everything: a 0/0 default keeps nothing, -1/-1 keeps it all', async () => {
    const { ports, run } = world(PULSAR_DEFAULT);
    const topic = TopicName.parse('persistent://tenant/ns/nosub');
    await createTopic(ports, admin, topic, 2);
    await setRetention(ports, admin, { topic }, { retentionTimeInMinutes: -1, retentionSizeInMB: -1 });
    await publishPayloads(ports, admin, topic, ['a', 'b', 'c', 'd']);
    expect(await run()).toMatchObject({ partitions: 0, trimmedEntries: 0 });
    expect((await getTopicStats(ports, admin, topic)).storageSize).toBeGreaterThan(0);
    // No policy anywhere under a 0/0 default: entries nobody subscribed to are not retained.
    await setRetention(ports, admin, { topic }, null);
    expect(await getPolicy(ports, admin, { topic }, { name: 'retention', applied: true })).toEqual({
      retentionTimeInMinutes: 0,
      retentionSizeInMB: 0,
    });
    expect(await run()).toMatchObject({ partitions: 2, trimmedEntries: 4 });
    expect((await getTopicStats(ports, admin, topic)).storageSize).toBe(0);
  });

  it('no policy anywhere: what every subscription acknowledged goes, what one has not is kept', async () => {
    const { clock, ports, run } = world(PULSAR_DEFAULT);
    const topic = TopicName.parse('persistent://tenant/ns/default-retention');
    const consumerId = await sharedEarliestConsumer(ports, admin, topic);
    await createSubscription(ports, admin, topic, {
      name: 'slow',
      type: 'Shared',
      initialPosition: 'Earliest',
    });
    await publishPayloads(ports, admin, topic, ['a', 'b', 'c']);
    clock.advance(1_000);
    await consumeAll(ports, admin, consumerId);
    expect((await run()).trimmedEntries).toBe(0);
    await resetCursorToEdge(ports, {
      topic,
      subscriptionName: 'slow',
      dryRun: false,
      principal: admin,
      requestId: 'skip',
      edge: 'latest',
    });
    expect((await run()).trimmedEntries).toBe(3);
    expect((await getTopicStats(ports, admin, topic)).storageSize).toBe(0);
  });

  it('follows activity under the 0/0 default: settled topics cost no visit, a publish brings one back', async () => {
    const { clock, ports, run } = world(PULSAR_DEFAULT);
    const topics = Array.from({ length: 20 }, (_, i) =>
      TopicName.parse(`persistent://tenant/ns/active-${i}`),
    );
    for (const topic of topics) {
      const consumerId = await sharedEarliestConsumer(ports, admin, topic);
      await publishPayloads(ports, admin, topic, ['a', 'b']);
      await consumeAll(ports, admin, consumerId);
    }
    const lonely = TopicName.parse('persistent://tenant/ns/lonely');
    await publishPayloads(ports, admin, lonely, ['x', 'y']);

    // Every partition had activity: each is visited and trimmed of what was consumed.
    expect(await run()).toMatchObject({ partitions: 21, trimmedEntries: 42 });
    // The consumers' leases lapse; their subscriptions settle, the lonely topic's mark goes.
    clock.advance(2 * 60 * 60_000);
    await run();
    expect(await ports.activity.list()).toEqual([]);
    expect(await ports.activity.listPartitions()).toEqual([]);
    expect(await run()).toMatchObject({ partitions: 0, trimmedEntries: 0 });

    await publishPayloads(ports, admin, lonely, ['z']);
    await publishPayloads(ports, admin, topics[3] as TopicName, ['c']);
    const summary = await run();
    expect(summary.partitions).toBe(2);
    // The lonely topic keeps nothing; the other keeps what its subscription has not consumed.
    expect(summary.trimmedEntries).toBe(1);
    expect((await getTopicStats(ports, admin, lonely)).storageSize).toBe(0);
    expect((await getTopicStats(ports, admin, topics[3] as TopicName)).storageSize).toBe(1);
  });

  it('a deployment default of -1/-1 keeps everything nobody set a policy for', async () => {
    const { ports } = world();
    const keepAll = {
      ...ports,
      settings: {
        ...ports.settings,
        defaultRetention: { retentionTimeInMinutes: -1, retentionSizeInMB: -1 },
      },
    };
    const topic = TopicName.parse('persistent://tenant/ns/keep-all');
    await createTopic(keepAll, admin, topic, 0);
    await publishPayloads(keepAll, admin, topic, ['a', 'b']);
    const summary = await enforcePolicies(keepAll, { deadlineMs: Number.MAX_SAFE_INTEGER });
    expect(summary).toMatchObject({ partitions: 0, trimmedEntries: 0 });
    expect((await getTopicStats(keepAll, admin, topic)).storageSize).toBeGreaterThan(0);
  });

  it('a reset to before what retention deleted starts at the first kept entry: a deleted message is never delivered again', async () => {
    const { clock, ports, run } = world();
    const topic = TopicName.parse('persistent://tenant/ns/reset-after-trim');
    const consumerId = await sharedEarliestConsumer(ports, admin, topic);
    await publishPayloads(ports, admin, topic, ['gone-0', 'gone-1', 'gone-2']);
    clock.advance(1_000);
    await consumeAll(ports, admin, consumerId);
    await setRetention(ports, admin, { topic }, { retentionTimeInMinutes: 0, retentionSizeInMB: 0 });
    expect((await run()).trimmedEntries).toBe(3);
    await publishPayloads(ports, admin, topic, ['kept-0', 'kept-1']);
    await consumeAll(ports, admin, consumerId);
    const ledgerId = (await ports.ledger.state(topic))?.ledgers[0]?.ledgerId as bigint;
    const request = { topic, subscriptionName: 'sub', dryRun: false, principal: admin, requestId: 'r' };
    const rewinds = [
      () => resetCursorToTimestamp(ports, { ...request, timestampMs: 0 }),
      () =>
        resetCursorToMessageId(ports, { ...request, position: Position.of(ledgerId, 0n), isExcluded: false }),
      () => resetCursorToEdge(ports, { ...request, edge: 'earliest' }),
    ];
    for (const [index, rewind] of rewinds.entries()) {
      await rewind();
      expect((await getTopicStats(ports, admin, topic)).subscriptions.sub?.msgBacklog).toBe(2);
      const again = await receiveMessages(ports, admin, consumerId, { maxMessages: 100 });
      expect(
        again.map((m) => m.payload),
        `rewind ${index}`,
      ).toEqual(['kept-0', 'kept-1']);
      await acknowledgeMessages(ports, admin, consumerId, {
        messageIds: [],
        deliveryHandles: again.map((m) => m.deliveryHandle),
      });
    }
    await resetCursorToEdge(ports, { ...request, edge: 'latest' });
    expect((await getTopicStats(ports, admin, topic)).subscriptions.sub?.msgBacklog).toBe(0);
  });

  it('refuses invalid policies as Pulsar does (412)', async () => {
    const { ports } = world();
    await expect(
      setRetention(
        ports,
        admin,
        { namespace: 'tenant/ns' },
        { retentionTimeInMinutes: 0, retentionSizeInMB: 5 },
      ),
    ).rejects.toThrow(/Setting a single time or size limit to 0 is invalid/);
    await expect(setMessageTTL(ports, admin, { namespace: 'tenant/ns' }, -5)).rejects.toThrow(
      /Invalid value for message TTL/,
    );
    await expect(
      setRetention(ports, { role: 'x', superuser: false }, { namespace: 'tenant/ns' }, null),
    ).rejects.toThrow(/not a superuser/);
  });
});
