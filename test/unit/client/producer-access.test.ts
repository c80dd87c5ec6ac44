// The SDK producer's access modes (issue 23) against a fake data API and a manual clock: the
// registration, the idle heartbeat, fencing, WaitForExclusive's retries and the release on close.
import { describe, expect, it } from 'vitest';
import {
  AcklineClientArgumentError,
  AcklineProducerBusyError,
  AcklineProducerFencedError,
} from '../../../shared/client/errors.ts';
import type { ProducerAccessMode } from '../../../shared/client/producer-access.ts';
import { FakeDataApi } from './fake-data-api.ts';
import type { RecordedRequest } from './fake-fetch.ts';
import { jsonResponse, reasonResponse } from './fake-fetch.ts';
import { ManualClientClock } from './manual-client-clock.ts';
import { clientOf, PRODUCE_PATH, TOPIC } from './sdk-fixtures.ts';

const PRODUCERS_PATH = `${PRODUCE_PATH}/producers`;
const LEASE_MS = 30_000;

/** A data API whose registrations answer `register` (default: registration `r-1`), and 409 on the paths in `refused`. */
function apiWith(
  options: { register?: () => Response; refused?: (request: RecordedRequest) => boolean } = {},
) {
  return new FakeDataApi((request) => {
    const path = new URL(request.url).pathname;
    if (options.refused?.(request)) return reasonResponse(409, 'Conflict', 'taken');
    if (path.endsWith('/lastSequenceId')) return jsonResponse({ lastSequenceId: -1, partitions: {} });
    if (request.method === 'POST' && path === PRODUCERS_PATH) {
      return (
        options.register?.() ??
        jsonResponse({ accessMode: 'Exclusive', producerId: 'r-1', leaseMs: LEASE_MS })
      );
    }
    return undefined;
  });
}

async function exclusiveProducer(
  api: FakeDataApi,
  clock: ManualClientClock,
  mode: ProducerAccessMode = 'Exclusive',
) {
  return clientOf(api, clock).newProducer().topic(TOPIC).accessMode(mode).create();
}

describe('Producer access modes (SDK)', () => {
  it('registers with its mode and name, sends its registration id with each publish, and releases it on close', async () => {
    const api = apiWith();
    const producer = await clientOf(api, new ManualClientClock())
      .newProducer()
      .topic(TOPIC)
      .producerName('leader')
      .accessMode('Exclusive')
      .create();

    await producer.send('x');
    await producer.close();

    expect(api.bodiesTo(PRODUCERS_PATH)).toEqual([{ accessMode: 'Exclusive', producerName: 'leader' }]);
    expect((api.bodiesTo(PRODUCE_PATH)[0] as { producerId: string }).producerId).toBe('r-1');
    expect(api.calls()).toContain(`DELETE ${PRODUCERS_PATH}/r-1`);
    expect(producer.getAccessMode()).toBe('Exclusive');
  });

  it('without an access mode sends no registration (the data API stays stateless)', async () => {
    const api = apiWith();
    const producer = await clientOf(api).newProducer().topic(TOPIC).create();
    await producer.send('x');
    await producer.close();

    expect(api.calls()).toEqual([`POST ${PRODUCE_PATH}`]);
    expect(producer.getAccessMode()).toBe('Shared');
  });

  it('heartbeats every third of the lease while idle, and not after a publish renewed it', async () => {
    const clock = new ManualClientClock();
    const api = apiWith();
    const producer = await exclusiveProducer(api, clock);
    const beats = () => api.calls().filter((call) => call.endsWith('/r-1/heartbeat')).length;

    await clock.advance(LEASE_MS / 3);
    expect(beats()).toBe(1);
    await clock.advance(LEASE_MS / 6);
    await producer.send('x');
    await clock.advance(LEASE_MS / 6);
    expect(beats()).toBe(1);
    await clock.advance(LEASE_MS / 3);
    expect(beats()).toBe(2);
    await producer.close();
    await clock.advance(LEASE_MS);
    expect(beats()).toBe(2);
  });

  it('a publish answered 409 fences it: that send and every later one reject AcklineProducerFencedError, without a request', async () => {
    const clock = new ManualClientClock();
    const api = apiWith({
      refused: (request) => request.method === 'POST' && new URL(request.url).pathname === PRODUCE_PATH,
    });
    const producer = await exclusiveProducer(api, clock);

    await expect(producer.send('x')).rejects.toBeInstanceOf(AcklineProducerFencedError);
    const requests = api.requests.length;
    await expect(producer.send('y')).rejects.toBeInstanceOf(AcklineProducerFencedError);
    expect(api.requests).toHaveLength(requests);
    expect(producer.isConnected()).toBe(false);
    await producer.close();
    expect(api.calls().some((call) => call.startsWith('DELETE'))).toBe(false);
  });

  it('a heartbeat answered 409 fences it too', async () => {
    const clock = new ManualClientClock();
    const api = apiWith({ refused: (request) => new URL(request.url).pathname.endsWith('/heartbeat') });
    const producer = await exclusiveProducer(api, clock);

    await clock.advance(LEASE_MS / 3);

    await expect(producer.send('x')).rejects.toBeInstanceOf(AcklineProducerFencedError);
  });

  it.each([
    ['Exclusive', 'AcklineProducerFencedError', AcklineProducerFencedError],
    ['ExclusiveWithFencing', 'AcklineProducerFencedError', AcklineProducerFencedError],
    ['Shared', 'AcklineProducerBusyError', AcklineProducerBusyError],
  ] as const)('creating a %s producer the server refuses (409) rejects %s', async (mode, _, errorClass) => {
    const api = apiWith({ refused: (request) => new URL(request.url).pathname === PRODUCERS_PATH });

    await expect(exclusiveProducer(api, new ManualClientClock(), mode)).rejects.toBeInstanceOf(errorClass);
  });

  it('WaitForExclusive asks again until the topic is free', async () => {
    const clock = new ManualClientClock();
    let refusals = 3;
    const api = apiWith({
      refused: (request) => new URL(request.url).pathname === PRODUCERS_PATH && refusals-- > 0,
    });

    const creating = exclusiveProducer(api, clock, 'WaitForExclusive');
    for (let i = 0; i < 3; i++) await clock.advance(1_000);
    const producer = await creating;

    expect(api.calls().filter((call) => call === `POST ${PRODUCERS_PATH}`)).toHaveLength(4);
    await producer.close();
  });

  it('refuses an unknown access mode before any request', async () => {
    const api = apiWith();
    await expect(
      exclusiveProducer(api, new ManualClientClock(), 'Solo' as ProducerAccessMode),
    ).rejects.toBeInstanceOf(AcklineClientArgumentError);
    expect(api.requests).toHaveLength(0);
  });
});
