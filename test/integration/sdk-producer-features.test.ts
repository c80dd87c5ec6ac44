import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { AcklineClient } from '../../shared/index.ts';
import { AdminApi, tokenFor } from '../support/admin-fixtures.ts';

// Binary payloads, producer names and producer deduplication over HTTP on the embedded stack.
const client = () =>
  AcklineClient.builder().serviceUrl(inject('acklineUrl')).authToken(tokenFor('admin')).build();
const localName = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
const topicOf = (local: string) => `persistent://ackline-it/sdk/${local}`;
const producePath = (local: string) => `/topics/persistent/ackline-it/sdk/${local}`;
const adminPath = (local: string) => `/admin/v2/persistent/ackline-it/sdk/${local}`;

async function backlog(admin: AdminApi, local: string, subscription: string): Promise<number> {
  const stats = await admin.send('GET', `${adminPath(local)}/stats`);
  return (stats.body as { subscriptions: Record<string, { msgBacklog: number }> }).subscriptions[subscription]
    ?.msgBacklog as number;
}

/** A topic with a subscription from the start and deduplication on. */
async function dedupTopic(admin: AdminApi, label: string): Promise<string> {
  const local = localName(label);
  expect((await admin.send('PUT', adminPath(local))).status).toBe(204);
  await admin.send('PUT', `${adminPath(local)}/subscription/all`, { body: { ledgerId: -1, entryId: -1 } });
  expect((await admin.send('POST', `${adminPath(local)}/deduplicationEnabled`, { body: true })).status).toBe(
    204,
  );
  return local;
}

describe('SDK binary payloads and producer names', () => {
  it('stores and delivers bytes as bytes; the 256 KiB limit counts raw bytes', async () => {
    const sdk = client();
    const local = localName('bytes');
    const consumer = await sdk
      .newConsumer()
      .topic(topicOf(local))
      .subscriptionName('s')
      .subscriptionInitialPosition('Earliest')
      .subscribe();
    const producer = await sdk.newProducer().topic(topicOf(local)).create();
    const everyByte = new Uint8Array(256).map((_, i) => i);
    await producer.send(everyByte);
    await producer.send(Buffer.from('héllo'));
    await producer.send('text');
    // 256 KiB of bytes is 349,528 characters of base64 on the wire: accepted.
    await producer.send(new Uint8Array(256 * 1024).fill(7));
    const tooLarge = await producer.send(new Uint8Array(256 * 1024 + 1)).catch((error: unknown) => error);
    const received = [];
    for (let i = 0; i < 4; i += 1) received.push(await consumer.receive(8_000));
    await sdk.close();

    expect([...(received[0]?.getData() ?? [])]).toEqual([...everyByte]);
    expect(received[0]?.isBinary()).toBe(true);
    expect(received[1]?.getValue()).toBe('héllo');
    expect(received[2]?.isBinary()).toBe(false);
    expect(received[2]?.getValue()).toBe('text');
    expect(received[3]?.getPayloadSize()).toBe(256 * 1024);
    expect((tooLarge as { statusCode?: number }).statusCode).toBe(413);
  });

  it('puts the producer name on every message: the name a producer was given, else the role', async () => {
    const sdk = client();
    const topic = topicOf(localName('names'));
    const consumer = await sdk
      .newConsumer()
      .topic(topic)
      .subscriptionName('s')
      .subscriptionInitialPosition('Earliest')
      .subscribe();
    const named = await sdk.newProducer().topic(topic).producerName('importer-1').create();
    const unnamed = await sdk.newProducer().topic(topic).create();
    await named.send('a');
    await unnamed.send('b');
    const first = await consumer.receive(8_000);
    const second = await consumer.receive(8_000);
    await sdk.close();

    expect(named.getProducerName()).toBe('importer-1');
    expect(first?.getProducerName()).toBe('importer-1');
    expect(second?.getProducerName()).toBe('admin');
  });

  it('refuses a base64 payload that is not base64, and a sequenceId without a producerName (400)', async () => {
    const admin = AdminApi.shared();
    const local = localName('bad');
    const notBase64 = await admin.send('POST', producePath(local), {
      body: { messages: [{ payload: 'not base64!', payloadEncoding: 'base64' }] },
    });
    const noName = await admin.send('POST', producePath(local), {
      body: { messages: [{ payload: 'x', sequenceId: 1 }] },
    });

    expect(notBase64.status).toBe(400);
    expect(noName.status).toBe(400);
    expect(JSON.stringify(noName.body)).toMatch(/producerName/);
  });
});

describe('producer deduplication (brokerDeduplicationEnabled)', () => {
  it('answers a resent publish with the stored MessageIds and stores nothing again', async () => {
    const admin = AdminApi.shared();
    const local = await dedupTopic(admin, 'dedup');
    const body = {
      producerName: 'p1',
      messages: [
        { payload: 'a', sequenceId: 0 },
        { payload: 'b', sequenceId: 1 },
      ],
    };
    const first = await admin.send('POST', producePath(local), { body });
    const again = await admin.send('POST', producePath(local), { body });
    const older = await admin.send('POST', producePath(local), {
      body: {
        producerName: 'p1',
        messages: [
          { payload: 'b again', sequenceId: 1 },
          { payload: 'c', sequenceId: 2 },
        ],
      },
    });
    const last = await admin.send('GET', `${producePath(local)}/producers/p1/lastSequenceId`);
    const stored = await backlog(admin, local, 'all');

    const ids = (result: { body: unknown }) =>
      (result.body as { messagePublishResults: { messageId: string }[] }).messagePublishResults.map(
        (r) => r.messageId,
      );
    expect(ids(again)).toEqual(ids(first));
    expect(ids(older)[0]).toBe(ids(first)[1]);
    expect(stored).toBe(3);
    expect(last.body).toMatchObject({ producerName: 'p1', lastSequenceId: 2 });
  });

  it('stores once when the same publish is retried concurrently (the others get the id or a 503 to retry)', async () => {
    const admin = AdminApi.shared();
    const local = await dedupTopic(admin, 'race');
    const body = { producerName: 'racer', messages: [{ payload: 'once', sequenceId: 7 }] };
    const results = await Promise.all(
      Array.from({ length: 6 }, () => admin.send('POST', producePath(local), { body })),
    );
    const settled = await admin.send('POST', producePath(local), { body });
    const stored = await backlog(admin, local, 'all');

    expect(results.every((r) => r.status === 200 || r.status === 503)).toBe(true);
    const messageIds = new Set(
      results
        .filter((r) => r.status === 200)
        .map(
          (r) =>
            (r.body as { messagePublishResults: { messageId: string }[] }).messagePublishResults[0]
              ?.messageId,
        ),
    );
    expect(messageIds.size).toBe(1);
    expect(stored).toBe(1);
    expect(settled.status).toBe(200);
  });

  it('stores twice without the policy (deduplication is off by default)', async () => {
    const admin = AdminApi.shared();
    const local = localName('off');
    await admin.send('PUT', adminPath(local));
    await admin.send('PUT', `${adminPath(local)}/subscription/all`, { body: { ledgerId: -1, entryId: -1 } });
    const body = { producerName: 'p', messages: [{ payload: 'x', sequenceId: 0 }] };
    await admin.send('POST', producePath(local), { body });
    await admin.send('POST', producePath(local), { body });

    expect(await backlog(admin, local, 'all')).toBe(2);
    expect((await admin.send('GET', `${adminPath(local)}/deduplicationEnabled`)).status).toBe(204);
  });

  it('a named SDK producer that reconnects numbers on after the last stored sequence id; a resend is dropped', async () => {
    const admin = AdminApi.shared();
    const local = await dedupTopic(admin, 'resume');
    const sdk = client();
    const first = await sdk.newProducer().topic(topicOf(local)).producerName('job').create();
    await first.send('m0');
    const id1 = await first.send('m1');
    await first.close();
    const second = await sdk.newProducer().topic(topicOf(local)).producerName('job').create();
    const resumedAt = second.getLastSequenceId();
    const resent = await second.newMessage().value('m1 resent').sequenceId(1).send();
    await second.send('m2');
    const stored = await backlog(admin, local, 'all');
    await sdk.close();

    expect(resumedAt).toBe(1);
    expect(resent.toString()).toBe(id1.toString());
    expect(second.getLastSequenceId()).toBe(2);
    expect(stored).toBe(3);
  });
});
