import { AcklineClient } from '../client/ackline-client.ts';
import { parseTopic } from '../client/admin-paths.ts';
import { tokenSupplierOf } from './authentication.ts';
import { type CompatContext, partitionCount } from './compat-context.ts';
import { type Consumer, type ConsumerConfig, subscribeConsumer } from './consumer.ts';
import { CompatLogger, setGlobalLogHandler } from './log.ts';
import { createProducer, type Producer, type ProducerConfig } from './producer.ts';
import { createReader, type Reader, type ReaderConfig } from './reader.ts';
import { TokenFetch } from './token-fetch.ts';
import type { ClientConfig, LogHandler } from './types.ts';

const SERVICE_URL_REQUIRED =
  'Service URL is required and must be specified as a string unless serviceUrlProvider is configured';
const DEFAULT_OPERATION_TIMEOUT_SECONDS = 30;

/**
 * pulsar-client's `Client`, over ackline's HTTP API: `serviceUrl` is ackline's `http(s)://` URL
 * (the embedded stack's, or the API Gateway stage's). It holds no connection; producers, consumers
 * and readers make HTTP requests with the client's token.
 *
 * @example
 * const Pulsar = require('ackline/pulsar-client');
 * const client = new Pulsar.Client({
 *   serviceUrl: 'http://127.0.0.1:8080',
 *   authentication: new Pulsar.AuthenticationToken({ token: process.env.ACKLINE_TOKEN }),
 * });
 */
export class Client {
  private readonly context: CompatContext;
  private closing: Promise<null> | undefined;

  /**
   * @throws Error, as pulsar-client, when `serviceUrl` is missing or of an unknown scheme; and when a
   * setting needs Pulsar's binary protocol (`pulsar://` URLs, TLS client certificates,
   * `serviceUrlProvider`).
   */
  constructor(config: ClientConfig) {
    const serviceUrl = checkServiceUrl(config);
    if (config.tlsCertificateFilePath !== undefined || config.tlsPrivateKeyFilePath !== undefined) {
      throw new Error(
        "A TLS client certificate (tlsCertificateFilePath, tlsPrivateKeyFilePath) needs Pulsar's binary protocol; ackline's HTTP API authenticates with AuthenticationToken",
      );
    }
    const supplier = tokenSupplierOf(config.authentication);
    const timeoutSeconds = config.operationTimeoutSeconds ?? DEFAULT_OPERATION_TIMEOUT_SECONDS;
    const builder = AcklineClient.builder()
      .serviceUrl(serviceUrl)
      .requestTimeoutMs(Math.max(1, Math.round(timeoutSeconds * 1000)));
    const sdk = (supplier === undefined ? builder : builder.fetch(new TokenFetch(supplier).fetch)).build();
    this.context = {
      sdk,
      logger: new CompatLogger(config.log, config.logLevel),
      open: new Set(),
      lastPublished: new Map(),
    };
  }

  /**
   * Sets the log handler of every client made without a `log` setting.
   * @example Client.setLogHandler((level, file, line, message) => console.log(level, message));
   */
  static setLogHandler(logHandler: LogHandler): void {
    setGlobalLogHandler(logHandler);
  }

  /** @example const producer = await client.createProducer({ topic: 'my-topic' }); */
  createProducer(config: ProducerConfig): Promise<Producer> {
    return createProducer(this.context, config);
  }

  /** @example const consumer = await client.subscribe({ topic: 'my-topic', subscription: 'sub1' }); */
  subscribe(config: ConsumerConfig): Promise<Consumer> {
    return subscribeConsumer(this.context, config);
  }

  /** @example const reader = await client.createReader({ topic: 'my-topic', startMessageId: MessageId.earliest() }); */
  createReader(config: ReaderConfig): Promise<Reader> {
    return createReader(this.context, config);
  }

  /**
   * The topic's partitions' names, or the topic's own name when it is not partitioned.
   * @example await client.getPartitionsForTopic('my-topic'); // ['persistent://public/default/my-topic']
   */
  async getPartitionsForTopic(topic: string): Promise<string[]> {
    const failed = 'Failed to GetPartitionsForTopic';
    let name: string;
    try {
      const parts = parseTopic(topic);
      name = `${parts.domain}://${parts.tenant}/${parts.namespace}/${parts.localName}`;
    } catch (error) {
      throw new Error(`${failed}: InvalidTopicName`, { cause: error });
    }
    const partitions = await partitionCount(this.context, name, failed);
    if (partitions === 0) return [name];
    return Array.from({ length: partitions }, (_, index) => `${name}-partition-${index}`);
  }

  /** Closes every producer, consumer and reader of this client; resolves to null. */
  close(): Promise<null> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.context.open].map((closable) => closable.close()));
      await this.context.sdk.close();
      return null;
    })();
    return this.closing;
  }
}

function checkServiceUrl(config: ClientConfig): string {
  if (config === null || typeof config !== 'object') throw new Error(SERVICE_URL_REQUIRED);
  const { serviceUrl, serviceUrlProvider } = config as { serviceUrl?: unknown; serviceUrlProvider?: unknown };
  if (serviceUrl !== undefined && serviceUrlProvider !== undefined) {
    throw new Error('Only one of serviceUrl or serviceUrlProvider can be configured');
  }
  if (serviceUrlProvider !== undefined) {
    throw new Error(
      "serviceUrlProvider (automatic cluster failover) needs Pulsar's binary protocol; give ackline's http(s) serviceUrl",
    );
  }
  if (typeof serviceUrl !== 'string' || serviceUrl.length === 0) throw new Error(SERVICE_URL_REQUIRED);
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(serviceUrl)?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') return serviceUrl;
  if (scheme === 'pulsar' || scheme === 'pulsar+ssl') {
    throw new Error(
      `${scheme}:// needs Pulsar's binary protocol; ackline speaks HTTP: give its http(s) URL (e.g. http://127.0.0.1:8080)`,
    );
  }
  throw new Error(`Invalid scheme: ${scheme ?? serviceUrl}`);
}
