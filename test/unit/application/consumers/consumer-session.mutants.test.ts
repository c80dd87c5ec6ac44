import { describe, expect, it } from 'vitest';
import {
  closeConsumer,
  dispatchConsumerOf,
  keepAlive,
  keySharedMembers,
  leaseMsOf,
  longestWaitMs,
  renewLease,
  requireConsumer,
  subscriptionKey,
} from '../../../../shared/application/consumers/consumer-session.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import { cursorOf, engineOf } from '../../../../shared/application/engine/engine-ports.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { DEFAULT_CONSUMER_LEASE_MS } from '../../../../shared/domain/consumer-lease.ts';
import { ForbiddenError } from '../../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../../../shared/ports/consumer-registry.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// The consumer session: who may use a consumer, its lease and its renewals, Exclusive/Failover
// ownership kept with it, Key_Shared members, and what a close gives back (mutation testing,
// issue 21 criterion 5).

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/session');

/** A registry that counts the reads of records. */
class CountingRegistry extends InMemoryConsumerRegistry {
  gets = 0;
  override async get(consumerId: string) {
    this.gets++;
    return super.get(consumerId);
  }
}

async function world(options: { type?: SubscriptionType; partitions?: number } = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const registry = new CountingRegistry();
  const scheduler = new InMemoryScheduler();
  const { ports } = inMemoryPorts({ clock, consumers: registry, scheduler });
  if (options.partitions) await createTopic(ports, admin, topic, options.partitions);
  const subscribe = async (
    extra: { principal?: Principal; on?: TopicName; lambda?: boolean; type?: SubscriptionType } = {},
  ) =>
    (
      await subscribeConsumer(ports, extra.principal ?? admin, {
        topic: extra.on ?? topic,
        subscription: 'sub',
        subscriptionType: extra.type ?? options.type ?? 'Shared',
        initialPosition: 'Earliest',
        policy: {},
        ...(extra.lambda ? { lambda: { functionTimeoutMs: 2_000 } } : {}),
      })
    ).consumerId;
  const publish = (count: number) =>
    publishMessages(ports, admin, topic, {
      messages: Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, key: `k${i}`, properties: {} })),
      router: new RoundRobinRouter(0),
    });
  const record = async (consumerId: string) => (await registry.get(consumerId)) as ConsumerRecord;
  const leaseUntil = async (consumerId: string) =>
    (await registry.leases(subscriptionKey(topic.toString(), 'sub'))).find((l) => l.consumerId === consumerId)
      ?.untilMs;
  const heads = async (consumerId: string) =>
    Promise.all(
      (await record(consumerId)).partitions.map(
        async (p) => (await ports.dispatch.readHead(p.cursorId))?.head,
      ),
    );
  const receive = (consumerId: string, maxMessages = 10) =>
    receiveMessages(ports, admin, consumerId, { maxMessages });
  return { ports, clock, registry, scheduler, subscribe, publish, record, leaseUntil, heads, receive };
}

describe('requireConsumer', () => {
  it('lets the consumer’s role and a superuser use it, refuses another role (403)', async () => {
    const w = await world();
    const alice: Principal = { role: 'alice', superuser: false };
    const bob: Principal = { role: 'bob', superuser: false };
    await w.ports.permissions.grant('public/default', 'alice', ['consume']);
    await w.ports.permissions.grant('public/default', 'bob', ['consume']);
    const consumerId = await w.subscribe({ principal: alice });
    expect((await requireConsumer(w.ports, alice, consumerId)).consumerId).toBe(consumerId);
    expect((await requireConsumer(w.ports, admin, consumerId)).consumerId).toBe(consumerId);
    await expect(requireConsumer(w.ports, bob, consumerId)).rejects.toThrow(
      new ForbiddenError(`Consumer ${consumerId} belongs to another role`),
    );
  });

  it('refuses its own role once that role may no longer consume on the topic (403)', async () => {
    const w = await world();
    const alice: Principal = { role: 'alice', superuser: false };
    await w.ports.permissions.grant('public/default', 'alice', ['consume']);
    const consumerId = await w.subscribe({ principal: alice });
    await w.ports.permissions.revoke('public/default', 'alice');
    await expect(requireConsumer(w.ports, alice, consumerId)).rejects.toThrow(ForbiddenError);
  });

  it('reads the record once while it is remembered, and again when asked for a fresh one', async () => {
    const w = await world();
    const consumerId = await w.subscribe();
    await requireConsumer(w.ports, admin, consumerId);
    const reads = w.registry.gets;
    await requireConsumer(w.ports, admin, consumerId);
    expect(w.registry.gets).toBe(reads);
    await requireConsumer(w.ports, admin, consumerId, { fresh: true });
    expect(w.registry.gets).toBe(reads + 1);
  });
});

describe('leases', () => {
  it('a Lambda consumer’s lease is about ten years, and a call does not write it', async () => {
    const w = await world();
    const consumerId = await w.subscribe({ lambda: true });
    const lambda = await w.record(consumerId);
    expect(leaseMsOf(lambda)).toBe(10 * 365 * 24 * 3_600_000);
    const until = await w.leaseUntil(consumerId);
    w.clock.advance(60_000);
    await renewLease(w.ports, lambda);
    expect(await w.leaseUntil(consumerId)).toBe(until);
  });

  it('an HTTP consumer’s lease is its own, or the default', async () => {
    const w = await world();
    const record = await w.record(await w.subscribe());
    expect(leaseMsOf(record)).toBe(DEFAULT_CONSUMER_LEASE_MS);
    expect(leaseMsOf({ ...record, leaseMs: 10_000 })).toBe(10_000);
  });

  it('waits at most what keeps three quarters of a lease (30 s of the default, 2.5 s of 10 s)', async () => {
    const w = await world();
    const record = await w.record(await w.subscribe());
    expect(longestWaitMs({ ...record, leaseMs: 60_000 })).toBe(30_000);
    expect(longestWaitMs({ ...record, leaseMs: 10_000 })).toBe(2_500);
    expect(longestWaitMs({ ...record, leaseMs: 2_000 })).toBe(1_000);
  });

  it('is written again a quarter lease after its last renewal by this process, not before', async () => {
    const w = await world();
    const consumerId = await w.subscribe();
    const start = w.clock.nowMs();
    await keepAlive(w.ports, admin, consumerId);
    expect(await w.leaseUntil(consumerId)).toBe(start + 60_000);
    w.clock.advance(14_999);
    await keepAlive(w.ports, admin, consumerId);
    expect(await w.leaseUntil(consumerId)).toBe(start + 60_000);
    w.clock.advance(1);
    await keepAlive(w.ports, admin, consumerId);
    expect(await w.leaseUntil(consumerId)).toBe(start + 15_000 + 60_000);
  });
});

describe('Exclusive/Failover ownership kept with the lease', () => {
  it('keepAlive renews the owner’s lease on the head; a Shared keepAlive makes no owner', async () => {
    const w = await world({ type: 'Failover' });
    const consumerId = await w.subscribe();
    w.clock.advance(20_000);
    await keepAlive(w.ports, admin, consumerId);
    expect((await w.heads(consumerId)).map((h) => h?.owner?.leaseUntilMs)).toEqual([
      w.clock.nowMs() + 60_000,
    ]);
    const shared = await world({ type: 'Shared' });
    const other = await shared.subscribe();
    await keepAlive(shared.ports, admin, other);
    expect((await shared.heads(other)).map((h) => h?.owner)).toEqual([undefined]);
  });

  it('a receive that stops at one partition renews ownership of every partition', async () => {
    const w = await world({ type: 'Failover', partitions: 2 });
    const consumerId = await w.subscribe();
    await w.publish(2);
    w.clock.advance(20_000);
    expect(await w.receive(consumerId, 1)).toHaveLength(1);
    expect((await w.heads(consumerId)).map((h) => h?.owner?.leaseUntilMs)).toEqual([
      w.clock.nowMs() + 60_000,
      w.clock.nowMs() + 60_000,
    ]);
  });

  it('a Shared consumer of several partitions owns none', async () => {
    const w = await world({ type: 'Shared', partitions: 2 });
    const consumerId = await w.subscribe();
    await w.publish(2);
    await w.receive(consumerId, 1);
    expect((await w.heads(consumerId)).map((h) => h?.owner)).toEqual([undefined, undefined]);
  });
});

describe('keySharedMembers', () => {
  it('lists the live members with their marks on the partition, itself included even when it left', async () => {
    const w = await world({ type: 'Key_Shared', partitions: 2 });
    const a = await w.subscribe();
    await w.publish(4);
    await w.receive(a, 4);
    const b = await w.subscribe();
    // c reads partition 1 only: it has no mark on partition 0.
    await w.subscribe({ on: topic.partition(1) });
    const consumer = await w.record(a);
    const [p0] = consumer.partitions;
    const marks = (await w.record(b)).joinedAfter ?? {};
    const members = async () =>
      (await keySharedMembers(w.ports, consumer, p0 as never)).map((m) => [
        m.consumerId,
        m.joinedAfter.toString(),
      ]);
    expect(await members()).toEqual(
      [
        [a, consumer.joinedAfter?.[p0?.cursorId as string]],
        [b, marks[p0?.cursorId as string]],
      ].sort(),
    );
    expect(marks[p0?.cursorId as string]).not.toBe(consumer.joinedAfter?.[p0?.cursorId as string]);
    // Its own mark is the one of the record it was given (the receive's), not read again.
    const given = { ...consumer, joinedAfter: { [p0?.cursorId as string]: '1:7' } };
    const own = (await keySharedMembers(w.ports, given, p0 as never)).find((m) => m.consumerId === a);
    expect(own?.joinedAfter.toString()).toBe('1:7');
    // A member record without marks (written before they existed) is left out.
    await w.registry.register({ ...(await w.record(b)), joinedAfter: undefined } as never);
    w.ports.consumers.forget(b);
    expect((await members()).map(([id]) => id)).toEqual([a]);
    await w.registry.register({ ...(await w.record(b)), joinedAfter: marks });
    w.ports.consumers.forget(b);
    // a's membership went (a close in flight): a receive of a still routes with a among the members.
    await w.registry.leave(subscriptionKey(topic.toString(), 'sub'), a);
    expect((await members()).map(([id]) => id)).toEqual([a, b].sort());
  });
});

describe('closeConsumer', () => {
  it('Exclusive: the owner’s close lets a new consumer subscribe at once and replay what it held', async () => {
    const w = await world({ type: 'Exclusive' });
    const a = await w.subscribe();
    await w.publish(3);
    expect(await w.receive(a, 3)).toHaveLength(3);
    await closeConsumer(w.ports, admin, a);
    expect(w.scheduler.jobs).toEqual([]);
    const b = await w.subscribe();
    expect((await w.receive(b, 3)).map((m) => m.payload)).toEqual(['m0', 'm1', 'm2']);
  });

  it('Shared: gives back what it held at once, and schedules a second pass 35 s later on every partition', async () => {
    const w = await world({ type: 'Shared', partitions: 2 });
    const a = await w.subscribe();
    const b = await w.subscribe();
    await w.publish(4);
    expect(await w.receive(a, 4)).toHaveLength(4);
    const consumer = await w.record(a);
    await closeConsumer(w.ports, admin, a);
    expect(w.scheduler.jobs).toEqual(
      consumer.partitions.map((p) => ({
        kind: 'release',
        cursorId: p.cursorId,
        partition: p.topic,
        consumerId: a,
        dueAtMs: w.clock.nowMs() + 35_000,
      })),
    );
    expect((await w.receive(b, 10)).map((m) => m.redeliveryCount)).toEqual([1, 1, 1, 1]);
  });
});

describe('closeConsumer of a consumer holding a long window', () => {
  it('runs 4 release steps itself and hands the rest to the scheduler, from where it stopped', async () => {
    const w = await world({ type: 'Shared' });
    const a = await w.subscribe();
    const consumer = await w.record(a);
    const [partition] = consumer.partitions;
    // 4 steps of 50 pages (100 entries each), and one page more.
    const entries = 4 * 50 * 100 + 100;
    await w.ports.ledger.append(
      topic,
      Array.from({ length: entries }, () => ({ payload: 'x', properties: {} })),
      w.clock.nowMs(),
    );
    // The engine's dispatch straight (a receive would sign a handle for each of them).
    const cursor = cursorOf(consumer, partition as ConsumerPartition);
    const dispatchConsumer = dispatchConsumerOf(w.ports, consumer, partition as ConsumerPartition);
    for (let held = 0; held < entries; ) {
      const result = await dispatch(engineOf(w.ports), { cursor, consumer: dispatchConsumer, max: 100 });
      held += result.kind === 'delivered' ? result.deliveries.length : 0;
    }
    const ledgers = (await w.ports.ledger.state(topic))?.ledgers ?? [];
    await closeConsumer(w.ports, admin, a);
    const [release] = w.scheduler.jobs.filter((job) => job.kind === 'release' && 'from' in job);
    expect(release).toMatchObject({
      kind: 'release',
      cursorId: partition?.cursorId,
      consumerId: a,
      dueAtMs: w.clock.nowMs(),
    });
    // Where the fifth step starts: entry 20,000, the first of the 21st ledger (1,000 entries each).
    expect(release && 'from' in release ? release.from : undefined).toBe(`${ledgers[20]?.ledgerId}:0`);
  });
});
