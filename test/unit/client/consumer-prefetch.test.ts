import { describe, expect, it } from 'vitest';
import { MAX_RECEIVE_WAIT_MS } from '../../../shared/client/consumer.ts';
import type { Message } from '../../../shared/client/message.ts';
import { CONSUMER_ID, FakeDataApi, wireMessage } from './fake-data-api.ts';
import { subscribed } from './sdk-fixtures.ts';

const CONSUMER = `/consumers/${CONSUMER_ID}`;
const receives = (api: FakeDataApi) => api.calls().filter((call) => call.includes('/receive'));

describe('Consumer prefetch (receiverQueueSize, receiverQueueMaxBytes)', () => {
  it('asks for up to 100 messages a poll by default (receiverQueueSize 1,000, as Pulsar)', async () => {
    const api = new FakeDataApi();
    api.deliver(wireMessage(0));
    const { consumer } = await subscribed(undefined, api);

    await consumer.receive();

    expect(receives(api)).toEqual([`POST ${CONSUMER}/receive?maxMessages=100&waitMs=${MAX_RECEIVE_WAIT_MS}`]);
  });

  it('sizes a poll by receiverQueueMaxBytes and the payloads of the last poll', async () => {
    const api = new FakeDataApi();
    // One poll brings three messages of 1,000 bytes.
    api.deliver(...[0, 1, 2].map((n) => wireMessage(n, { payload: 'x'.repeat(1_000) })));
    const { consumer } = await subscribed((builder) => builder.receiverQueueMaxBytes(2_500), api);
    await consumer.receive();
    await consumer.receive();
    await consumer.receive();
    api.deliver(wireMessage(3));
    await consumer.receive();

    // 2,500 bytes of room at 1,000 bytes a message: the second poll asks for 2.
    expect(receives(api)).toEqual([
      `POST ${CONSUMER}/receive?maxMessages=100&waitMs=${MAX_RECEIVE_WAIT_MS}`,
      `POST ${CONSUMER}/receive?maxMessages=2&waitMs=${MAX_RECEIVE_WAIT_MS}`,
    ]);
  });

  it('prefetches no more than fill the queue: the room left, not 100', async () => {
    const api = new FakeDataApi();
    api.deliver(wireMessage(0), wireMessage(1), wireMessage(2));
    const { consumer } = await subscribed((builder) => builder.receiverQueueSize(5), api);
    await consumer.receive();
    const kept: Message[] = [];
    api.deliver(wireMessage(3));
    // Two kept; a receive takes one without polling.
    kept.push(await consumer.receive());

    expect(kept.map((m) => m.getValue())).toEqual(['m1']);
    expect(receives(api)).toEqual([`POST ${CONSUMER}/receive?maxMessages=5&waitMs=${MAX_RECEIVE_WAIT_MS}`]);
  });
});
