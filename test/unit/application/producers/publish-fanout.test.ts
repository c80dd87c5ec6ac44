// Bounded publish (issue 22, criterion 7) over in-memory ports and a manual clock: the requests a
// publish makes do not grow with the partition's subscriptions or its distinct delays; the rings
// still reach every subscription, now and at each delayed message's deliverAt, never early.
import { describe, expect, it } from 'vitest';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { maintainSubscriptions } from '../../../../shared/application/maintenance/maintain-subscriptions.ts';
import { runScheduledJob } from '../../../../shared/application/maintenance/run-scheduled-job.ts';
import { FANOUT_CHUNK, INLINE_RINGS } from '../../../../shared/application/producers/publish-fanout.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { DeliveryQueue } from '../../../../shared/ports/delivery-queue.ts';
import type { ScheduledJob } from '../../../../shared/ports/scheduler.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const T0 = 1_700_000_000_250;

interface Ring {
  readonly cursorId: string;
  readonly atMs: number;
  readonly delaySeconds: number;
}

/** Ports whose rings, scheduled jobs and activity writes are recorded as they happen. */
function world() {
  const clock = new ManualClock(T0);
  const scheduler = new InMemoryScheduler();
  const { ports: base } = inMemoryPorts({ clock, scheduler, consumers: new InMemoryConsumerRegistry() });
  const rings: Ring[] = [];
  const calls = { rings: 0, schedules: 0, activityWrites: 0 };
  const queue = base.deliveryQueue;
  const deliveryQueue: DeliveryQueue = Object.assign(Object.create(queue) as DeliveryQueue, {
    ring: async (q: Parameters<DeliveryQueue['ring']>[0], delaySeconds: number) => {
      calls.rings++;
      rings.push({ cursorId: q.cursorId, atMs: clock.nowMs(), delaySeconds });
      await queue.ring(q, delaySeconds);
    },
  });
  const activity = base.activity;
  const countedActivity = Object.assign(Object.create(activity) as typeof activity, {
    mark: (...args: Parameters<typeof activity.mark>) => {
      calls.activityWrites++;
      return activity.mark(...args);
    },
    markPartition: (...args: Parameters<typeof activity.markPartition>) => {
      calls.activityWrites++;
      return activity.markPartition(...args);
    },
  });
  const countedScheduler = {
    maxDelaySeconds: scheduler.maxDelaySeconds,
    schedule: (jobs: readonly ScheduledJob[]) => {
      calls.schedules++;
      return scheduler.schedule(jobs);
    },
  };
  const ports: UseCasePorts = {
    ...base,
    deliveryQueue,
    activity: countedActivity,
    scheduler: countedScheduler,
  };
  /** Runs the scheduler's jobs as they come due (the clock moves to each), until none is left. */
  const runScheduler = async () => {
    for (let hops = 0; hops < 10_000; hops++) {
      const jobs = scheduler.take().sort((a, b) => a.dueAtMs - b.dueAtMs);
      if (jobs.length === 0) return;
      for (const job of jobs) {
        // SQS delays are whole seconds, rounded up from when the job was sent.
        if (job.dueAtMs > clock.nowMs())
          clock.set(clock.nowMs() + Math.ceil((job.dueAtMs - clock.nowMs()) / 1000) * 1000);
        clock.advance(20); // the event source's latency
        await runScheduledJob(ports, job);
      }
    }
    throw new Error('the scheduler never ran out of jobs');
  };
  return { clock, ports, rings, calls, runScheduler, activity };
}

async function subscribeTo(ports: UseCasePorts, topic: TopicName, subscription: string): Promise<string> {
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription,
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {},
  });
  return consumerId;
}

async function subscriptions(ports: UseCasePorts, topic: TopicName, count: number): Promise<void> {
  await createTopic(ports, admin, topic, 0);
  for (let i = 0; i < count; i++) {
    await createSubscription(ports, admin, topic, {
      name: `s${i}`,
      type: 'Shared',
      initialPosition: 'Earliest',
    });
  }
}

describe('a publish rings every subscription with a bounded number of requests', () => {
  it('250 subscriptions and 20 messages with 20 distinct delays: one scheduler message, no ring, one activity write; the fan-out rings each subscription once', async () => {
    const { clock, ports, rings, calls, runScheduler, activity } = world();
    const topic = TopicName.parse('persistent://tenant/ns/fan');
    await subscriptions(ports, topic, 250);
    Object.assign(calls, { rings: 0, schedules: 0, activityWrites: 0 });
    rings.length = 0;
    const deliverAt = Array.from({ length: 20 }, (_, i) => T0 + 1_500 + i * 7_300);

    await publishMessages(ports, admin, topic, {
      messages: deliverAt.map((deliverAtMs, i) => ({ payload: `m${i}`, properties: {}, deliverAtMs })),
      router: new RoundRobinRouter(0),
    });

    expect(calls).toEqual({ rings: 0, schedules: 1, activityWrites: 1 });
    expect(clock.nowMs()).toBe(T0);
    await runScheduler();
    // Every subscription rung once, with no delay, by the fan-out.
    expect(rings).toHaveLength(250);
    expect(new Set(rings.map((ring) => ring.cursorId)).size).toBe(250);
    expect(rings.every((ring) => ring.delaySeconds === 0 && ring.atMs - T0 < 100)).toBe(true);

    // The receiver it woke dispatches: nothing is due yet, and it sets a timer for each delayed
    // message itself (never early, at most a second late), as for any delayed entry it reads.
    rings.length = 0;
    const consumerId = await subscribeTo(ports, topic, 's7');
    expect(await receiveMessages(ports, admin, consumerId, { maxMessages: 100 })).toEqual([]);
    const now = clock.nowMs();
    const wakes = rings.map((ring) => ring.atMs + ring.delaySeconds * 1000).sort((x, y) => x - y);
    expect(wakes).toHaveLength(20);
    wakes.forEach((wake, i) => {
      expect(wake).toBeGreaterThanOrEqual(deliverAt[i] as number);
      expect(wake).toBeLessThan((deliverAt[i] as number) + 1_000);
    });
    expect(now).toBeLessThan(deliverAt[0] as number);

    // The partition was marked as a whole: maintenance enters its 250 subscriptions.
    expect(await activity.listPartitions()).toEqual([{ partition: topic.toString(), markedAtMs: T0 }]);
    await maintainSubscriptions(ports, { deadlineMs: clock.nowMs() + 60_000 });
    expect(await activity.listPartitions()).toEqual([]);
    expect((await activity.list()).filter((entry) => entry.partition === topic.toString())).toHaveLength(250);
  });

  it(`splits a partition of more than ${FANOUT_CHUNK} subscriptions into shard jobs, each ringing its own`, async () => {
    const { ports, rings, runScheduler } = world();
    const topic = TopicName.parse('persistent://tenant/ns/shards');
    await subscriptions(ports, topic, 3 * FANOUT_CHUNK + 1);
    rings.length = 0;

    await publishMessages(ports, admin, topic, {
      messages: [{ payload: 'x', properties: {} }],
      router: new RoundRobinRouter(0),
    });
    await runScheduler();

    const rung = rings.map((ring) => ring.cursorId);
    expect(new Set(rung).size).toBe(3 * FANOUT_CHUNK + 1);
    expect(rung).toHaveLength(3 * FANOUT_CHUNK + 1);
  });

  it(`rings up to ${INLINE_RINGS} itself, with no delay and no scheduler message: the wake-up is as before`, async () => {
    const { ports, rings, calls } = world();
    const topic = TopicName.parse('persistent://tenant/ns/few');
    await subscriptions(ports, topic, 5);
    Object.assign(calls, { rings: 0, schedules: 0, activityWrites: 0 });
    rings.length = 0;

    await publishMessages(ports, admin, topic, {
      messages: [
        { payload: 'now', properties: {} },
        { payload: 'later', properties: {}, deliverAtMs: T0 + 5_000 },
      ],
      router: new RoundRobinRouter(0),
    });

    expect(calls.schedules).toBe(0);
    expect(calls.rings).toBe(10);
    expect(rings.filter((ring) => ring.delaySeconds === 0)).toHaveLength(5);
    // Never early, and within the second after (SQS delays are whole seconds).
    const later = rings.filter((ring) => ring.delaySeconds > 0);
    expect(later).toHaveLength(5);
    for (const ring of later) {
      expect(ring.atMs + ring.delaySeconds * 1000).toBeGreaterThanOrEqual(T0 + 5_000);
      expect(ring.atMs + ring.delaySeconds * 1000).toBeLessThan(T0 + 6_000);
    }
  });
});
