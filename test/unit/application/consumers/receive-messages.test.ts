// The receive use case over in-memory ports, with two "processes" (Lambda containers): two
// UseCasePorts over the same stores and queues, each with its own caches and hints. A doorbell ring
// wakes one receiver, in whichever process polls first: nothing may wait on a ring that went to
// the other process or to another member.
import { describe, expect, it } from 'vitest';
import { acknowledgeMessages } from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { memberForKey } from '../../../../shared/application/engine/key-shared-routing.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { twoProcesses } from '../../../support/in-memory-processes.ts';
import type { ManualClock } from '../../../support/manual-clock.ts';
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
    expect(await receiveMessages(second, admin, b, { maxMessages: 10 })).toEqual([]);

    // The second process still has its mark: within the mark's life its short polls ask the
    // doorbell; once the mark has expired it reads the cursor again.
    (first.clock as ManualClock).advance(5_000);
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
