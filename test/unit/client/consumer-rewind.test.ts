import { describe, expect, it } from 'vitest';
import { AcklineClient } from '../../../shared/client/ackline-client.ts';
import type { SubscriptionType } from '../../../shared/client/admin-types.ts';
import { MessageId } from '../../../shared/domain/message-id.ts';
import { CONSUMER_ID, FakeDataApi, wireMessage } from './fake-data-api.ts';
import { reasonResponse } from './fake-fetch.ts';
import { settle } from './manual-client-clock.ts';
import { BASE, failure, subscribed, TOPIC } from './sdk-fixtures.ts';

const CONSUMER = `/consumers/${CONSUMER_ID}`;
const REWIND = `POST ${CONSUMER}/redeliver-unacknowledged`;

/** A data API whose first receive poll fails with `fail()`; later polls are answered as usual. */
function firstPollFailing(fail: (request: { signal?: AbortSignal }) => Promise<Response> | Response) {
  let failed = false;
  return new FakeDataApi((request) => {
    if (failed || !request.url.includes('/receive')) return undefined;
    failed = true;
    return fail(request);
  });
}

const unavailable = () => reasonResponse(503, 'Service Unavailable', 'busy');

/** The calls after subscribe, without their query strings. */
function callsOf(api: FakeDataApi): string[] {
  return api
    .calls()
    .slice(1)
    .map((call) => call.replace(/\?.*$/, ''));
}

describe('Consumer: rewind after a failed receive (Exclusive, Failover)', () => {
  it.each<[string, Parameters<typeof firstPollFailing>[0], boolean]>([
    ['a 503', unavailable, true],
    ['a 504 from the gateway', () => reasonResponse(504, 'Gateway Timeout', 'timed out'), true],
    ['a network error', () => Promise.reject(new TypeError('fetch failed')), true],
    ['an answer that is not JSON', () => new Response('<html>', { status: 200 }), true],
    // A 4xx was answered, so nothing was lost (404 and 409 close the consumer: consumer-heartbeat.test.ts).
    ['a 403', () => reasonResponse(403, 'Forbidden', 'not granted'), false],
    ['a 400', () => reasonResponse(400, 'Bad Request', 'bad'), false],
  ])('after %s, rewinds before the next receive: %s', async (_name, fail, rewinds) => {
    const api = firstPollFailing(fail);
    const { consumer } = await subscribed((builder) => builder.subscriptionType('Exclusive'), api);

    await failure(consumer.receive());
    api.deliver(wireMessage(1));
    const message = await consumer.receive();

    expect(message.getValue()).toBe('m1');
    expect(callsOf(api)).toEqual(
      rewinds
        ? [`POST ${CONSUMER}/receive`, REWIND, `POST ${CONSUMER}/receive`]
        : [`POST ${CONSUMER}/receive`, `POST ${CONSUMER}/receive`],
    );
  });

  it('after a receive that timed out, rewinds before the next receive', async () => {
    // The poll is held until the client's 5 ms request timeout aborts it.
    const api = firstPollFailing(
      (request) =>
        new Promise<Response>((_resolve, reject) =>
          request.signal?.addEventListener('abort', () => reject(request.signal?.reason)),
        ),
    );
    const client = AcklineClient.builder().serviceUrl(BASE).fetch(api.fetch).requestTimeoutMs(5).build();
    const consumer = await client.newConsumer().topic(TOPIC).subscriptionName('billing').subscribe();

    // receive(0) resolves empty at once; its poll times out a few ms later, unseen by the caller.
    const none = await consumer.receive(0);
    const poll = api.requests.find((request) => request.url.includes('/receive'));
    await new Promise((resolve) =>
      poll?.signal?.aborted ? resolve(undefined) : poll?.signal?.addEventListener('abort', resolve),
    );
    await settle();
    api.deliver(wireMessage(1));
    const message = await consumer.receive(0);

    expect(none).toBeUndefined();
    expect(message?.getValue()).toBe('m1');
    expect(callsOf(api)).toEqual([`POST ${CONSUMER}/receive`, REWIND, `POST ${CONSUMER}/receive`]);
  });

  it('rewinds before the next cumulative acknowledgement, once', async () => {
    const api = firstPollFailing(unavailable);
    const { consumer } = await subscribed((builder) => builder.subscriptionType('Failover'), api);

    await failure(consumer.receive());
    await consumer.acknowledgeCumulative(MessageId.parse('1:4:-1'));
    api.deliver(wireMessage(5));
    await consumer.receive();
    await consumer.acknowledgeCumulative(MessageId.parse('1:5:-1'));

    expect(callsOf(api)).toEqual([
      `POST ${CONSUMER}/receive`,
      REWIND,
      `POST ${CONSUMER}/ack-cumulative`,
      `POST ${CONSUMER}/receive`,
      `POST ${CONSUMER}/ack-cumulative`,
    ]);
  });

  it('a receive and a cumulative acknowledgement waiting on the rewind share one request', async () => {
    const api = firstPollFailing(unavailable);
    const { consumer } = await subscribed((builder) => builder.subscriptionType('Failover'), api);
    await failure(consumer.receive());
    api.deliver(wireMessage(1));

    await Promise.all([consumer.acknowledgeCumulative(MessageId.parse('1:0:-1')), consumer.receive()]);

    expect(callsOf(api).filter((call) => call === REWIND)).toHaveLength(1);
  });

  it('when the rewind fails, the acknowledgement rejects unsent and the next one rewinds again', async () => {
    let rewindFails = true;
    const api = new FakeDataApi((request) => {
      if (request.url.includes('/receive') && rewindFails) return unavailable();
      if (request.url.endsWith('/redeliver-unacknowledged') && rewindFails) {
        rewindFails = false;
        return unavailable();
      }
      return undefined;
    });
    const { consumer } = await subscribed((builder) => builder.subscriptionType('Exclusive'), api);
    await failure(consumer.receive());

    const error = await failure(consumer.acknowledgeCumulative(MessageId.parse('1:0:-1')));
    await consumer.acknowledgeCumulative(MessageId.parse('1:0:-1'));

    expect(error.statusCode).toBe(503);
    expect(callsOf(api)).toEqual([
      `POST ${CONSUMER}/receive`,
      REWIND,
      REWIND,
      `POST ${CONSUMER}/ack-cumulative`,
    ]);
  });

  it("counts the application's own redeliverUnacknowledgedMessages() as the rewind", async () => {
    const api = firstPollFailing(unavailable);
    const { consumer } = await subscribed((builder) => builder.subscriptionType('Exclusive'), api);
    await failure(consumer.receive());

    await consumer.redeliverUnacknowledgedMessages();
    await consumer.acknowledgeCumulative(MessageId.parse('1:0:-1'));

    expect(callsOf(api)).toEqual([`POST ${CONSUMER}/receive`, REWIND, `POST ${CONSUMER}/ack-cumulative`]);
  });

  it.each<SubscriptionType>([
    'Shared',
    'Key_Shared',
  ])('does not rewind on %s (no cumulative ack; what the lost answer held comes back by its timeouts)', async (type) => {
    const api = firstPollFailing(unavailable);
    const { consumer } = await subscribed((builder) => builder.subscriptionType(type), api);

    await failure(consumer.receive());
    api.deliver(wireMessage(1));
    await consumer.receive();

    expect(callsOf(api)).toEqual([`POST ${CONSUMER}/receive`, `POST ${CONSUMER}/receive`]);
  });
});
