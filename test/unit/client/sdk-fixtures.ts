import { expect } from 'vitest';
import { AcklineClient } from '../../../shared/client/ackline-client.ts';
import type { ClientClock } from '../../../shared/client/client-clock.ts';
import type { Consumer } from '../../../shared/client/consumer.ts';
import type { ConsumerBuilder } from '../../../shared/client/consumer-builder.ts';
import { AcklineClientError } from '../../../shared/client/errors.ts';
import { FakeDataApi } from './fake-data-api.ts';

export const BASE = 'http://ackline.test:8080';
export const TOPIC = 'persistent://my-tenant/my-ns/orders';
export const SUBSCRIBE_PATH = '/consumers/persistent/my-tenant/my-ns/orders/subscription/billing';
export const PRODUCE_PATH = '/topics/persistent/my-tenant/my-ns/orders';

/** A client of `api` at {@link BASE}, with token `tok`, and `clock` when given. */
export function clientOf(api: FakeDataApi, clock?: ClientClock): AcklineClient {
  const builder = AcklineClient.builder().serviceUrl(BASE).authToken('tok').fetch(api.fetch);
  return (clock ? builder.clock(clock) : builder).build();
}

/** A consumer of {@link TOPIC}, subscription `billing`, configured by `configure`. */
export async function subscribed(
  configure: (builder: ConsumerBuilder) => ConsumerBuilder = (builder) => builder,
  api = new FakeDataApi(),
): Promise<{ readonly client: AcklineClient; readonly consumer: Consumer; readonly api: FakeDataApi }> {
  const client = clientOf(api);
  const consumer = await configure(client.newConsumer().topic(TOPIC).subscriptionName('billing')).subscribe();
  return { client, consumer, api };
}

/** The error `promise` rejects with, checked to be an {@link AcklineClientError}. */
export async function failure(promise: Promise<unknown>): Promise<AcklineClientError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AcklineClientError);
  return error as AcklineClientError;
}
