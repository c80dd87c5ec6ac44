// Attack on lease renewal (consumer-session.ts renewLease: once per quarter lease per process, at
// the start of a call): a consumer that calls all the time, with long polls, must never look gone.
// Maintenance may run at any moment: at every second of the polls, its membership lease and (on
// Failover) its ownership lease must still run.
import { describe, expect, it } from 'vitest';
import { subscriptionKey } from '../../../shared/application/consumers/consumer-session.ts';
import { receiveMessages } from '../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../shared/application/consumers/subscribe-consumer.ts';
import { DEFAULT_ENGINE_LIMITS } from '../../../shared/application/engine/engine-context.ts';
import { publishMessages } from '../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { MIN_CONSUMER_LEASE_MS } from '../../../shared/domain/consumer-lease.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { SubscriptionQueue } from '../../../shared/ports/delivery-queue.ts';
import { InMemoryConsumerRegistry } from '../../support/in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from '../../support/in-memory-delivery-queue.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/lease-poll');

/** Time passes a second at a time while a poll or a blocked receive waits; `probe` runs each second. */
function steppingWorld(maxUnackedPerConsumer = DEFAULT_ENGINE_LIMITS.maxUnackedPerConsumer) {
  const clock = new ManualClock(1_700_000_000_000);
  const probes: (() => Promise<void>)[] = [];
  const pass = async (ms: number) => {
    for (let waited = 0; waited < ms; waited += 1_000) {
      clock.advance(Math.min(1_000, ms - waited));
      for (const probe of probes) await probe();
    }
  };
  class SteppingQueue extends InMemoryDeliveryQueue {
    override async waitForRing(queue: SubscriptionQueue, waitMs = 0): Promise<boolean> {
      const rang = await super.waitForRing(queue);
      if (!rang && waitMs > 0) await pass(waitMs);
      return rang;
    }
  }
  const consumers = new InMemoryConsumerRegistry();
  const { ports } = inMemoryPorts({
    clock,
    consumers,
    scheduler: new InMemoryScheduler(),
    deliveryQueue: new SteppingQueue(),
    sleep: pass,
    engineLimits: { ...DEFAULT_ENGINE_LIMITS, maxUnackedPerConsumer },
  });
  return { clock, consumers, ports, probes, pass };
}

async function subscribe(ports: UseCasePorts, type: SubscriptionType, leaseMs: number) {
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: type,
    initialPosition: 'Earliest',
    policy: {},
    leaseMs,
  });
  return consumerId;
}

describe('a consumer that keeps calling is never gone', () => {
  it.each([
    [MIN_CONSUMER_LEASE_MS, [20_000]],
    [20_000, [20_000]],
    [60_000, [14_500, 20_000, 20_000]],
  ])('with a lease of %i ms and back-to-back polls of %j ms, its membership never lapses', async (leaseMs, polls) => {
    const w = steppingWorld();
    const id = await subscribe(w.ports, 'Shared', leaseMs);
    const key = subscriptionKey(topic.toString(), 'sub');
    const lapses: number[] = [];
    w.probes.push(async () => {
      if ((await w.consumers.expired(key, w.clock.nowMs())).includes(id)) lapses.push(w.clock.nowMs());
    });
    const end = w.clock.nowMs() + 120_000;
    for (let call = 0; w.clock.nowMs() < end; call++) {
      expect(
        await receiveMessages(w.ports, admin, id, {
          maxMessages: 10,
          waitMs: polls[call % polls.length] as number,
        }),
      ).toEqual([]);
    }
    expect(lapses).toEqual([]);
  });

  it('with a lease of 24 s, a 20 s poll 5.5 s after a renewing call (a quarter lease is 6 s) does not let it lapse', async () => {
    const w = steppingWorld();
    const id = await subscribe(w.ports, 'Shared', 24_000);
    const key = subscriptionKey(topic.toString(), 'sub');
    const lapses: number[] = [];
    w.probes.push(async () => {
      if ((await w.consumers.expired(key, w.clock.nowMs())).includes(id)) lapses.push(w.clock.nowMs());
    });
    for (let round = 0; round < 4; round++) {
      expect(await receiveMessages(w.ports, admin, id, { maxMessages: 10 })).toEqual([]); // renews
      await w.pass(5_500); // the client works
      expect(await receiveMessages(w.ports, admin, id, { maxMessages: 10, waitMs: 20_000 })).toEqual([]);
    }
    expect(lapses).toEqual([]);
  });

  it('a Failover owner polling back to back keeps its ownership (a standby would take over and fence it)', async () => {
    const w = steppingWorld();
    const owner = await subscribe(w.ports, 'Failover', MIN_CONSUMER_LEASE_MS);
    const consumer = await w.ports.consumers.get(owner);
    const cursorId = consumer?.partitions[0]?.cursorId as string;
    const lapses: number[] = [];
    w.probes.push(async () => {
      const head = (await w.ports.dispatch.readHead(cursorId))?.head;
      if (head?.owner?.consumerId !== owner || head.owner.leaseUntilMs < w.clock.nowMs()) {
        lapses.push(w.clock.nowMs());
      }
    });
    const end = w.clock.nowMs() + 120_000;
    while (w.clock.nowMs() < end)
      await receiveMessages(w.ports, admin, owner, { maxMessages: 10, waitMs: 20_000 });
    expect(lapses).toEqual([]);
  });

  it('a consumer blocked at its cap, waiting in its receive, keeps its membership', async () => {
    const w = steppingWorld(1);
    const id = await subscribe(w.ports, 'Shared', MIN_CONSUMER_LEASE_MS);
    await publishMessages(w.ports, admin, topic, {
      messages: [
        { payload: 'p0', properties: {} },
        { payload: 'p1', properties: {} },
      ],
      router: new RoundRobinRouter(0),
    });
    expect((await receiveMessages(w.ports, admin, id, { maxMessages: 10 })).map((m) => m.payload)).toEqual([
      'p0',
    ]);
    const key = subscriptionKey(topic.toString(), 'sub');
    const lapses: number[] = [];
    w.probes.push(async () => {
      if ((await w.consumers.expired(key, w.clock.nowMs())).includes(id)) lapses.push(w.clock.nowMs());
    });
    const end = w.clock.nowMs() + 60_000;
    while (w.clock.nowMs() < end)
      expect(await receiveMessages(w.ports, admin, id, { maxMessages: 10, waitMs: 20_000 })).toEqual([]);
    expect(lapses).toEqual([]);
  });
});
