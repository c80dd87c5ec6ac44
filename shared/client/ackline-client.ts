import { AcklineAdmin } from './admin-client.ts';
import { type ClientClock, SYSTEM_CLIENT_CLOCK } from './client-clock.ts';
import { type Closable, ConsumerBuilder } from './consumer-builder.ts';
import { DataHttp } from './data-http.ts';
import { AcklineClientArgumentError, AcklineClientClosedError } from './errors.ts';
import { type FetchFunction, ServiceBuilder } from './http-transport.ts';
import type { Producer } from './producer.ts';
import { ProducerBuilder } from './producer-builder.ts';
import { ReaderBuilder } from './reader.ts';

/** Pulsar's default operation timeout. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Settings of an {@link AcklineClient}, as its builder checked them. */
interface ClientSettings {
  readonly serviceUrl: string;
  readonly authToken: string | undefined;
  readonly fetch: FetchFunction;
  readonly requestTimeoutMs: number;
  readonly clock: ClientClock;
}

/**
 * The ackline client, as Pulsar's `PulsarClient`: makes producers and consumers that speak the data
 * API over `fetch`, and hands out the admin client for the same service. Holds no connections;
 * build one per service and share it.
 *
 * @example
 * const client = AcklineClient.builder().serviceUrl('http://127.0.0.1:8080').authToken(token).build();
 * const producer = await client.newProducer().topic('my-tenant/my-ns/orders').create();
 * await producer.send('order 1');
 * await client.close();
 */
export class AcklineClient {
  private readonly http: DataHttp;
  private adminClient: AcklineAdmin | undefined;
  private readonly producers = new Set<Producer>();
  private readonly consumers = new Set<Closable>();
  private closed = false;

  /** Use {@link AcklineClient.builder}. */
  constructor(private readonly settings: ClientSettings) {
    this.http = new DataHttp({
      serviceUrl: settings.serviceUrl,
      authToken: settings.authToken,
      fetch: settings.fetch,
      requestTimeoutMs: settings.requestTimeoutMs,
    });
  }

  /**
   * Starts configuring a client.
   * @example const client = AcklineClient.builder().serviceUrl('https://abc.execute-api.eu-west-1.amazonaws.com/prod').build();
   */
  static builder(): AcklineClientBuilder {
    return new AcklineClientBuilder();
  }

  /**
   * Starts configuring a producer.
   * @example const producer = await client.newProducer().topic('my-tenant/my-ns/orders').create();
   */
  newProducer(): ProducerBuilder {
    return new ProducerBuilder({
      http: this.http,
      clock: this.settings.clock,
      checkOpen: () => this.checkOpen(),
      register: (producer) => this.producers.add(producer),
      unregister: (producer) => this.producers.delete(producer),
    });
  }

  /**
   * Starts configuring a consumer.
   * @example
   * const consumer = await client.newConsumer().topic('my-tenant/my-ns/orders').subscriptionName('billing')
   *   .subscriptionType('Shared').subscribe();
   */
  newConsumer(): ConsumerBuilder {
    return new ConsumerBuilder({
      http: this.http,
      requestTimeoutMs: this.settings.requestTimeoutMs,
      clock: this.settings.clock,
      checkOpen: () => this.checkOpen(),
      register: (consumer) => this.consumers.add(consumer),
      unregister: (consumer) => this.consumers.delete(consumer),
    });
  }

  /**
   * Starts configuring a reader (Pulsar's `newReader()`).
   * @example const reader = await client.newReader().topic('my-tenant/my-ns/orders').startMessageId('earliest').create();
   */
  newReader(): ReaderBuilder {
    return new ReaderBuilder({ http: this.http, newConsumer: () => this.newConsumer() });
  }

  /**
   * The admin client of the same service, URL, token and fetch (built once).
   * @example await client.admin().topics().acknowledgeMessage('my-tenant/my-ns/orders', 12, 3, ['billing']);
   */
  admin(): AcklineAdmin {
    this.adminClient ??= AcklineAdmin.builder()
      .serviceHttpUrl(this.settings.serviceUrl)
      .authToken(this.settings.authToken)
      .fetch(this.settings.fetch)
      .requestTimeoutMs(this.settings.requestTimeoutMs)
      .build();
    return this.adminClient;
  }

  /**
   * Closes every producer (sending what they batched) and consumer made by this client; new ones are
   * refused with {@link AcklineClientClosedError}. Rejects with the first failure, after trying all.
   * @example process.on('SIGTERM', () => void client.close());
   */
  async close(): Promise<void> {
    this.closed = true;
    const results = await Promise.allSettled([
      ...[...this.producers].map((producer) => producer.close()),
      ...[...this.consumers].map((consumer) => consumer.close()),
    ]);
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  }

  private checkOpen(): void {
    if (this.closed) throw new AcklineClientClosedError('The ackline client is closed');
  }
}

/**
 * Configures an {@link AcklineClient}; only the service URL is required.
 *
 * @example
 * const client = AcklineClient.builder()
 *   .serviceUrl('http://127.0.0.1:8080')
 *   .authToken(process.env.ACKLINE_AUTH_TOKEN)
 *   .requestTimeoutMs(10_000)
 *   .build();
 */
export class AcklineClientBuilder extends ServiceBuilder {
  private clientClock: ClientClock = SYSTEM_CLIENT_CLOCK;

  constructor() {
    super(DEFAULT_REQUEST_TIMEOUT_MS);
  }

  /**
   * The clock of the client's background work, as Pulsar's `ClientBuilder.clock(...)`: consumers'
   * heartbeats are scheduled on it. The default is the system's, whose timers never keep the
   * process alive; tests inject a clock they move by hand.
   * @example AcklineClient.builder().serviceUrl(url).clock(manualClock);
   */
  clock(clock: ClientClock): this {
    this.clientClock = clock;
    return this;
  }

  /**
   * The service's base URL, e.g. `http://127.0.0.1:8080`; a path prefix (API Gateway stage) is kept.
   * @example AcklineClient.builder().serviceUrl('https://abc.execute-api.eu-west-1.amazonaws.com/prod');
   */
  serviceUrl(url: string): this {
    this.url = url;
    return this;
  }

  /**
   * @throws AcklineClientArgumentError when the service URL is missing or not http(s), or the
   * timeout is not a positive integer.
   * @example const client = AcklineClient.builder().serviceUrl('http://127.0.0.1:8080').build();
   */
  build(): AcklineClient {
    return new AcklineClient({
      ...this.settings('service URL', (reason) => new AcklineClientArgumentError(reason)),
      clock: this.clientClock,
    });
  }
}
