// The receive use case over in-memory ports, with two "processes" (Lambda containers): two
// UseCasePorts over the same stores and queues, each with its own caches and hints. A doorbell ring
// wakes one receiver, in whichever process polls first: nothing may wait on a ring that went to
// the other process or to another member.
import { describe, expect, it } from 'vitest';
import { acknowledgeMessages } from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { CAUGHT_UP_TTL_MS } from '../../../../shared/application/container-hints.ts';
import { memberForKey } from '../../../../shared/application/engine/key-shared-routing.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { SubscriptionQueue } from '../../../../shared/ports/delivery-queue.ts';
import { InMemoryDeliveryQueue } from '../../../support/in-memory-delivery-queue.ts';
import { twoProcesses } from '../../../support/in-memory-processes.ts';
import { ManualClock } from '../../../support/manual-clock.ts';
import { overtakingLedger } from '../../../support/overtaking-ledger.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/receive');

async function subscribe(ports: UseCasePorts, type: SubscriptionType): Promise<string> {
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'sub',
    subscriptionType: type,
    initialPosition: 'Earliest',
    policy: {},
  });
  return consumerId;
}

/** Short polls (no wait) in turns, each in its own process, acknowledging what came. */
async function takeTurns(
  members: readonly { ports: UseCasePorts; id: string }[],
  rounds: number,
): Promise<Map<string, string[]>> {
  const received = new Map(members.map(({ id }) => [id, [] as string[]]));
  for (let round = 0; round < rounds; round++) {
    for (const { ports, id } of members) {
      const batch = await receiveMessages(ports, admin, id, { maxMessages: 5 });
      if (batch.length === 0) continue;
      await acknowledgeMessages(ports, admin, id, {
        messageIds: [],
        deliveryHandles: batch.map((message) => message.deliveryHandle),
      });
      received.get(id)?.push(...batch.map((message) => message.payload));
    }
  }
  return received;
}

describe('receive across processes', () => {
  it.each([
    ['one process', true],
    ['two processes', false],
  ])('Key_Shared members polling in turn (%s) each get all of their keys', async (_, together) => {
    const [first, other] = twoProcesses();
    const second = together ? first : other;
    const a = await subscribe(first, 'Key_Shared');
    const b = await subscribe(second, 'Key_Shared');
    // Each member joins the key ranges with its first poll, which finds the subscription caught up.
    expect(await receiveMessages(first, admin, a, { maxMessages: 1 })).toEqual([]);
    expect(await receiveMessages(second, admin, b, { maxMessages: 1 })).toEqual([]);
    const members = [a, b].map((consumerId) => ({ consumerId, joinedAfter: Position.of(0, 0) }));
    const keys: string[] = [];
    const perMember = new Map<string, number>();
    for (let i = 0; (perMember.get(a) ?? 0) < 3 || (perMember.get(b) ?? 0) < 3; i++) {
      const owner = memberForKey(members, `key-${i}`)?.consumerId as string;
      if ((perMember.get(owner) ?? 0) >= 3) continue;
      perMember.set(owner, (perMember.get(owner) ?? 0) + 1);
      keys.push(`key-${i}`);
    }
    // Keys interleaved: a claim meets a run boundary at almost every entry.
    const messages = keys.flatMap((key) =>
      [0, 1, 2, 3].map((i) => ({ payload: `${key}/${i}`, key, properties: {} })),
    );
    await publishMessages(first, admin, topic, { messages, router: new RoundRobinRouter(0) });

    const received = await takeTurns(
      [
        { ports: first, id: a },
        { ports: second, id: b },
      ],
      12,
    );

    for (const id of [a, b]) {
      const expected = messages
        .filter((message) => memberForKey(members, message.key)?.consumerId === id)
        .map((message) => message.payload);
      expect(expected).toHaveLength(12);
      expect([id, received.get(id)]).toEqual([id, expected]);
    }
  });

  it('a Shared consumer whose process saw the subscription caught up finds a message whose ring went elsewhere', async () => {
    const [first, second] = twoProcesses();
    const a = await subscribe(first, 'Shared');
    const b = await subscribe(second, 'Shared');
    expect(await receiveMessages(second, admin, b, { maxMessages: 10 })).toEqual([]);
    await publishMessages(first, admin, topic, {
      messages: [{ payload: 'p0', properties: {} }],
      router: new RoundRobinRouter(0),
    });
    await publishMessages(first, admin, topic, {
      messages: [{ payload: 'p1', properties: {} }],
      router: new RoundRobinRouter(0),
    });
    // The first process's consumer takes one message, and with it every ring.
    const taken = await receiveMessages(first, admin, a, { maxMessages: 1 });
    expect(taken.map((message) => message.payload)).toEqual(['p0']);
    const doorbell = { cursorId: await cursorOf(first), ordered: false };
    while (await first.deliveryQueue.waitForRing(doorbell, 0)) {
      // every ring drained
    }
    // The second process still has its mark, but a receive that cannot wait a second reads the
    // cursor: an SQS short poll samples some servers and may miss a ring that is there, so it
    // never decides that nothing is waiting.
    const found = await receiveMessages(second, admin, b, { maxMessages: 10 });
    expect(found.map((message) => message.payload)).toEqual(['p1']);
  });

  it('a Shared receive that lost the claim to another consumer looks again within 100 ms, not after its whole wait', async () => {
    const [first, second] = twoProcesses();
    const a = await subscribe(first, 'Shared');
    const b = await subscribe(second, 'Shared');
    const payloads = Array.from({ length: 20 }, (_, i) => `m${i}`);
    await publishMessages(first, admin, topic, {
      messages: payloads.map((payload) => ({ payload, properties: {} })),
      router: new RoundRobinRouter(0),
    });
    const doorbell = { cursorId: await cursorOf(first), ordered: false };
    while (await first.deliveryQueue.waitForRing(doorbell, 0)) {
      // every ring drained: b finds none while it waits
    }
    // b's first claim is overtaken: a's receive runs between b's entries read and b's claim.
    const overtaken = overtakingLedger(second.ledger, async () => {
      const taken = await receiveMessages(first, admin, a, { maxMessages: 10 });
      expect(taken.map((message) => message.payload)).toEqual(payloads.slice(0, 10));
    });
    const waits: number[] = [];
    const waitingDoorbell = new Proxy(second.deliveryQueue, {
      get(target, property, receiver) {
        if (property !== 'waitForRing') return Reflect.get(target, property, receiver);
        return async (...args: Parameters<typeof target.waitForRing>) => {
          waits.push(args[1]);
          return target.waitForRing(...args);
        };
      },
    });

    const batch = await receiveMessages(
      { ...second, ledger: overtaken, deliveryQueue: waitingDoorbell },
      admin,
      b,
      { maxMessages: 10, waitMs: 20_000 },
    );

    expect(batch.map((message) => message.payload)).toEqual(payloads.slice(10, 20));
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(100);
  });
});

async function cursorOf(ports: UseCasePorts): Promise<string> {
  return (await ports.catalog.getSubscription(topic, 'sub'))?.cursorId as string;
}

/** Doorbells that record the wait of every waitForRing call, in order. */
class RecordingDoorbells extends InMemoryDeliveryQueue {
  readonly waits: number[] = [];

  override async waitForRing(queue: SubscriptionQueue, waitMs = 0): Promise<boolean> {
    this.waits.push(waitMs);
    return super.waitForRing(queue);
  }
}

/** A process whose mark says caught up, while p1 waits and its ring went to another process. */
async function markedWhileRingWentElsewhere(): Promise<{
  second: UseCasePorts;
  b: string;
  waits: number[];
}> {
  const doorbells = new RecordingDoorbells();
  const [first, second] = twoProcesses({ deliveryQueue: doorbells });
  await subscribe(first, 'Shared');
  const b = await subscribe(second, 'Shared');
  expect(await receiveMessages(second, admin, b, { maxMessages: 10 })).toEqual([]);
  await publishMessages(first, admin, topic, {
    messages: [{ payload: 'p1', properties: {} }],
    router: new RoundRobinRouter(0),
  });
  const doorbell = { cursorId: await cursorOf(first), ordered: false };
  expect(await first.deliveryQueue.waitForRing(doorbell, 0)).toBe(true);
  doorbells.waits.splice(0);
  return { second, b, waits: doorbells.waits };
}

describe('the caught-up mark and the doorbell', () => {
  it('a receive that trusts the mark long-polls a second or more within the mark, then reads the cursor', async () => {
    const { second, b, waits } = await markedWhileRingWentElsewhere();

    const found = await receiveMessages(second, admin, b, { maxMessages: 10, waitMs: 20_000 });

    expect(found.map((message) => message.payload)).toEqual(['p1']);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1_000);
    expect(waits[0]).toBeLessThanOrEqual(CAUGHT_UP_TTL_MS);
  });

  it.each([
    ['the call waits less than a second', 0, 999],
    ['the mark has less than a second left', CAUGHT_UP_TTL_MS - 999, 20_000],
  ])('a receive reads the cursor at once when %s: no short poll decides', async (_, agedMs, waitMs) => {
    const { second, b, waits } = await markedWhileRingWentElsewhere();
    (second.clock as ManualClock).advance(agedMs);

    const found = await receiveMessages(second, admin, b, { maxMessages: 10, waitMs });

    expect(found.map((message) => message.payload)).toEqual(['p1']);
    expect(waits).toEqual([]);
  });

  it('a wake that finds the subscription caught up drains the stale rings: one wake, not one per 11 rings', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const doorbells = new SqsLikeDoorbells(clock);
    const [ports] = twoProcesses({ clock, deliveryQueue: doorbells });
    const a = await subscribe(ports, 'Shared');
    // 30 publishes, 30 rings; the messages are taken and acknowledged without waiting, so the
    // rings stay: stale.
    for (let i = 0; i < 30; i++) {
      await publishMessages(ports, admin, topic, {
        messages: [{ payload: `m${i}`, properties: {} }],
        router: new RoundRobinRouter(0),
      });
    }
    const taken = await receiveMessages(ports, admin, a, { maxMessages: 100 });
    await acknowledgeMessages(ports, admin, a, {
      messageIds: [],
      deliveryHandles: taken.map((message) => message.deliveryHandle),
    });
    expect(await receiveMessages(ports, admin, a, { maxMessages: 100 })).toEqual([]);
    const cursorId = await cursorOf(ports);
    expect(doorbells.rings.get(cursorId)).toHaveLength(30);

    expect(await receiveMessages(ports, admin, a, { maxMessages: 10, waitMs: 20_000 })).toEqual([]);

    expect(doorbells.rings.get(cursorId)).toEqual([]);
    expect(doorbells.wakes).toBe(1);
  });
});

/**
 * Doorbells that wake as SQS does: a wait takes one ring and a short poll's batch of ten, and
 * lasts the time it waits when nothing rang.
 */
class SqsLikeDoorbells extends InMemoryDeliveryQueue {
  wakes = 0;

  constructor(private readonly clock: ManualClock) {
    super();
  }

  override async waitForRing(queue: SubscriptionQueue, waitMs = 0): Promise<boolean> {
    const rings = this.rings.get(queue.cursorId) ?? [];
    if (rings.length === 0) {
      this.clock.advance(waitMs);
      return super.waitForRing(queue);
    }
    rings.splice(0, 11);
    this.wakes += 1;
    return true;
  }
}
