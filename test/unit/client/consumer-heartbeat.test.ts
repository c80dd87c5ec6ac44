import { describe, expect, it } from 'vitest';
import { SYSTEM_CLIENT_CLOCK } from '../../../shared/client/client-clock.ts';
import { AcklineClientClosedError, AcklineClientError } from '../../../shared/client/errors.ts';
import { MessageId } from '../../../shared/domain/message-id.ts';
import { CONSUMER_ID, FakeDataApi, wireMessage } from './fake-data-api.ts';
import { reasonResponse } from './fake-fetch.ts';
import { ManualClientClock } from './manual-client-clock.ts';
import { clientOf, failure, TOPIC } from './sdk-fixtures.ts';

const HEARTBEAT = `POST /consumers/${CONSUMER_ID}/heartbeat`;

/** A Failover consumer on a manual clock, with `leaseMs` when given; `api` answers its calls. */
async function leased(options: { readonly leaseMs?: number; readonly api?: FakeDataApi } = {}) {
  const clock = new ManualClientClock();
  const api = options.api ?? new FakeDataApi();
  const builder = clientOf(api, clock)
    .newConsumer()
    .topic(TOPIC)
    .subscriptionName('billing')
    .subscriptionType('Failover');
  const consumer = await (options.leaseMs === undefined
    ? builder
    : builder.leaseMs(options.leaseMs)
  ).subscribe();
  const heartbeats = () => api.calls().filter((call) => call === HEARTBEAT).length;
  return { clock, api, consumer, heartbeats };
}

/** A data API whose heartbeats answer `answer()` (others as the fake does). */
function heartbeatAnswering(answer: () => Response | Promise<Response>): FakeDataApi {
  return new FakeDataApi((request) => (request.url.endsWith('/heartbeat') ? answer() : undefined));
}

describe('Consumer heartbeat', () => {
  it('beats when the consumer made no call for a third of its lease, then every third', async () => {
    const { clock, heartbeats } = await leased({ leaseMs: 30_000 });

    await clock.advance(9_999);
    const beforeAThird = heartbeats();
    await clock.advance(1);
    const atAThird = heartbeats();
    await clock.advance(30_000);

    expect([beforeAThird, atAThird, heartbeats()]).toEqual([0, 1, 4]);
  });

  it('beats at a third of the server default, 60 s, when no lease is set', async () => {
    const { clock, heartbeats } = await leased();

    await clock.advance(19_999);
    const before = heartbeats();
    await clock.advance(1);

    expect([before, heartbeats()]).toEqual([0, 1]);
  });

  it('is put off by any other call of the consumer (the server renewed the lease then)', async () => {
    const { clock, consumer, heartbeats } = await leased({ leaseMs: 30_000 });

    await clock.advance(5_000);
    await consumer.acknowledgeCumulative(MessageId.parse('1:0:-1'));
    await clock.advance(5_000);
    const atTheFirstThird = heartbeats();
    await clock.advance(4_999);
    const justBefore = heartbeats();
    await clock.advance(1);

    expect([atTheFirstThird, justBefore, heartbeats()]).toEqual([0, 0, 1]);
  });

  it('keeps beating while a receive long-polls longer than a third of the lease', async () => {
    const { clock, consumer, heartbeats } = await leased({ leaseMs: 30_000 });
    const waiting = consumer.receive();

    await clock.advance(10_000);
    const during = heartbeats();
    await consumer.close();

    expect(during).toBe(1);
    await expect(waiting).rejects.toBeInstanceOf(AcklineClientClosedError);
  });

  it('stops on close: no heartbeat is sent or scheduled after it', async () => {
    const { clock, consumer, heartbeats, api } = await leased({ leaseMs: 30_000 });

    await consumer.close();
    await clock.advance(3_600_000);

    expect(heartbeats()).toBe(0);
    expect(clock.scheduled).toBe(0);
    expect(api.calls().at(-1)).toBe(`DELETE /consumers/${CONSUMER_ID}`);
  });

  it.each([
    [404, 'Not Found', 'is gone'],
    [409, 'Conflict', 'was replaced as the active consumer'],
  ])('a heartbeat answered %i rejects the waiting receive and every later call, and stops beating', async (status, statusText, says) => {
    const api = heartbeatAnswering(() => reasonResponse(status, statusText, 'no longer yours'));
    const { clock, consumer, heartbeats } = await leased({ leaseMs: 30_000, api });
    const waiting = failure(consumer.receive());

    await clock.advance(10_000);
    const waitingError = await waiting;
    const nextError = await failure(consumer.receive());
    const ackError = await failure(consumer.acknowledgeCumulative(MessageId.parse('1:0:-1')));
    await clock.advance(60_000);

    for (const error of [waitingError, nextError, ackError]) {
      expect(error).toBeInstanceOf(AcklineClientClosedError);
      expect(error.reason).toContain(says);
      expect(error.reason).toContain('subscribe again');
      expect(error.cause).toBeInstanceOf(AcklineClientError);
      expect((error.cause as AcklineClientError).statusCode).toBe(status);
    }
    expect(heartbeats()).toBe(1);
    expect(clock.scheduled).toBe(0);
    expect(api.calls().filter((call) => call.includes('/receive') || call.includes('/ack'))).toHaveLength(1);
    // close() still tells the server and resolves.
    await expect(consumer.close()).resolves.toBeUndefined();
    await expect(consumer.receive(0)).rejects.toThrow(/is closed/);
  });

  it.each([
    [404, 'Not Found', 'is gone'],
    [409, 'Conflict', 'was replaced as the active consumer'],
  ])('a receive answered %i (consumer dropped or replaced) rejects it and every later call as closed: a retry loop does not spin', async (status, statusText, says) => {
    const api = new FakeDataApi((request) =>
      request.url.includes('/receive') ? reasonResponse(status, statusText, 'no longer yours') : undefined,
    );
    const { consumer } = await leased({ leaseMs: 30_000, api });

    const receiveError = await failure(consumer.receive());
    const nextError = await failure(consumer.receive());

    for (const error of [receiveError, nextError]) {
      expect(error).toBeInstanceOf(AcklineClientClosedError);
      expect(error.reason).toContain(says);
      expect((error.cause as AcklineClientError).statusCode).toBe(status);
    }
    expect(api.calls().filter((call) => call.includes('/receive'))).toHaveLength(1);
    await expect(consumer.close()).resolves.toBeUndefined();
  });

  it.each([
    ['a 503', () => reasonResponse(503, 'Service Unavailable', 'busy')],
    ['a network failure', () => Promise.reject(new TypeError('fetch failed'))],
  ])('a heartbeat that fails with %s is tried again a third of the lease later', async (_name, answer) => {
    let failing = true;
    const api = heartbeatAnswering(() => (failing ? answer() : new Response(null, { status: 204 })));
    const { clock, consumer, heartbeats } = await leased({ leaseMs: 30_000, api });

    await clock.advance(10_000);
    failing = false;
    await clock.advance(10_000);
    api.deliver(wireMessage(1));
    const message = await consumer.receive();

    expect(heartbeats()).toBe(2);
    expect(message.getValue()).toBe('m1');
    await consumer.close();
  });
});

describe('SYSTEM_CLIENT_CLOCK', () => {
  it('schedules timers that do not keep the process alive', () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();

    const task = SYSTEM_CLIENT_CLOCK.schedule(() => undefined, 60_000);
    const during = timers();
    task.cancel();

    expect(during).toBe(before);
  });
});
