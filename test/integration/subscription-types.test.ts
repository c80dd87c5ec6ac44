import { describe, it } from 'vitest';
import { memberForKey } from '../../shared/application/engine/key-shared-routing.ts';
import { Position } from '../../shared/domain/position.ts';
import { AdminApi, parseMessageId, TopicRef } from '../support/admin-fixtures.ts';
import {
  ConsumerApi,
  numbered,
  payloads,
  type TestConsumer,
  type TimedMessage,
} from '../support/consumer-fixtures.ts';

// The four subscription types of issue 4 (criterion 8), with several HTTP consumers on one
// subscription of the shared embedded stack.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

function sorted(values: readonly string[]): string[] {
  return [...values].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/** Polls the consumers in turn (short polls), acknowledging each batch, until `total` arrived. */
async function takeTurns(
  members: readonly TestConsumer[],
  total: number,
  timeoutMs: number,
): Promise<TimedMessage[][]> {
  const received: TimedMessage[][] = members.map(() => []);
  const deadline = Date.now() + timeoutMs;
  const count = () => received.reduce((sum, list) => sum + list.length, 0);
  while (count() < total && Date.now() < deadline) {
    for (const [index, member] of members.entries()) {
      const batch = await member.receive(5, 0);
      if (batch.length > 0) await member.ack(batch);
      received[index]?.push(...batch);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return received;
}

/** Every consumer long-polls at the same time, acknowledging each batch, until `total` arrived. */
async function pollTogether(
  members: readonly TestConsumer[],
  total: number,
  timeoutMs: number,
): Promise<TimedMessage[][]> {
  const received: TimedMessage[][] = members.map(() => []);
  const deadline = Date.now() + timeoutMs;
  const count = () => received.reduce((sum, list) => sum + list.length, 0);
  await Promise.all(
    members.map(async (member, index) => {
      while (count() < total && Date.now() < deadline) {
        const batch = await member.receive(10, Math.min(1000, Math.max(0, deadline - Date.now())));
        if (batch.length > 0) await member.ack(batch);
        received[index]?.push(...batch);
      }
    }),
  );
  return received;
}

/** Keys the Key_Shared selector gives to the first and to the second of two members. */
/** Keys the engine routes to each of two members (consistent hashing over their ids). */
function keysPerMember(perMember: number, [firstId, secondId]: [string, string]): [string[], string[]] {
  const first: string[] = [];
  const second: string[] = [];
  const members = [firstId, secondId].map((consumerId) => ({ consumerId, joinedAfter: Position.of(0, 0) }));
  for (let i = 0; first.length < perMember || second.length < perMember; i++) {
    const key = `key-${i}`;
    const list = memberForKey(members, key)?.consumerId === firstId ? first : second;
    if (list.length < perMember) list.push(key);
  }
  return [first, second];
}

describe.concurrent('Shared', () => {
  it('two consumers split the messages; individual acks empty the backlog', async ({ expect }) => {
    const topic = TopicRef.unique('shared');
    const a = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    const b = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
    await admin.produceMany(topic, 30);

    const [fromA, fromB] = (await takeTurns([a, b], 30, 15_000)) as [TimedMessage[], TimedMessage[]];

    expect(fromA.length).toBeGreaterThan(0);
    expect(fromB.length).toBeGreaterThan(0);
    expect(sorted([...payloads(fromA), ...payloads(fromB)])).toEqual(numbered(30));
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });
});

describe.concurrent('Key_Shared', () => {
  async function twoMembers(label: string) {
    const topic = TopicRef.unique(label);
    const a = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Key_Shared' });
    const b = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Key_Shared' });
    // A member joins the key ranges when it polls.
    await a.receive(1, 0);
    await b.receive(1, 0);
    const [firstKeys, secondKeys] = keysPerMember(3, [a.id, b.id]);
    const keys = [...firstKeys, ...secondKeys];
    const messages = keys.flatMap((key) =>
      Array.from({ length: 4 }, (_, i) => ({ payload: `${key}/${i}`, key })),
    );
    await admin.produce(topic, messages);
    return { topic, a, b, keys, total: messages.length };
  }

  /** key -> the indexes of the consumers that received a message of it. */
  function receiversByKey(received: readonly TimedMessage[][]): Map<string, Set<number>> {
    const byKey = new Map<string, Set<number>>();
    received.forEach((list, index) => {
      for (const message of list) {
        const receivers = byKey.get(message.key as string) ?? new Set<number>();
        receivers.add(index);
        byKey.set(message.key as string, receivers);
      }
    });
    return byKey;
  }

  it('each key goes to one consumer while both are alive (consumers taking turns)', async ({ expect }) => {
    const { topic, a, b, keys, total } = await twoMembers('keyshared');

    const received = await takeTurns([a, b], total, 15_000);
    const byKey = receiversByKey(received);

    expect(sorted(received.flat().map((m) => m.payload))).toEqual(
      sorted(keys.flatMap((key) => [0, 1, 2, 3].map((i) => `${key}/${i}`))),
    );
    for (const key of keys) expect([key, byKey.get(key)?.size]).toEqual([key, 1]);
    expect(received.map((list) => list.length > 0)).toEqual([true, true]);
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it('loses nothing while both consumers long-poll at the same time', async ({ expect }) => {
    const { topic, a, b, keys, total } = await twoMembers('keysharedpoll');

    const received = await pollTogether([a, b], total, 12_000);
    const byKey = receiversByKey(received);

    expect(received.flat()).toHaveLength(total);
    for (const key of keys) expect([key, byKey.get(key)?.size]).toEqual([key, 1]);
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it("a busy consumer's keys wait for it while the other long-polls", async ({ expect }) => {
    const topic = TopicRef.unique('keysharedbusy');
    const a = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Key_Shared' });
    const b = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Key_Shared' });
    await a.receive(1, 0);
    await b.receive(1, 0);
    const busyKeys = keysPerMember(3, [a.id, b.id])[1];
    await admin.produce(
      topic,
      busyKeys.flatMap((key) => [0, 1].map((i) => ({ payload: `${key}/${i}`, key }))),
    );

    const byIdle = await a.receive(10, 4000);
    const byBusy = await b.receiveN(6, 5000);

    expect(byIdle).toEqual([]);
    expect(sorted(payloads(byBusy))).toEqual(sorted(busyKeys.flatMap((key) => [`${key}/0`, `${key}/1`])));
  });

  it('the remaining consumer gets every key once the other closed', async ({ expect }) => {
    const { a, b, total } = await twoMembers('keysharedclose');

    await b.close();
    const received = await a.receiveN(total, 10_000);

    expect(received).toHaveLength(total);
  });
});

describe.concurrent('Exclusive', () => {
  it('refuses a second consumer (409) and delivers 50 messages in publish order', async ({ expect }) => {
    const topic = TopicRef.unique('exclusive');
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    for (let batch = 0; batch < 5; batch++) {
      await admin.produce(
        topic,
        numbered(10, 'm', batch * 10).map((payload) => ({ payload })),
      );
    }

    const second = await consumers.sendSubscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    const received = await consumer.receiveN(50, 15_000);
    await consumer.ackCumulative(received[received.length - 1]?.messageId as string);

    expect(second.status).toBe(409);
    expect(payloads(received)).toEqual(numbered(50));
    expect(await admin.backlogs(topic)).toEqual({ sub: 0 });
  });

  it('keeps the order of each partition of a partitioned topic', async ({ expect }) => {
    const topic = TopicRef.unique('exclparts');
    await admin.createTopic(topic, 3);
    const consumer = await consumers.subscribe(topic, 'sub', { subscriptionType: 'Exclusive' });
    await admin.produceMany(topic, 30, 'a');
    await admin.produceMany(topic, 30, 'b');

    const received = await consumer.receiveN(60, 15_000);
    const perPartition = new Map<number, number[]>();
    for (const message of received) {
      const { partition } = parseMessageId(message.messageId);
      const index = Number(message.payload.slice(1)) + (message.payload.startsWith('b') ? 1000 : 0);
      perPartition.set(partition, [...(perPartition.get(partition) ?? []), index]);
    }

    expect(received).toHaveLength(60);
    expect(perPartition.size).toBe(3);
    for (const [partition, indexes] of perPartition) {
      expect([partition, indexes]).toEqual([partition, [...indexes].sort((x, y) => x - y)]);
    }
  });
});

describe.concurrent('Failover', () => {
  async function activeAndStandby(label: string) {
    const topic = TopicRef.unique(label);
    const active = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Failover',
      consumerName: 'a',
    });
    const standby = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Failover',
      consumerName: 'b',
    });
    await admin.produceMany(topic, 20);
    return { topic, active, standby };
  }

  it('the standby gets nothing while the active consumer polls, then the rest in order after it closed', async ({
    expect,
  }) => {
    const { topic, active, standby } = await activeAndStandby('failover');
    const first = await active.receiveN(10, 5000);
    await active.ackCumulative(first[9]?.messageId as string);

    const whileActive = await standby.receive(10, 1000);
    const activeAgain = await active.receive(1, 1000);
    await active.ackCumulative(activeAgain[0]?.messageId as string);
    await active.close();
    const rest = await standby.receiveN(9, 8000);

    expect(payloads(first)).toEqual(numbered(10));
    expect(whileActive).toEqual([]);
    expect(payloads(activeAgain)).toEqual(['m10']);
    expect(payloads(rest)).toEqual(numbered(9, 'm', 11));
    expect(await admin.backlogs(topic)).toEqual({ sub: 9 });
  });

  it('the standby also gets, in order, what the closed active consumer received but did not acknowledge', async ({
    expect,
  }) => {
    const { active, standby } = await activeAndStandby('failoverunacked');
    const first = await active.receiveN(10, 5000);
    await active.ackCumulative(first[4]?.messageId as string);

    await active.close();
    const rest = await standby.receiveN(15, 8000);

    expect(payloads(first)).toEqual(numbered(10));
    expect(payloads(rest)).toEqual(numbered(15, 'm', 5));
  });
});
