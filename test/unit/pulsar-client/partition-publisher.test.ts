import { describe, expect, it } from 'vitest';
import { AcklineClient } from '../../../shared/index.ts';
import { outgoingMessage } from '../../../shared/pulsar-client/outgoing-message.ts';
import { type BatchSettings, PartitionPublisher } from '../../../shared/pulsar-client/partition-publisher.ts';
import type { ProducerMessage } from '../../../shared/pulsar-client/types.ts';

// The compat producer's send queue over the real SDK producer, whose fetch answers produce requests
// in memory: each request's messages, in order, are what the server would store.

interface Stored {
  readonly payload: string;
  readonly payloadEncoding?: string;
  readonly sequenceId?: number;
  readonly key?: string;
  readonly properties?: Record<string, string>;
}

function fakeService(answerDelayMs = 0) {
  const requests: (Stored & { text: string })[][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let entryId = 0;
  const fetch = async (_url: string, init: RequestInit) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const { messages } = JSON.parse(String(init.body)) as { messages: Stored[] };
    requests.push(
      messages.map((m) => ({
        ...m,
        text: m.payloadEncoding === 'base64' ? Buffer.from(m.payload, 'base64').toString() : m.payload,
      })),
    );
    await new Promise((resolve) => setTimeout(resolve, answerDelayMs));
    inFlight -= 1;
    const results = messages.map(() => ({ messageId: `7:${entryId++}:-1`, errorCode: 0 }));
    return new Response(JSON.stringify({ messagePublishResults: results }), { status: 200 });
  };
  return { fetch, requests, maxInFlight: () => maxInFlight };
}

async function publisherOver(service: ReturnType<typeof fakeService>, batching: Partial<BatchSettings> = {}) {
  const sdk = AcklineClient.builder().serviceUrl('http://ackline.test').fetch(service.fetch).build();
  const producer = await sdk
    .newProducer()
    .topic('persistent://public/default/t')
    .batchingMaxPublishDelay(60_000)
    .create();
  const published: string[] = [];
  const settings: BatchSettings = {
    enabled: true,
    maxPublishDelayMs: 10,
    maxMessages: 1000,
    maxBytes: 128 * 1024,
    keyBased: false,
    ...batching,
  };
  return {
    publisher: new PartitionPublisher(producer, settings, (id) => published.push(id.toString())),
    published,
  };
}

const message = (data: string, fields: Partial<ProducerMessage> = {}) =>
  outgoingMessage({ data: Buffer.from(data), ...fields });

describe("the compat producer's send queue", () => {
  it('without batching, sends one request at a time, in send order; what queued meanwhile goes in the next', async () => {
    const service = fakeService(20);
    const { publisher, published } = await publisherOver(service, { enabled: false });
    const ids = await Promise.all(['a', 'b', 'c', 'd'].map((data) => publisher.enqueue(message(data))));
    expect(service.requests.map((request) => request.map((m) => m.text))).toEqual([['a'], ['b', 'c', 'd']]);
    expect(service.maxInFlight()).toBe(1);
    expect(ids.map(String)).toEqual(['(7,0,-1,-1)', '(7,1,-1,-1)', '(7,2,-1,-1)', '(7,3,-1,-1)']);
    expect(published).toEqual(ids.map(String));
  });

  it('with batching, closes a batch at batchingMaxMessages, and flush() sends the rest', async () => {
    const service = fakeService();
    const { publisher } = await publisherOver(service, { maxMessages: 2, maxPublishDelayMs: 60_000 });
    const sent = ['a', 'b', 'c'].map((data) => publisher.enqueue(message(data)));
    await publisher.flush();
    await Promise.all(sent);
    expect(service.requests.map((request) => request.map((m) => m.text))).toEqual([['a', 'b'], ['c']]);
  });

  it('key-based batching stores a batch key by key, keys in the order of their first message', async () => {
    const service = fakeService();
    const { publisher } = await publisherOver(service, { keyBased: true, maxPublishDelayMs: 60_000 });
    const keys = ['A', 'B', 'C', 'B', 'C', 'A'];
    const sent = keys.map((key, i) => publisher.enqueue(message(String(i), { partitionKey: key })));
    await publisher.flush();
    await Promise.all(sent);
    expect(service.requests).toHaveLength(1);
    expect(service.requests[0]!.map((m) => `${m.key}${m.text}`)).toEqual([
      'A0',
      'A5',
      'B1',
      'B3',
      'C2',
      'C4',
    ]);
  });

  it('stores the ordering key as the key and keeps both keys in reserved properties', async () => {
    const service = fakeService();
    const { publisher } = await publisherOver(service, { enabled: false });
    await publisher.enqueue(message('x', { orderingKey: 'A', partitionKey: 'B', properties: { p: '1' } }));
    expect(service.requests[0]![0]).toMatchObject({
      key: 'A',
      properties: { p: '1', '__pulsar.orderingKey': 'A', '__pulsar.partitionKey': 'B' },
    });
  });

  it('sends the payload as bytes (base64 inside the JSON), whatever they are, with the sequence id given', async () => {
    const service = fakeService();
    const { publisher } = await publisherOver(service, { enabled: false });
    await publisher.enqueue(outgoingMessage({ data: Buffer.from([0xff, 0x00, 0xfe]), sequenceId: 41 }));
    expect(service.requests[0]![0]).toMatchObject({
      payload: '/wD+',
      payloadEncoding: 'base64',
      sequenceId: 41,
    });
  });

  it('reads what pulsar-client reads from send(): a non-object is an empty message', () => {
    expect(outgoingMessage(7 as unknown as ProducerMessage).data.length).toBe(0);
    expect(outgoingMessage('text' as unknown as ProducerMessage).data.length).toBe(0);
    expect(() =>
      outgoingMessage({ data: Buffer.from('x'), partitionKey: 1 } as unknown as ProducerMessage),
    ).toThrow('partitionKey must be a string');
  });
});
