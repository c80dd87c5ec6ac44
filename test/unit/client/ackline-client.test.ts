import { describe, expect, it } from 'vitest';
import { AcklineClient } from '../../../shared/client/ackline-client.ts';
import {
  AcklineAdminError,
  AcklineClientArgumentError,
  AcklineClientClosedError,
  AcklineClientConnectionError,
  AcklineClientError,
} from '../../../shared/client/errors.ts';
import type { FetchFunction } from '../../../shared/client/http-transport.ts';
import * as root from '../../../shared/index.ts';
import { CONSUMER_ID, FakeDataApi } from './fake-data-api.ts';
import { BASE, clientOf, failure, SUBSCRIBE_PATH, TOPIC } from './sdk-fixtures.ts';

describe('AcklineClient.builder()', () => {
  it.each(['', 'ftp://x', 'not a url'])('refuses service URL %j', (url) => {
    expect(() => AcklineClient.builder().serviceUrl(url).build()).toThrow(AcklineClientArgumentError);
  });

  it.each([0, -1, 1.5])('refuses request timeout %d', (timeoutMs) => {
    expect(() => AcklineClient.builder().serviceUrl(BASE).requestTimeoutMs(timeoutMs).build()).toThrow(
      AcklineClientArgumentError,
    );
  });

  it('keeps a base path prefix, and sends no token when none is set', async () => {
    const api = new FakeDataApi();
    const client = AcklineClient.builder().serviceUrl('https://api.test/prod/').fetch(api.fetch).build();

    await client.newConsumer().topic(TOPIC).subscriptionName('billing').subscribe();

    expect(api.requests[0]!.url).toBe(`https://api.test/prod${SUBSCRIBE_PATH}`);
    expect(api.requests[0]!.headers.authorization).toBeUndefined();
  });
});

describe('AcklineClient.admin()', () => {
  it("is the admin client of the same service, token and fetch, with Pulsar's positional acknowledgeMessage", async () => {
    const api = new FakeDataApi();
    const client = clientOf(api);

    await client.admin().topics().acknowledgeMessage(TOPIC, '18446744073709551615', 3, ['billing', 'audit']);

    expect(client.admin()).toBe(client.admin());
    expect(api.requests[0]).toMatchObject({
      method: 'POST',
      url: `${BASE}/admin/v2/persistent/my-tenant/my-ns/orders/acknowledgeMessage?ledgerId=18446744073709551615&entryId=3&subscriptionNames=billing&subscriptionNames=audit`,
    });
    expect(api.requests[0]!.headers.authorization).toBe('Bearer tok');
  });
});

describe('AcklineClient.close()', () => {
  it('closes its consumers and producers, then refuses new ones', async () => {
    const api = new FakeDataApi();
    const client = clientOf(api);
    await client.newConsumer().topic(TOPIC).subscriptionName('billing').subscribe();
    const producer = await client.newProducer().topic(TOPIC).batchingMaxPublishDelay(60_000).create();
    const sent = producer.sendAsync('last words');

    await client.close();

    expect(String(await sent)).toBe('1:0:-1');
    expect(api.calls()).toEqual([
      `POST ${SUBSCRIBE_PATH}`,
      'POST /topics/persistent/my-tenant/my-ns/orders',
      `DELETE /consumers/${CONSUMER_ID}`,
    ]);
    await expect(client.newProducer().topic(TOPIC).create()).rejects.toBeInstanceOf(AcklineClientClosedError);
    await expect(client.newConsumer().topic(TOPIC).subscriptionName('s').subscribe()).rejects.toBeInstanceOf(
      AcklineClientClosedError,
    );
  });

  it('does not close again what was closed before', async () => {
    const api = new FakeDataApi();
    const client = clientOf(api);
    const consumer = await client.newConsumer().topic(TOPIC).subscriptionName('billing').subscribe();
    await consumer.close();

    await client.close();

    expect(api.calls().filter((call) => call.startsWith('DELETE'))).toHaveLength(1);
  });
});

describe('AcklineClient errors', () => {
  it('turns a network failure into a connection error naming the URL', async () => {
    const refused: FetchFunction = async () => {
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:8080') });
    };
    const client = AcklineClient.builder().serviceUrl(BASE).fetch(refused).build();
    const producer = await client.newProducer().topic(TOPIC).create();

    const error = await failure(producer.send('x'));

    expect(error).toBeInstanceOf(AcklineClientConnectionError);
    expect((error as AcklineClientConnectionError).url).toBe(
      `${BASE}/topics/persistent/my-tenant/my-ns/orders`,
    );
    expect(error.message).toBe(
      `Cannot reach the ackline data API at ${BASE}/topics/persistent/my-tenant/my-ns/orders: connect ECONNREFUSED 127.0.0.1:8080`,
    );
  });

  it('has one root: admin errors are client errors too', () => {
    const error = new AcklineAdminError(404, 'no such topic', { statusText: 'Not Found' });

    expect(error).toBeInstanceOf(AcklineClientError);
    expect(error.name).toBe('AcklineAdminError');
    expect(error.message).toBe('404 Not Found: no such topic');
  });
});

describe('the package root', () => {
  it('exports the SDK, the admin client and the backoff classes', () => {
    expect(Object.keys(root)).toEqual(
      expect.arrayContaining([
        'AcklineClient',
        'AcklineAdmin',
        'MultiplierRedeliveryBackoff',
        'FixedRedeliveryBackoff',
        'MessageId',
        'Message',
        'AcklineClientError',
      ]),
    );
  });
});
