import { describe, expect, it } from 'vitest';
import { MAX_RECEIVE_WAIT_MS } from '../../../shared/client/consumer.ts';
import { AcklineClientArgumentError, AcklineClientClosedError } from '../../../shared/client/errors.ts';
import { MessageId } from '../../../shared/domain/message-id.ts';
import { CONSUMER_ID, FakeDataApi, type WireMessage, wireMessage } from './fake-data-api.ts';
import { jsonResponse, reasonResponse } from './fake-fetch.ts';
import { failure, subscribed } from './sdk-fixtures.ts';

const CONSUMER = `/consumers/${CONSUMER_ID}`;

/**
 * A data API whose first receive poll is held, ignoring its wait and abort, until the test answers
 * it; later polls are answered by the fake as usual.
 */
function heldPoll(): { readonly api: FakeDataApi; answer(...messages: WireMessage[]): void } {
  let answer: ((response: Response) => void) | undefined;
  let held = false;
  const api = new FakeDataApi((request) => {
    if (held || !request.url.includes('/receive')) return undefined;
    held = true;
    return new Promise<Response>((resolve) => {
      answer = resolve;
    });
  });
  return { api, answer: (...messages) => answer?.(jsonResponse({ messages })) };
}

/** Lets pending promise callbacks and fetches run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('Consumer.receive()', () => {
  it('long-polls, and resolves when the server delivers a message', async () => {
    const { consumer, api } = await subscribed();

    const received = consumer.receive();
    await settle();
    api.deliver(
      wireMessage(3, {
        key: 'customer-7',
        properties: { traceId: 'abc' },
        redeliveryCount: 2,
        publishTime: 1_700_000_000_123,
        eventTime: 1_600_000_000_000,
      }),
    );
    const message = await received;

    expect(api.calls().slice(1)).toEqual([
      `POST ${CONSUMER}/receive?maxMessages=100&waitMs=${MAX_RECEIVE_WAIT_MS}`,
    ]);
    expect(message.getMessageId()).toBeInstanceOf(MessageId);
    expect(message.getMessageId().toString()).toBe('1:3:-1');
    expect(message.getValue()).toBe('m3');
    expect(message.value).toBe('m3');
    expect(new TextDecoder().decode(message.getData())).toBe('m3');
    expect(message.getKey()).toBe('customer-7');
    expect(message.hasKey()).toBe(true);
    expect(message.getProperties()).toEqual({ traceId: 'abc' });
    expect(message.getProperty('traceId')).toBe('abc');
    expect(message.getProperty('toString')).toBeUndefined();
    expect(message.getRedeliveryCount()).toBe(2);
    expect(message.getPublishTime()).toBe(1_700_000_000_123);
    expect(message.getEventTime()).toBe(1_600_000_000_000);
    expect(message.getTopicName()).toBe('persistent://my-tenant/my-ns/orders');
    expect(message.deliveryHandle).toBe('h3');
  });

  it('reads absent optional fields as Pulsar does: no key, no properties, event time 0', async () => {
    const api = new FakeDataApi();
    api.deliver({ messageId: '1:0:-1', payload: '' });
    const { consumer } = await subscribed(undefined, api);

    const message = await consumer.receive();

    expect(message.getKey()).toBeUndefined();
    expect(message.hasKey()).toBe(false);
    expect(message.getProperties()).toEqual({});
    expect(message.getEventTime()).toBe(0);
    expect(message.getRedeliveryCount()).toBe(0);
    expect(message.deliveryHandle).toBeUndefined();
  });

  it('names the partition a message came from, as Pulsar', async () => {
    const api = new FakeDataApi();
    api.deliver(wireMessage(1, { messageId: '4:1:2' }));
    const { consumer } = await subscribed(undefined, api);

    const message = await consumer.receive();

    expect(message.getTopicName()).toBe('persistent://my-tenant/my-ns/orders-partition-2');
  });

  it('keeps the messages one poll brings beyond those waited for, for the next receives', async () => {
    const api = new FakeDataApi();
    api.deliver(wireMessage(0), wireMessage(1), wireMessage(2));
    const { consumer } = await subscribed((builder) => builder.receiverQueueSize(3), api);

    const values = [await consumer.receive(), await consumer.receive(), await consumer.receive()].map((m) =>
      m.getValue(),
    );

    expect(values).toEqual(['m0', 'm1', 'm2']);
    expect(api.calls().filter((call) => call.includes('/receive'))).toEqual([
      `POST ${CONSUMER}/receive?maxMessages=3&waitMs=${MAX_RECEIVE_WAIT_MS}`,
    ]);
  });

  it('serves concurrent receives in call order from one poll', async () => {
    const { consumer, api } = await subscribed((builder) => builder.receiverQueueSize(0));

    const first = consumer.receive();
    const second = consumer.receive();
    await settle();
    api.deliver(wireMessage(0), wireMessage(1));

    expect((await first).getValue()).toBe('m0');
    expect((await second).getValue()).toBe('m1');
    // Asked for as many messages as receives were waiting (receiverQueueSize 0 prefetches none).
    expect(api.calls().filter((call) => call.includes('/receive'))).toEqual([
      `POST ${CONSUMER}/receive?maxMessages=1&waitMs=${MAX_RECEIVE_WAIT_MS}`,
      `POST ${CONSUMER}/receive?maxMessages=1&waitMs=${MAX_RECEIVE_WAIT_MS}`,
    ]);
  });

  it('resolves undefined when nothing comes within the timeout, asking the server to wait no longer', async () => {
    const { consumer, api } = await subscribed();
    const startedMs = Date.now();

    const message = await consumer.receive(30);

    expect(message).toBeUndefined();
    expect(Date.now() - startedMs).toBeLessThan(1000);
    const waits = api.requests
      .filter((request) => request.url.includes('/receive'))
      .map((request) => Number(new URL(request.url).searchParams.get('waitMs')));
    expect(waits.length).toBeGreaterThanOrEqual(1);
    for (const waitMs of waits) expect(waitMs).toBeLessThanOrEqual(30);
  });

  it('resolves with a message that comes before the timeout', async () => {
    const { consumer, api } = await subscribed();

    const received = consumer.receive(5_000);
    await settle();
    api.deliver(wireMessage(9));

    expect((await received)?.getValue()).toBe('m9');
  });

  it('keeps a message that comes after the timeout for the next receive', async () => {
    const poll = heldPoll();
    const { consumer, api } = await subscribed(undefined, poll.api);

    const timedOut = await consumer.receive(10);
    poll.answer(wireMessage(5));
    await settle();
    const kept = await consumer.receive(0);

    expect(timedOut).toBeUndefined();
    expect(kept?.getValue()).toBe('m5');
    expect(api.calls().filter((call) => call.includes('/receive'))).toHaveLength(1);
  });

  it('receive(0) answers at once from a poll that asks the server not to wait', async () => {
    const api = new FakeDataApi();
    const { consumer } = await subscribed(undefined, api);

    const none = await consumer.receive(0);
    api.deliver(wireMessage(1));
    const one = await consumer.receive(0);

    expect(none).toBeUndefined();
    expect(one?.getValue()).toBe('m1');
    expect(api.calls().filter((call) => call.includes('/receive'))).toEqual([
      `POST ${CONSUMER}/receive?maxMessages=100&waitMs=0`,
      `POST ${CONSUMER}/receive?maxMessages=100&waitMs=0`,
    ]);
  });

  it('does not spin when the server answers empty before the wait it was asked for', async () => {
    const api = new FakeDataApi((request) =>
      request.url.includes('/receive') ? jsonResponse({ messages: [] }) : undefined,
    );
    const { consumer } = await subscribed(undefined, api);

    const message = await consumer.receive(50);

    expect(message).toBeUndefined();
    expect(api.calls().filter((call) => call.includes('/receive')).length).toBeLessThanOrEqual(2);
  });

  it('rejects every waiting receive when a poll fails, and polls again on the next receive', async () => {
    let fail = true;
    const api = new FakeDataApi((request) =>
      request.url.includes('/receive') && fail
        ? reasonResponse(503, 'Service Unavailable', 'busy')
        : undefined,
    );
    const { consumer } = await subscribed(undefined, api);

    const errors = await Promise.all([failure(consumer.receive()), failure(consumer.receive(5_000))]);
    fail = false;
    api.deliver(wireMessage(1));
    const message = await consumer.receive();

    expect(errors.map((error) => [error.statusCode, error.reason])).toEqual([
      [503, 'busy'],
      [503, 'busy'],
    ]);
    expect(message.getValue()).toBe('m1');
  });

  it.each([
    ['a message without messageId', { messages: [{ payload: 'x' }] }, 'messageId'],
    ['a malformed messageId', { messages: [{ messageId: '1:x', payload: 'x' }] }, 'messageId'],
    ['a non-string payload', { messages: [{ messageId: '1:0:-1', payload: 3 }] }, 'payload'],
    [
      'a non-string property',
      { messages: [{ messageId: '1:0:-1', payload: '', properties: { a: 1 } }] },
      'properties',
    ],
    ['no messages array', { message: [] }, 'messages'],
  ])('rejects an answer with %s', async (_name, answer, expected) => {
    const api = new FakeDataApi((request) =>
      request.url.includes('/receive') ? jsonResponse(answer) : undefined,
    );
    const { consumer } = await subscribed(undefined, api);

    const error = await failure(consumer.receive());

    expect(error.reason).toContain(expected);
  });

  it('refuses a negative timeout', async () => {
    const { consumer } = await subscribed();

    await expect(consumer.receive(-1)).rejects.toBeInstanceOf(AcklineClientArgumentError);
  });
});

describe('Consumer.batchReceive()', () => {
  it('resolves with what one poll brings, up to maxNumMessages', async () => {
    const api = new FakeDataApi();
    api.deliver(wireMessage(0), wireMessage(1), wireMessage(2));
    const { consumer } = await subscribed(
      (builder) => builder.batchReceivePolicy({ maxNumMessages: 2 }),
      api,
    );

    const first = await consumer.batchReceive();
    const second = await consumer.batchReceive();

    expect(first.map((m) => m.getValue())).toEqual(['m0', 'm1']);
    expect(second.map((m) => m.getValue())).toEqual(['m2']);
    const polls = api.calls().filter((call) => call.includes('/receive'));
    expect(polls).toHaveLength(1);
    // The poll waits until the policy's 100 ms deadline, measured when it starts: a slow tick
    // between the receive and the poll shortens the wait, never lengthens it.
    const waitMs = Number(/^POST .*\/receive\?maxMessages=100&waitMs=(\d+)$/.exec(polls[0] ?? '')?.[1]);
    expect(waitMs).toBeGreaterThan(50);
    expect(waitMs).toBeLessThanOrEqual(100);
  });

  it('resolves empty after its timeout', async () => {
    const { consumer } = await subscribed((builder) => builder.batchReceivePolicy({ timeoutMs: 20 }));

    expect(await consumer.batchReceive()).toEqual([]);
  });
});

describe('Consumer acknowledgements', () => {
  async function withMessages() {
    const api = new FakeDataApi();
    api.deliver(wireMessage(0), wireMessage(1, { deliveryHandle: undefined }));
    const context = await subscribed((builder) => builder.subscriptionType('Shared'), api);
    const withHandle = await context.consumer.receive();
    const withoutHandle = await context.consumer.receive();
    return { ...context, withHandle, withoutHandle };
  }

  it('acknowledges a message by its delivery handle', async () => {
    const { consumer, api, withHandle } = await withMessages();

    await consumer.acknowledge(withHandle);

    expect(api.calls().at(-1)).toBe(`POST ${CONSUMER}/ack`);
    expect(api.bodiesTo('/ack')).toEqual([{ deliveryHandles: ['h0'] }]);
  });

  it('acknowledges a message id by id', async () => {
    const { consumer, api } = await subscribed();

    await consumer.acknowledge(MessageId.parse('12:3:-1'));

    expect(api.bodiesTo('/ack')).toEqual([{ messageIds: ['12:3:-1'] }]);
  });

  it('acknowledges a message the server gave no handle by id', async () => {
    const { consumer, api, withoutHandle } = await withMessages();

    await consumer.acknowledge(withoutHandle);

    expect(api.bodiesTo('/ack')).toEqual([{ messageIds: ['1:1:-1'] }]);
  });

  it('acknowledges a mixed list in one request, and an empty list with none', async () => {
    const { consumer, api, withHandle, withoutHandle } = await withMessages();

    await consumer.acknowledge([withHandle, withoutHandle, MessageId.parse('7:0:1')]);
    await consumer.acknowledge([]);

    expect(api.bodiesTo('/ack')).toEqual([{ messageIds: ['1:1:-1', '7:0:1'], deliveryHandles: ['h0'] }]);
  });

  it('refuses what is neither a Message nor a MessageId', async () => {
    const { consumer, api } = await subscribed();

    const error = await failure(consumer.acknowledge('1:0:-1' as unknown as MessageId));

    expect(error).toBeInstanceOf(AcklineClientArgumentError);
    expect(api.requests).toHaveLength(1);
  });

  it('negatively acknowledges a message by handle and an id by id', async () => {
    const { consumer, api, withHandle } = await withMessages();

    await consumer.negativeAcknowledge(withHandle);
    await consumer.negativeAcknowledge(MessageId.parse('12:3:-1'));
    await consumer.negativeAcknowledge([withHandle, MessageId.parse('12:4:-1')]);

    expect(api.calls().filter((call) => call.endsWith('/nack'))).toHaveLength(4);
    expect(api.bodiesTo('/nack')).toEqual([
      { deliveryHandles: ['h0'] },
      { messageIds: ['12:3:-1'] },
      { deliveryHandles: ['h0'] },
      { messageIds: ['12:4:-1'] },
    ]);
  });

  it.each([
    'Exclusive',
    'Failover',
  ] as const)('acknowledges cumulatively on %s by message id', async (type) => {
    const api = new FakeDataApi();
    api.deliver(wireMessage(4));
    const { consumer } = await subscribed((builder) => builder.subscriptionType(type), api);
    const message = await consumer.receive();

    await consumer.acknowledgeCumulative(message);
    await consumer.acknowledgeCumulative(MessageId.parse('1:9:-1'));

    expect(api.bodiesTo('/ack-cumulative')).toEqual([{ messageId: '1:4:-1' }, { messageId: '1:9:-1' }]);
  });

  it.each([
    'Shared',
    'Key_Shared',
  ] as const)('refuses a cumulative acknowledgement on %s before sending, as Pulsar', async (type) => {
    const { consumer, api } = await subscribed((builder) => builder.subscriptionType(type));

    const error = await failure(consumer.acknowledgeCumulative(MessageId.parse('1:0:-1')));

    expect(error).toBeInstanceOf(AcklineClientArgumentError);
    expect(error.reason).toContain(type);
    expect(api.requests).toHaveLength(1);
  });

  it("rejects with the server's reason when it refuses an acknowledgement", async () => {
    const api = new FakeDataApi((request) =>
      request.url.endsWith('/ack-cumulative')
        ? reasonResponse(412, 'Precondition Failed', 'not allowed')
        : undefined,
    );
    const { consumer } = await subscribed(undefined, api);

    const error = await failure(consumer.acknowledgeCumulative(MessageId.parse('1:0:-1')));

    expect([error.statusCode, error.reason]).toEqual([412, 'not allowed']);
  });

  it('redelivers unacknowledged messages, dropping those kept for later receives', async () => {
    const api = new FakeDataApi();
    api.deliver(wireMessage(0), wireMessage(1));
    const { consumer } = await subscribed(undefined, api);
    await consumer.receive();

    await consumer.redeliverUnacknowledgedMessages();
    const next = await consumer.receive(0);

    expect(next).toBeUndefined();
    expect(api.calls()).toContain(`POST ${CONSUMER}/redeliver-unacknowledged`);
    expect(api.calls().filter((call) => call.includes('/receive'))).toHaveLength(2);
  });
});

describe('Consumer.close()', () => {
  it('DELETEs the consumer and rejects a waiting receive', async () => {
    const { consumer, api } = await subscribed();
    const waiting = failure(consumer.receive());
    await settle();

    await consumer.close();
    const error = await waiting;

    expect(error).toBeInstanceOf(AcklineClientClosedError);
    expect(api.calls().at(-1)).toBe(`DELETE ${CONSUMER}`);
    // The poll in flight was aborted, not left to run for its 20 s.
    const poll = api.requests.find((request) => request.url.includes('/receive'));
    expect(poll?.signal?.aborted).toBe(true);
  });

  it('refuses every call after close, and closing again sends nothing', async () => {
    const { consumer, api } = await subscribed();
    await consumer.close();

    await consumer.close();

    for (const call of [
      () => consumer.receive(),
      () => consumer.batchReceive(),
      () => consumer.acknowledge(MessageId.parse('1:0:-1')),
      () => consumer.acknowledgeCumulative(MessageId.parse('1:0:-1')),
      () => consumer.negativeAcknowledge(MessageId.parse('1:0:-1')),
      () => consumer.redeliverUnacknowledgedMessages(),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(AcklineClientClosedError);
    }
    expect(api.calls().filter((call) => call.startsWith('DELETE'))).toHaveLength(1);
  });

  it('counts a consumer the server no longer knows as closed', async () => {
    const api = new FakeDataApi((request) =>
      request.method === 'DELETE' ? reasonResponse(404, 'Not Found', 'no consumer c-1') : undefined,
    );
    const { consumer } = await subscribed(undefined, api);

    await expect(consumer.close()).resolves.toBeUndefined();
  });

  it('retries the DELETE on the next close when it failed', async () => {
    let fail = true;
    const api = new FakeDataApi((request) =>
      request.method === 'DELETE' && fail ? reasonResponse(503, 'Service Unavailable', 'busy') : undefined,
    );
    const { consumer } = await subscribed(undefined, api);

    const error = await failure(consumer.close());
    fail = false;
    await consumer.close();

    expect(error.statusCode).toBe(503);
    expect(api.calls().filter((call) => call.startsWith('DELETE'))).toHaveLength(2);
  });

  it('drops what a poll answers after close, and polls no more', async () => {
    const poll = heldPoll();
    const { consumer, api } = await subscribed(undefined, poll.api);
    const waiting = failure(consumer.receive());
    await settle();

    await consumer.close();
    poll.answer(wireMessage(1));
    await settle();

    expect(await waiting).toBeInstanceOf(AcklineClientClosedError);
    expect(api.calls().slice(1)).toEqual([
      `POST ${CONSUMER}/receive?maxMessages=100&waitMs=${MAX_RECEIVE_WAIT_MS}`,
      `DELETE ${CONSUMER}`,
    ]);
  });
});
