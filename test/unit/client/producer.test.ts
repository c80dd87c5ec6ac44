import { describe, expect, it } from 'vitest';
import {
  AcklineClientArgumentError,
  AcklineClientClosedError,
  AcklinePublishError,
} from '../../../shared/client/errors.ts';
import type { TypedMessageBuilder } from '../../../shared/client/message-builder.ts';
import type { ProducerBuilder } from '../../../shared/client/producer-builder.ts';
import { MessageId } from '../../../shared/domain/message-id.ts';
import { FakeDataApi } from './fake-data-api.ts';
import { jsonResponse, reasonResponse } from './fake-fetch.ts';
import { BASE, clientOf, failure, PRODUCE_PATH, TOPIC } from './sdk-fixtures.ts';

async function producerOf(
  configure: (builder: ProducerBuilder) => ProducerBuilder = (builder) => builder,
  api = new FakeDataApi(),
) {
  const producer = await configure(clientOf(api).newProducer().topic(TOPIC)).create();
  return { producer, api };
}

/** The `messages` of each produce request. */
function batches(api: FakeDataApi): unknown[][] {
  return api.bodiesTo(PRODUCE_PATH).map((body) => (body as { messages: unknown[] }).messages);
}

describe('Producer.send()', () => {
  it("POSTs Pulsar's REST produce body and resolves to the MessageId", async () => {
    const { producer, api } = await producerOf();

    const id = await producer.send('order 1');

    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]).toMatchObject({ method: 'POST', url: `${BASE}${PRODUCE_PATH}` });
    expect(api.requests[0]!.headers.authorization).toBe('Bearer tok');
    expect(api.requests[0]!.body).toBe('{"messages":[{"payload":"order 1"}]}');
    expect(id).toBeInstanceOf(MessageId);
    expect(id.toString()).toBe('1:0:-1');
    expect(producer.getTopic()).toBe(TOPIC);
  });

  it('sends every field of a built message', async () => {
    const { producer, api } = await producerOf();

    await producer
      .newMessage()
      .value('order 2')
      .key('customer-7')
      .property('traceId', 'abc')
      .properties({ source: 'web', traceId: 'def' })
      .eventTime(1_600_000_000_000)
      .deliverAfter(60_000)
      .send();

    expect(batches(api)).toEqual([
      [
        {
          payload: 'order 2',
          key: 'customer-7',
          properties: { traceId: 'def', source: 'web' },
          eventTime: 1_600_000_000_000,
          deliverAfterMs: 60_000,
        },
      ],
    ]);
  });

  it.each([
    ['deliverAt after deliverAfter', { deliverAt: 1_900_000_000_000 }, true],
    ['deliverAfter after deliverAt', { deliverAfterMs: 5 }, false],
  ])('keeps only the later delivery time: %s', async (_name, expected, deliverAtLast) => {
    const { producer, api } = await producerOf();
    const message = producer.newMessage().value('x');

    if (deliverAtLast) message.deliverAfter(5).deliverAt(1_900_000_000_000);
    else message.deliverAt(1_900_000_000_000).deliverAfter(5);
    await message.send();

    expect(batches(api)).toEqual([[{ payload: 'x', ...expected }]]);
  });

  it.each<[string, (message: TypedMessageBuilder) => TypedMessageBuilder, string]>([
    ['no value', (message) => message.key('k'), 'no value'],
    ['a negative event time', (message) => message.value('x').eventTime(-1), 'eventTime'],
    ['a fractional delay', (message) => message.value('x').deliverAfter(1.5), 'deliverAfter'],
    ['an unsafe deliverAt', (message) => message.value('x').deliverAt(2 ** 60), 'deliverAt'],
  ])('refuses a message with %s before sending', async (_name, build, reason) => {
    const { producer, api } = await producerOf();

    const error = await failure(build(producer.newMessage()).send());

    expect(error).toBeInstanceOf(AcklineClientArgumentError);
    expect(error.reason).toContain(reason);
    expect(api.requests).toHaveLength(0);
  });

  it("rejects with the server's reason on an HTTP error", async () => {
    const api = new FakeDataApi(() => reasonResponse(403, 'Forbidden', 'role ops may not produce'));
    const { producer } = await producerOf(undefined, api);

    const error = await failure(producer.send('x'));

    expect([error.statusCode, error.reason]).toEqual([403, 'role ops may not produce']);
  });
});

describe('Producer batching', () => {
  it('sends the sendAsync messages of one moment in one request, resolving each to its id', async () => {
    const { producer, api } = await producerOf();

    const ids = await Promise.all([
      producer.sendAsync('a'),
      producer.sendAsync('b'),
      producer.sendAsync('c'),
    ]);

    expect(ids.map(String)).toEqual(['1:0:-1', '1:1:-1', '1:2:-1']);
    expect(batches(api)).toEqual([[{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }]]);
  });

  it('sends the pending batch with a send()', async () => {
    const { producer, api } = await producerOf((builder) => builder.batchingMaxPublishDelay(60_000));

    const first = producer.sendAsync('a');
    const second = producer.newMessage().value('b').send();
    await Promise.all([first, second]);

    expect(batches(api)).toEqual([[{ payload: 'a' }, { payload: 'b' }]]);
  });

  it('splits batches at batchingMaxMessages', async () => {
    const { producer, api } = await producerOf((builder) => builder.batchingMaxMessages(2));

    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((value) => producer.sendAsync(value)));

    expect(batches(api).map((batch) => batch.length)).toEqual([2, 2, 1]);
  });

  it('splits batches at batchingMaxBytes, sending a larger message alone', async () => {
    const { producer, api } = await producerOf((builder) => builder.batchingMaxBytes(60));

    await Promise.all(['a', 'b', 'x'.repeat(100), 'c'].map((value) => producer.sendAsync(value)));

    expect(batches(api).map((batch) => batch.length)).toEqual([2, 1, 1]);
  });

  it('sends each message alone when batching is disabled', async () => {
    const { producer, api } = await producerOf((builder) => builder.enableBatching(false));

    await Promise.all([producer.sendAsync('a'), producer.sendAsync('b')]);

    expect(batches(api)).toEqual([[{ payload: 'a' }], [{ payload: 'b' }]]);
  });

  it('rejects only the messages the server refused', async () => {
    const api = new FakeDataApi(() =>
      jsonResponse({
        messagePublishResults: [
          { messageId: '1:0:-1', errorCode: 0 },
          { messageId: '', errorCode: 2, errorMsg: 'payload too large' },
        ],
      }),
    );
    const { producer } = await producerOf(undefined, api);

    const [ok, refused] = await Promise.allSettled([producer.sendAsync('a'), producer.sendAsync('b')]);

    expect(ok).toMatchObject({ status: 'fulfilled' });
    expect(String((ok as PromiseFulfilledResult<MessageId>).value)).toBe('1:0:-1');
    const error = (refused as PromiseRejectedResult).reason as AcklinePublishError;
    expect(error).toBeInstanceOf(AcklinePublishError);
    expect([error.errorCode, error.reason]).toEqual([2, 'payload too large']);
  });

  it('rejects every message of a batch when the answer does not match it', async () => {
    const api = new FakeDataApi(() =>
      jsonResponse({ messagePublishResults: [{ messageId: '1:0:-1', errorCode: 0 }] }),
    );
    const { producer } = await producerOf(undefined, api);

    const results = await Promise.allSettled([producer.sendAsync('a'), producer.sendAsync('b')]);

    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(((results[0] as PromiseRejectedResult).reason as Error).message).toContain(
      'messagePublishResults',
    );
  });

  it('flush() sends the pending batch and waits for its answer', async () => {
    const { producer, api } = await producerOf((builder) => builder.batchingMaxPublishDelay(60_000));
    const sent = producer.sendAsync('a');

    await producer.flush();

    expect(batches(api)).toEqual([[{ payload: 'a' }]]);
    expect(String(await sent)).toBe('1:0:-1');
  });
});

describe('Producer.close()', () => {
  it('sends what is batched, then refuses new messages', async () => {
    const { producer, api } = await producerOf((builder) => builder.batchingMaxPublishDelay(60_000));
    const sent = producer.sendAsync('a');

    await producer.close();
    await producer.close();

    expect(String(await sent)).toBe('1:0:-1');
    expect(batches(api)).toEqual([[{ payload: 'a' }]]);
    await expect(producer.send('b')).rejects.toBeInstanceOf(AcklineClientClosedError);
  });
});

describe('ProducerBuilder.create()', () => {
  it.each<[string, (builder: ProducerBuilder) => ProducerBuilder]>([
    ['no topic', (builder) => builder.topic('')],
    ['an invalid topic', (builder) => builder.topic('http://t/ns/x')],
    ['batchingMaxMessages above the server limit', (builder) => builder.batchingMaxMessages(1001)],
    ['a negative batching delay', (builder) => builder.batchingMaxPublishDelay(-1)],
    ['batchingMaxBytes 0', (builder) => builder.batchingMaxBytes(0)],
  ])('refuses %s', async (_name, configure) => {
    const error = await failure(configure(clientOf(new FakeDataApi()).newProducer().topic(TOPIC)).create());

    expect(error).toBeInstanceOf(AcklineClientArgumentError);
  });

  it('percent-encodes the topic in the produce path', async () => {
    const api = new FakeDataApi();
    const producer = await clientOf(api).newProducer().topic('non-persistent://t/ns/a b').create();

    await producer.send('x');

    expect(api.calls()).toEqual(['POST /topics/non-persistent/t/ns/a%20b']);
  });
});
