// Issue 24, criterion 7: the consumer-path simulation's reschedule check can fail, and the
// dispatcher it checks honours a reschedule of a message it has not reached (in-memory ports).
import { describe, expect, it } from 'vitest';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';
import type { HeldMessage } from '../../../support/sim/consumer-path-oracle.ts';
import { RescheduleOracle } from '../../../support/sim/consumer-path-reschedule.ts';
import { emptyCounters } from '../../../support/sim/sim-counters.ts';

const admin: Principal = { role: 'admin', superuser: true };
const T0 = 1_700_000_000_000;
const topic = TopicName.parse('persistent://public/default/resched-sim');

async function delayedWorld() {
  const clock = new ManualClock(T0);
  const { ports } = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {},
  });
  const [published] = await publishMessages(ports, admin, topic, {
    messages: [{ payload: 'later', properties: {}, deliverAtMs: T0 + 60_000 }],
    router: new RoundRobinRouter(0),
  });
  const messageId = published?.messageId as string;
  const counters = emptyCounters();
  const oracle = new RescheduleOracle(0, counters);
  const reschedule = (delayMs: number, earlier: boolean) =>
    oracle.reschedule({
      ports,
      principal: admin,
      topic,
      subscription: 'sub',
      messageId,
      delayMs,
      earlier,
      startSeq: 1,
      trueStartMs: clock.nowMs(),
    });
  return { clock, ports, consumerId, messageId, counters, oracle, reschedule };
}

const delivery = (messageId: string, atMs: number, seq: number): HeldMessage => ({
  position: messageId.split(':').slice(0, 2).join(':'),
  messageId,
  handle: 'h',
  count: 0,
  key: null,
  atMs,
  seq,
});

describe('the simulation reschedule check', () => {
  it('fails a delivery before the due time an operator set; checks only the first delivery after it', async () => {
    const { messageId, counters, oracle, reschedule } = await delayedWorld();

    await reschedule(5_000, false);
    await reschedule(5_000, true);

    expect([counters.reschedules, counters.reschedulesRefused]).toEqual([1, 1]);
    // Returned before the reschedule started: not its business.
    oracle.delivered(delivery(messageId, T0 + 1_000, 1));
    expect(() => oracle.delivered(delivery(messageId, T0 + 4_999, 2))).toThrow(
      /^I5: .* before the due time an operator set \(1700000005000/,
    );
    oracle.delivered(delivery(messageId, T0 + 1_000, 3));
    expect(counters.reschedulesChecked).toBe(1);
  });

  it('passes a delivery at the due time, with the skew allowed', async () => {
    const { ports, messageId, counters } = await delayedWorld();
    const skewed = new RescheduleOracle(200, counters);
    await skewed.reschedule({
      ports,
      principal: admin,
      topic,
      subscription: 'sub',
      messageId,
      delayMs: 5_000,
      earlier: true,
      startSeq: 1,
      trueStartMs: T0,
    });

    skewed.delivered(delivery(messageId, T0 + 4_800, 2));
    expect(counters.reschedulesChecked).toBe(1);
  });
});

describe('a message the dispatcher has not reached, rescheduled', () => {
  it('is handed out at the new time (earlier than its deliverAt), never before, with count 0', async () => {
    const { clock, ports, consumerId, messageId, reschedule } = await delayedWorld();
    await reschedule(5_000, true);
    const receive = () => receiveMessages(ports, admin, consumerId, { maxMessages: 10, waitMs: 0 });

    clock.advance(4_999);
    const early = await receive();
    clock.advance(1);
    const due = await receive();

    expect(early).toEqual([]);
    expect(due.map((m) => [m.messageId, m.redeliveryCount])).toEqual([[messageId, 0]]);
  });

  it('later than its deliverAt, it is not handed out at its deliverAt', async () => {
    const { clock, ports, consumerId, messageId, reschedule } = await delayedWorld();
    await reschedule(120_000, false);
    const receive = () => receiveMessages(ports, admin, consumerId, { maxMessages: 10, waitMs: 0 });

    clock.advance(60_000);
    const atDeliverAt = await receive();
    clock.advance(60_000);
    const due = await receive();

    expect(atDeliverAt).toEqual([]);
    expect(due.map((m) => m.messageId)).toEqual([messageId]);
  });
});
