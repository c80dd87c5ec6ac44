// Adversarial tests of the per-consumer cap of unacknowledged entries (Pulsar's
// maxUnackedMessagesPerConsumer, I7): a blocked consumer must unblock by what Pulsar unblocks it
// with (acks, nacks, ack timeouts), and must not hold back anyone else; and of the decisions
// dispatch takes on its eventually consistent head read.
import { describe, expect, it } from 'vitest';
import { closeConsumer } from '../../../shared/application/consumers/consumer-session.ts';
import { doorbellOf } from '../../../shared/application/consumers/doorbells.ts';
import { processQueueRecords } from '../../../shared/application/consumers/process-queue-records.ts';
import { receiveMessages } from '../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../shared/application/consumers/subscribe-consumer.ts';
import { claimOwnership, dispatch } from '../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type Delivery,
  type DispatchConsumer,
  type EngineContext,
  type PartitionCursor,
} from '../../../shared/application/engine/engine-context.ts';
import { engineOf } from '../../../shared/application/engine/engine-ports.ts';
import { keySharedJoinMark, memberForKey } from '../../../shared/application/engine/key-shared-routing.ts';
import { acknowledge, negativeAcknowledge } from '../../../shared/application/engine/pending-acks.ts';
import { pendingSummary } from '../../../shared/application/engine/pending-summary.ts';
import { rewind } from '../../../shared/application/engine/release.ts';
import { createSubscriptionCursor } from '../../../shared/application/engine/subscription-cursor.ts';
import { publishMessages } from '../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import type { Position } from '../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { SubscriptionQueue } from '../../../shared/ports/delivery-queue.ts';
import { InMemoryConsumerRegistry } from '../../support/in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from '../../support/in-memory-delivery-queue.ts';
import { InMemoryDispatchStore } from '../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../support/in-memory-ledger.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const partition = TopicName.parse('persistent://public/default/caps-attack');
const lambdaTopic = TopicName.parse('persistent://public/default/caps-lambda');
const admin: Principal = { role: 'admin', superuser: true };

function world(type: SubscriptionType, maxUnackedPerConsumer: number, staleReads = false) {
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(1000);
  const store = new InMemoryDispatchStore(() => staleReads);
  const ctx: EngineContext = {
    store,
    ledger,
    clock,
    limits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer },
  };
  const cursor: PartitionCursor = { partition, cursorId: 'c1', type };
  const consumer = (consumerId: string, ackTimeoutMs = 0): DispatchConsumer => ({
    consumerId,
    ackTimeoutMs: () => ackTimeoutMs,
    leaseMs: 60_000,
  });
  const publish = async (count: number) => {
    await ledger.initialize(partition);
    const { positions } = await ledger.append(
      partition,
      Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      clock.nowMs(),
    );
    return positions;
  };
  return { clock, ledger, store, ctx, cursor, consumer, publish };
}

const ids = (deliveries: readonly { position: Position }[]) => deliveries.map((d) => d.position.toString());

/** In-memory ports whose long waits and sleeps pass on a manual clock: nothing really waits. */
function clockedPorts(extra: Partial<UseCasePorts> = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  class WaitingQueue extends InMemoryDeliveryQueue {
    override async waitForRing(queue: SubscriptionQueue, waitMs = 0): Promise<boolean> {
      const rang = await super.waitForRing(queue);
      if (!rang && waitMs > 0) clock.advance(waitMs);
      return rang;
    }
  }
  const { ports } = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    deliveryQueue: new WaitingQueue(),
    sleep: async (ms) => clock.advance(ms),
    ...extra,
  });
  return { clock, ports };
}

describe('per-consumer cap: what unblocks a blocked consumer', () => {
  it('an ack timeout gives a sole blocked Shared consumer its timed-out entries again (Pulsar redelivers them and unblocks it)', async () => {
    const w = world('Shared', 3);
    const published = await w.publish(10);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const a = w.consumer('a', 1_000);
    const first = await dispatch(w.ctx, { cursor: w.cursor, consumer: a, max: 10 });
    expect(first.kind === 'delivered' ? ids(first.deliveries) : first).toEqual(
      published.slice(0, 3).map(String),
    );
    expect(await dispatch(w.ctx, { cursor: w.cursor, consumer: a, max: 10 })).toEqual({ kind: 'blocked' });
    // Past the ack timeout the three are due again: a gets them (count 1), as Pulsar's client
    // redelivers its unacknowledged messages and the broker unblocks it.
    w.clock.advance(1_500);
    const again = await dispatch(w.ctx, { cursor: w.cursor, consumer: a, max: 10 });
    expect(again.kind).toBe('delivered');
    const deliveries = again.kind === 'delivered' ? again.deliveries : [];
    expect(ids(deliveries)).toEqual(published.slice(0, 3).map(String));
    expect(deliveries.every((d) => d.redeliveryCount === 1)).toBe(true);
  });
});

describe('per-consumer cap: how far past it', () => {
  it('an eventually consistent head a few versions old does not let a consumer pass its cap', async () => {
    const w = world('Shared', 5, true);
    await w.publish(30);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const a = w.consumer('a');
    let held = 0;
    for (let i = 0; i < 6; i++) {
      const result = await dispatch(w.ctx, { cursor: w.cursor, consumer: a, max: 3 });
      if (result.kind === 'delivered') held += result.deliveries.length;
    }
    expect(held).toBe(5);
  });
});

describe('per-consumer cap: event-driven (Lambda) consumers', () => {
  it('a Lambda consumer with a cap below its batch drains the backlog in one invocation (its own acks count)', async () => {
    const shared = {
      clock: new ManualClock(1_700_000_000_000),
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
      engineLimits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 3 },
      sleep: async () => {},
    };
    const { ports } = inMemoryPorts(shared);
    const { consumerId } = await subscribeConsumer(ports, admin, {
      topic: lambdaTopic,
      subscription: 'fn',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
      lambda: { functionTimeoutMs: 60_000 },
    });
    await publishMessages(ports, admin, lambdaTopic, {
      messages: Array.from({ length: 12 }, (_, i) => ({ payload: `p${i}`, properties: {} })),
      router: new RoundRobinRouter(0),
    });
    const consumer = await ports.consumers.get(consumerId);
    const cursorId = consumer?.partitions[0]?.cursorId as string;
    const seen: string[] = [];
    const result = await processQueueRecords(ports, {
      consumerId,
      records: [{ recordId: 'r1', cursorId, body: '' }],
      handleBatch: async (batch) => {
        for (const message of batch.messages) seen.push(message.payload);
        return { failed: new Map(), unfinished: new Map() };
      },
    });
    expect(result.error).toBeUndefined();
    // Nothing rings again after this invocation: what it left would wait for the next publish.
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `p${i}`));
  });
});

describe('per-consumer cap: a blocked consumer leaves the doorbell to the others', () => {
  it('a consumer blocked on one partition of two does not take that partition’s rings while it waits', async () => {
    const { ports } = clockedPorts({
      engineLimits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 1 },
    });
    const topic = TopicName.parse('persistent://public/default/caps-parted');
    await createTopic(ports, admin, topic, 2);
    const subscribe = async () =>
      (
        await subscribeConsumer(ports, admin, {
          topic,
          subscription: 'work',
          subscriptionType: 'Shared',
          initialPosition: 'Earliest',
          policy: {},
        })
      ).consumerId;
    const a = await subscribe();
    await subscribe(); // b: waits on the doorbells too (another process)
    const publishToFirst = (payload: string) =>
      publishMessages(ports, admin, topic, {
        messages: [{ payload, properties: {} }],
        router: new RoundRobinRouter(0),
      });
    await publishToFirst('p0');
    const taken = await receiveMessages(ports, admin, a, { maxMessages: 10 });
    expect(taken.map((m) => m.payload)).toEqual(['p0']);
    const consumer = await ports.consumers.get(a);
    const first = consumer?.partitions.find((p) => p.partitionIndex === 0)?.cursorId as string;
    while (await ports.deliveryQueue.waitForRing(doorbellOf(first), 0)) {
      // drained
    }
    // a is at its cap on partition 0, caught up on partition 1. A publish to partition 0 rings
    // for b; a's long poll must leave that ring.
    await publishToFirst('p1');
    expect(await receiveMessages(ports, admin, a, { maxMessages: 10, waitMs: 3_000 })).toEqual([]);
    expect(await ports.deliveryQueue.waitForRing(doorbellOf(first), 0)).toBe(true);
  });
});

describe('eventually consistent head reads (dispatch reads the head with consistent: false)', () => {
  it('an Exclusive consumer that took over after the owner closed is not refused on an old head', async () => {
    const w = world('Exclusive', 50_000, true);
    const published = await w.publish(3);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const a = w.consumer('a');
    expect(await claimOwnership(w.ctx, w.cursor, a)).toBe(true);
    const first = await dispatch(w.ctx, { cursor: w.cursor, consumer: a, max: 1 });
    expect(first.kind === 'delivered' ? ids(first.deliveries) : first).toEqual([published[0]?.toString()]);
    await rewind(w.ctx, w.cursor, { consumerId: 'a', close: true });
    const b = w.consumer('b');
    expect(await claimOwnership(w.ctx, w.cursor, b)).toBe(true);
    // The head b reads may be one on which a still owns the subscription: b is the owner now.
    const taken: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await dispatch(w.ctx, { cursor: w.cursor, consumer: b, max: 10 });
      if (result.kind === 'delivered') taken.push(...ids(result.deliveries));
    }
    // a's held entry replayed first, then the rest.
    expect(taken).toEqual(published.map(String));
  });
});

describe('per-consumer cap: Key_Shared', () => {
  it('a member blocked at its cap does not starve the others’ redeliveries (its routed entries fill the due tracker)', async () => {
    const w = world('Key_Shared', 2);
    await w.ledger.initialize(partition);
    await createSubscriptionCursor(w.ctx, w.cursor, 'Earliest');
    const mark = await keySharedJoinMark(w.ctx, w.cursor);
    const members = ['a', 'b'].map((consumerId) => ({ consumerId, joinedAfter: mark }));
    const keysOf = (id: string) =>
      Array.from({ length: 400 }, (_, i) => `key-${i}`)
        .filter((key) => memberForKey(members, key)?.consumerId === id)
        .slice(0, 30);
    const [keysA, keysB] = [keysOf('a'), keysOf('b')];
    // Interleaved: every entry of a's keys is a run of its own between b's.
    const messages = keysA.flatMap((key, i) => [
      { payload: `A${i}`, key, properties: {} },
      { payload: `B${i}`, key: keysB[i] as string, properties: {} },
    ]);
    await w.ledger.append(partition, messages, w.clock.nowMs());
    const receive = (id: string, max: number) =>
      dispatch(w.ctx, { cursor: w.cursor, consumer: w.consumer(id), max, members });
    const got = (result: Awaited<ReturnType<typeof receive>>) =>
      result.kind === 'delivered' ? result.deliveries : [];

    const toA: string[] = [];
    for (let i = 0; i < 4; i++) toA.push(...got(await receive('a', 10)).map((d) => d.entry.payload));
    expect(toA).toEqual(['A0', 'A1']);
    expect(await receive('a', 10)).toEqual({ kind: 'blocked' });
    // b takes its keys; a's entries it passes wait in the tracker for a (blocked).
    // b acknowledges what it gets, but for its last (it stays within its cap).
    const taken: Delivery[] = [];
    for (let i = 0; i < 40; i++) {
      const batch = got(await receive('b', 10));
      taken.push(...batch);
      const held = taken.slice(0, -1).map((d) => d.position);
      await acknowledge(w.ctx, w.cursor, held, { byId: false });
    }
    expect(taken.map((d) => d.entry.payload)).toEqual(keysB.map((_, i) => `B${i}`));
    // b nacks one of its messages: it must come back to b though a's routed entries are due first.
    w.clock.advance(1_000);
    const nacked = taken[taken.length - 1] as Delivery;
    await negativeAcknowledge(w.ctx, {
      cursor: w.cursor,
      consumerId: 'b',
      items: [{ position: nacked.position, redeliveryCount: 0 }],
      delayMs: () => 0,
    });
    const again: Delivery[] = [];
    for (let i = 0; i < 3 && again.length === 0; i++) again.push(...got(await receive('b', 10)));
    expect(again.map((d) => [d.entry.payload, d.redeliveryCount])).toEqual([[nacked.entry.payload, 1]]);
  });
});

describe('per-consumer cap: never a 500', () => {
  it.each([
    'Shared',
    'Exclusive',
  ] as const)('%s: a receive on a partition whose ledgers were just deleted (its topic deleted, cursor not yet purged) answers nothing, whatever the window spans', async (type) => {
    const w = world(type, 4);
    const small = { ...w, ledger: new InMemoryLedger(3) };
    const ctx: EngineContext = { ...w.ctx, ledger: small.ledger };
    await small.ledger.initialize(partition);
    await small.ledger.append(
      partition,
      Array.from({ length: 5 }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      w.clock.nowMs(),
    );
    await createSubscriptionCursor(ctx, w.cursor, 'Earliest');
    const a = w.consumer('a');
    if (type === 'Exclusive') await claimOwnership(ctx, w.cursor, a);
    // a holds 0:0..1:0 (the window spans two ledgers), none acknowledged.
    let held = 0;
    for (let i = 0; i < 3; i++) {
      const result = await dispatch(ctx, { cursor: w.cursor, consumer: a, max: 2 });
      if (result.kind === 'delivered') held += result.deliveries.length;
    }
    expect(held).toBe(4);
    const first = (await small.ledger.state(partition))?.ledgers[0]?.ledgerId as bigint;
    await small.ledger.detachPartition(partition, first);
    expect(await small.ledger.state(partition)).toBeUndefined();
    const after = await dispatch(ctx, { cursor: w.cursor, consumer: a, max: 2 });
    expect(after.kind === 'delivered' ? after.deliveries : after).toEqual([]);
  });
});

describe('per-consumer cap: a close while blocked', () => {
  it('a receive blocked at its cap whose consumer is closed meanwhile takes nothing after the close', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    let onSleep: (() => Promise<void>) | undefined;
    const shared = {
      clock,
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
      engineLimits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 2 },
      sleep: async (ms: number) => {
        const hook = onSleep;
        onSleep = undefined;
        await hook?.();
        clock.advance(ms);
      },
    };
    const first = inMemoryPorts(shared).ports;
    const second = inMemoryPorts({
      ...shared,
      catalog: first.catalog,
      ledger: first.ledger,
      dispatch: first.dispatch,
      deliveryQueue: first.deliveryQueue,
      permissions: first.permissions,
    }).ports;
    const { consumerId } = await subscribeConsumer(first, admin, {
      topic: lambdaTopic,
      subscription: 'closing',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
    await publishMessages(first, admin, lambdaTopic, {
      messages: Array.from({ length: 6 }, (_, i) => ({ payload: `c${i}`, properties: {} })),
      router: new RoundRobinRouter(0),
    });
    expect(
      (await receiveMessages(first, admin, consumerId, { maxMessages: 10 })).map((m) => m.payload),
    ).toEqual(['c0', 'c1']);
    // Blocked: while the receive waits, the consumer is closed in another process (what it held
    // is released, so it would no longer be blocked).
    onSleep = async () => closeConsumer(second, admin, consumerId);
    expect(await receiveMessages(first, admin, consumerId, { maxMessages: 10, waitMs: 5_000 })).toEqual([]);
    const summary = await pendingSummary(engineOf(first), {
      partition: lambdaTopic,
      cursorId: (await first.catalog.listSubscriptions(lambdaTopic))[0]?.cursorId as string,
      type: 'Shared',
    });
    expect(summary.unacked).toBe(0);
  });
});

describe('Failover standby and the doorbell', () => {
  it('a standby consumer’s long poll leaves the doorbell’s rings to the active consumer', async () => {
    const { ports } = clockedPorts();
    const topic = TopicName.parse('persistent://public/default/failover-rings');
    const subscribe = async () =>
      (
        await subscribeConsumer(ports, admin, {
          topic,
          subscription: 'fo',
          subscriptionType: 'Failover',
          initialPosition: 'Earliest',
          policy: {},
        })
      ).consumerId;
    const active = await subscribe();
    const standby = await subscribe();
    expect(await receiveMessages(ports, admin, active, { maxMessages: 10 })).toEqual([]);
    const consumer = await ports.consumers.get(active);
    const cursorId = consumer?.partitions[0]?.cursorId as string;
    while (await ports.deliveryQueue.waitForRing(doorbellOf(cursorId), 0)) {
      // drained
    }
    await publishMessages(ports, admin, topic, {
      messages: [{ payload: 'f0', properties: {} }],
      router: new RoundRobinRouter(0),
    });
    // The standby polls first: it must not take the ring the active consumer's poll waits for.
    expect(await receiveMessages(ports, admin, standby, { maxMessages: 10, waitMs: 3_000 })).toEqual([]);
    expect(await ports.deliveryQueue.waitForRing(doorbellOf(cursorId), 0)).toBe(true);
  });
});

describe('a blocked consumer and the caught-up mark', () => {
  it('a ring a blocked consumer’s wait took (it did not know it was blocked yet) is passed on', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    let duringWait: (() => Promise<void>) | undefined;
    class HookedQueue extends InMemoryDeliveryQueue {
      override async waitForRing(queue: SubscriptionQueue, waitMs = 0): Promise<boolean> {
        if (waitMs > 0 && duringWait) {
          const hook = duringWait;
          duringWait = undefined;
          await hook();
        }
        const rang = await super.waitForRing(queue);
        if (!rang && waitMs > 0) clock.advance(waitMs);
        return rang;
      }
    }
    const { ports } = inMemoryPorts({
      clock,
      consumers: new InMemoryConsumerRegistry(),
      scheduler: new InMemoryScheduler(),
      deliveryQueue: new HookedQueue(),
      engineLimits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer: 1 },
      sleep: async (ms) => clock.advance(ms),
    });
    const topic = TopicName.parse('persistent://public/default/caps-mark');
    const subscribe = async () =>
      (
        await subscribeConsumer(ports, admin, {
          topic,
          subscription: 'work',
          subscriptionType: 'Shared',
          initialPosition: 'Earliest',
          policy: {},
        })
      ).consumerId;
    const a = await subscribe();
    const b = await subscribe();
    const publish = (payload: string) =>
      publishMessages(ports, admin, topic, {
        messages: [{ payload, properties: {} }],
        router: new RoundRobinRouter(0),
      });
    await publish('m0');
    expect((await receiveMessages(ports, admin, a, { maxMessages: 10 })).map((m) => m.payload)).toEqual([
      'm0',
    ]);
    // b finds the subscription caught up: this process marks it so (a is at its cap of 1).
    expect(await receiveMessages(ports, admin, b, { maxMessages: 10 })).toEqual([]);
    const cursorId = (await ports.consumers.get(a))?.partitions[0]?.cursorId as string;
    while (await ports.deliveryQueue.waitForRing(doorbellOf(cursorId), 0)) {
      // drained
    }
    // a's receive trusts the mark, waits on the doorbell, and a publish rings while it waits.
    duringWait = async () => {
      await publish('m1');
    };
    expect(await receiveMessages(ports, admin, a, { maxMessages: 10, waitMs: 3_000 })).toEqual([]);
    // That ring is b's to wake on.
    expect(await ports.deliveryQueue.waitForRing(doorbellOf(cursorId), 0)).toBe(true);
  });
});
