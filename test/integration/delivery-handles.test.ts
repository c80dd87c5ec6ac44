import { describe, expect, it } from 'vitest';
import { AdminApi, parseMessageId, TopicRef } from '../support/admin-fixtures.ts';
import { ConsumerApi, type TestConsumer } from '../support/consumer-fixtures.ts';
import type { HttpResult } from '../support/http-client.ts';

// Only real handles acknowledge (issue 21, criterion 8), over HTTP against the shared embedded
// stack: a handle the server did not issue (unsigned as before, forged, naming another topic's
// ledger or an entry not written yet) answers 400 with a reason and acknowledges nothing; a
// genuine one from any consumer of the subscription, even a stale one, acknowledges as Pulsar does.

const admin = AdminApi.shared();
const consumers = ConsumerApi.shared();

const PREFIX = 'dh1.';

/** The fields of a handle's payload, as a client can read them. */
function fieldsOf(handle: string): [string, string, string, number, number] {
  const payload = handle.slice(PREFIX.length).split('.')[0] as string;
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
}

/** A genuine handle's tag over a payload the client chose. */
function retargeted(handle: string, change: { ledgerId?: string; entryId?: string }): string {
  const [cursorId, ledgerId, entryId, partitionIndex, count] = fieldsOf(handle);
  const payload = Buffer.from(
    JSON.stringify([cursorId, change.ledgerId ?? ledgerId, change.entryId ?? entryId, partitionIndex, count]),
  ).toString('base64url');
  return `${PREFIX}${payload}.${handle.split('.')[2]}`;
}

/** The unsigned handle earlier versions issued and took: base64url JSON [cursor, receipt, L, E, P, count]. */
function unsigned(handle: string, entryId: string): string {
  const [cursorId, ledgerId, , partitionIndex, count] = fieldsOf(handle);
  return Buffer.from(JSON.stringify([cursorId, '-', ledgerId, entryId, partitionIndex, count])).toString(
    'base64url',
  );
}

function reasonOf(result: HttpResult): unknown {
  return (result.body as { reason?: unknown } | undefined)?.reason;
}

interface ConsumerStatsBody {
  readonly consumerName: string;
  readonly unackedMessages: number;
}

/** Backlog, unacknowledged count and each consumer's unacknowledged count of subscription `sub`. */
async function counts(topic: TopicRef) {
  const sub = (await admin.stats(topic)).subscriptions.sub as unknown as {
    msgBacklog: number;
    unackedMessages: number;
    consumers: ConsumerStatsBody[];
  };
  return {
    backlog: sub.msgBacklog,
    unacked: sub.unackedMessages,
    perConsumer: Object.fromEntries(sub.consumers.map((c) => [c.consumerName, c.unackedMessages])),
  };
}

async function receiveExactly(consumer: TestConsumer, count: number) {
  const messages = await consumer.receiveN(count, 10_000);
  if (messages.length !== count) throw new Error(`expected ${count} messages, received ${messages.length}`);
  return messages;
}

describe('delivery handles the server did not issue', () => {
  it('answer 400 with a reason on ack, nack and redeliver-unacknowledged, and acknowledge nothing', async () => {
    const topic = TopicRef.unique('forged');
    const other = TopicRef.unique('forgedother');
    const consumer = await consumers.subscribe(topic, 'sub', {
      subscriptionType: 'Shared',
      consumerName: 'a',
    });
    await consumers.subscribe(other, 'sub', { subscriptionType: 'Shared', consumerName: 'b' });
    await admin.produceMany(topic, 2);
    const [otherId] = await admin.produceMany(other, 1);
    const held = await receiveExactly(consumer, 2);
    const genuine = held[0]?.deliveryHandle as string;
    const forged: [string, string][] = [
      ['an unsigned handle (earlier versions) of an entry not written yet', unsigned(genuine, '2')],
      ['a genuine handle retargeted at an entry not written yet', retargeted(genuine, { entryId: '5' })],
      [
        'a genuine handle retargeted at another topic’s ledger',
        retargeted(genuine, { ledgerId: parseMessageId(otherId as string).ledgerId, entryId: '0' }),
      ],
      ['a handle with a made-up tag', `${genuine.slice(0, -4)}AAAA`],
    ];

    const answers: { label: string; call: string; status: number; reason: unknown }[] = [];
    for (const [label, handle] of forged) {
      const deliveryHandles = [genuine, handle];
      for (const [call, result] of [
        ['ack', await consumer.sendAck({ deliveryHandles })],
        ['nack', await consumer.sendNack({ deliveryHandles })],
        ['redeliver-unacknowledged', await consumer.sendRedeliverUnacknowledged(deliveryHandles)],
      ] as const) {
        answers.push({ label, call, status: result.status, reason: reasonOf(result) });
      }
    }

    for (const answer of answers) {
      expect(answer, `${answer.label}, ${answer.call}`).toEqual({
        ...answer,
        status: 400,
        reason: expect.stringMatching(/not a handle this server issued/),
      });
    }
    expect(await counts(topic)).toEqual({ backlog: 2, unacked: 2, perConsumer: { a: 2 } });
    expect(await counts(other)).toEqual({ backlog: 1, unacked: 0, perConsumer: { b: 0 } });
    // No stray acknowledgement in either cursor.
    expect((await admin.cursors(topic)).sub?.individual).toBe('[]');
    expect((await admin.cursors(other)).sub?.individual).toBe('[]');

    // The entries the forged handles named are delivered once written: none was swallowed.
    await admin.produceMany(topic, 6, 'later');
    const later = await receiveExactly(consumer, 6);
    expect(later.map((m) => parseMessageId(m.messageId).entryId)).toEqual(['2', '3', '4', '5', '6', '7']);

    const acked = await consumer.sendAck({
      deliveryHandles: [...held, ...later].map((m) => m.deliveryHandle),
    });
    expect(acked.status).toBe(204);
    expect(await counts(topic)).toEqual({ backlog: 0, unacked: 0, perConsumer: { a: 0 } });
  });
});

describe('genuine delivery handles', () => {
  it('acknowledge from any consumer of the subscription, a stale one too, once, with the counts right', async () => {
    const topic = TopicRef.unique('stale');
    const body = { subscriptionType: 'Shared', negativeAckRedeliveryDelayMs: 0 } as const;
    const a = await consumers.subscribe(topic, 'sub', { ...body, consumerName: 'a' });
    const b = await consumers.subscribe(topic, 'sub', { ...body, consumerName: 'b' });
    await admin.produceMany(topic, 2);
    const [first, second] = await receiveExactly(a, 2);
    // a gives the first back (no delay) and b gets it, count 1: a's handle of it is stale now.
    expect((await a.sendNack({ deliveryHandles: [first?.deliveryHandle as string] })).status).toBe(204);
    const [again] = await receiveExactly(b, 1);
    expect(again).toMatchObject({ messageId: first?.messageId, redeliveryCount: 1 });

    const stale = await a.sendAck({ deliveryHandles: [first?.deliveryHandle as string] });
    const afterStale = await counts(topic);
    const own = await b.sendAck({ deliveryHandles: [again?.deliveryHandle as string] });
    const othersHandle = await b.sendAck({ deliveryHandles: [second?.deliveryHandle as string] });
    const staleNack = await a.sendNack({
      deliveryHandles: [first?.deliveryHandle as string, second?.deliveryHandle as string],
    });

    expect([stale.status, own.status, othersHandle.status, staleNack.status]).toEqual([204, 204, 204, 204]);
    expect(afterStale).toEqual({ backlog: 1, unacked: 1, perConsumer: { a: 1, b: 0 } });
    expect(await counts(topic)).toEqual({ backlog: 0, unacked: 0, perConsumer: { a: 0, b: 0 } });
    expect([...(await a.receiveFor(1500)), ...(await b.receiveFor(1500))]).toEqual([]);
  });
});
