// A receive and a publish served over API Gateway answer by their deadline (25 s after the
// request's start, shared/http/answer-deadline.ts), whatever a cold start took: the long poll ends
// and no round starts ROUND_RESERVE_MS before it, so nothing is claimed whose answer could come
// after API Gateway's 504. Time is a ManualClock that a wait on the doorbell moves.
import { describe, expect, it } from 'vitest';
import {
  ROUND_RESERVE_MS,
  receiveMessages,
} from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import {
  PUBLISH_RESERVE_MS,
  publishMessages,
} from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { ServiceUnavailableError } from '../../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { ANSWER_WITHIN_MS } from '../../../../shared/http/answer-deadline.ts';
import type { SubscriptionQueue } from '../../../../shared/ports/delivery-queue.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { InMemoryDeliveryQueue } from '../../../support/in-memory-delivery-queue.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/deadline');
const router = new RoundRobinRouter(0);

/** A doorbell whose wait moves the clock by what it waits, and may run `atEndOfWait` as it ends. */
class SteppingQueue extends InMemoryDeliveryQueue {
  readonly waitedMs: number[] = [];
  atEndOfWait: (() => Promise<void>) | undefined;
  constructor(private readonly clock: ManualClock) {
    super();
  }
  override async waitForRing(queue: SubscriptionQueue, waitMs = 0): Promise<boolean> {
    if (await super.waitForRing(queue)) return true;
    if (waitMs === 0) return false;
    this.waitedMs.push(waitMs);
    this.clock.advance(waitMs);
    const last = this.atEndOfWait;
    this.atEndOfWait = undefined;
    await last?.();
    return super.waitForRing(queue);
  }
}

async function world() {
  const clock = new ManualClock(1_700_000_000_000);
  const deliveryQueue = new SteppingQueue(clock);
  const { ports } = inMemoryPorts({
    clock,
    deliveryQueue,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    sleep: async (ms: number) => clock.advance(ms),
  });
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {},
  });
  const cursorId = (await ports.catalog.getSubscription(topic, 'sub'))?.cursorId as string;
  return { clock, deliveryQueue, ports, consumerId, cursorId };
}

const publish = (ports: UseCasePorts, payload: string) =>
  publishMessages(ports, admin, topic, { messages: [{ payload, properties: {} }], router });

describe('a receive answers by its deadline', () => {
  it('a 20 s long poll whose request started 6 s earlier (a cold start) ends 21 s after the request, not 26 s', async () => {
    const w = await world();
    const requestStartMs = w.clock.nowMs() - 6_000;

    const messages = await receiveMessages(w.ports, admin, w.consumerId, {
      maxMessages: 10,
      waitMs: 20_000,
      deadlineMs: requestStartMs + ANSWER_WITHIN_MS,
    });

    expect(messages).toEqual([]);
    expect(w.clock.nowMs() - requestStartMs).toBe(ANSWER_WITHIN_MS - ROUND_RESERVE_MS);
    expect(w.deliveryQueue.waitedMs).toEqual([15_000]);
  });

  it('a warm 20 s long poll still waits its whole 20 s, and looks once more before it answers', async () => {
    const w = await world();
    const requestStartMs = w.clock.nowMs() - 30;
    let looked = 0;
    w.deliveryQueue.atEndOfWait = async () => {
      looked = w.clock.nowMs();
    };

    const messages = await receiveMessages(w.ports, admin, w.consumerId, {
      maxMessages: 10,
      waitMs: 20_000,
      deadlineMs: requestStartMs + ANSWER_WITHIN_MS,
    });

    expect(messages).toEqual([]);
    expect(w.deliveryQueue.waitedMs).toEqual([20_000]);
    expect(looked - requestStartMs).toBe(20_030);
  });

  it('a message that rings as a deadline-bound wait ends is not claimed: the ring is passed on, the next receive takes it first-hand', async () => {
    const w = await world();
    const requestStartMs = w.clock.nowMs() - 6_000;
    w.deliveryQueue.atEndOfWait = async () => {
      await publish(w.ports, 'late');
    };

    const late = await receiveMessages(w.ports, admin, w.consumerId, {
      maxMessages: 10,
      waitMs: 20_000,
      deadlineMs: requestStartMs + ANSWER_WITHIN_MS,
    });
    const ringsLeft = w.deliveryQueue.rings.get(w.cursorId)?.length ?? 0;
    const next = await receiveMessages(w.ports, admin, w.consumerId, { maxMessages: 10 });

    expect(late).toEqual([]);
    expect(ringsLeft).toBeGreaterThan(0);
    expect(next.map((message) => [message.payload, message.redeliveryCount])).toEqual([['late', 0]]);
  });

  it('a receive with less than ROUND_RESERVE_MS left claims nothing, even with a message waiting', async () => {
    const w = await world();
    await publish(w.ports, 'waiting');

    const tooLate = await receiveMessages(w.ports, admin, w.consumerId, {
      maxMessages: 10,
      deadlineMs: w.clock.nowMs() + ROUND_RESERVE_MS - 1,
    });
    const inTime = await receiveMessages(w.ports, admin, w.consumerId, {
      maxMessages: 10,
      deadlineMs: w.clock.nowMs() + ROUND_RESERVE_MS + 1,
    });

    expect(tooLate).toEqual([]);
    expect(inTime.map((message) => [message.payload, message.redeliveryCount])).toEqual([['waiting', 0]]);
  });
});

describe('a publish answers by its deadline', () => {
  it('writes nothing and answers 503 when less than PUBLISH_RESERVE_MS are left; publishes with more', async () => {
    const w = await world();
    const request = (deadlineMs: number) => ({
      messages: [{ payload: 'p', properties: {} }],
      router,
      deadlineMs,
    });

    await expect(
      publishMessages(w.ports, admin, topic, request(w.clock.nowMs() + PUBLISH_RESERVE_MS - 1)),
    ).rejects.toBeInstanceOf(ServiceUnavailableError);
    const stateAfterRefusal = await w.ports.ledger.state(topic);
    const published = await publishMessages(
      w.ports,
      admin,
      topic,
      request(w.clock.nowMs() + PUBLISH_RESERVE_MS),
    );

    expect(stateAfterRefusal?.ledgers.reduce((sum, ledger) => sum + ledger.entries, 0n)).toBe(0n);
    expect(published.map((result) => result.errorCode)).toEqual([0]);
  });
});
