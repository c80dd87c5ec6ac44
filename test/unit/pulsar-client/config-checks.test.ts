import { describe, expect, it } from 'vitest';
import { checkConsumerConfig } from '../../../shared/pulsar-client/consumer-config.ts';
import type { ConsumerConfig, ProducerConfig } from '../../../shared/pulsar-client/index.ts';
import { CryptoKeyReader } from '../../../shared/pulsar-client/index.ts';
import { checkProducerConfig } from '../../../shared/pulsar-client/producer-config.ts';

const BINARY = "needs Pulsar's binary protocol";
const topic = 'persistent://public/default/t';

describe('pulsar-client settings ackline cannot serve are refused, saying why', () => {
  it.each<[string, Partial<ProducerConfig>, string]>([
    ['encryptionKey', { encryptionKey: 'k', publicKeyPath: 'p.pem' }, BINARY],
    ['cryptoKeyReader', { cryptoKeyReader: new CryptoKeyReader() }, BINARY],
    ['an Avro schema', { schema: { schemaType: 'Avro', schema: '{}' } }, BINARY],
    [
      'an unknown access mode',
      { accessMode: 'Solo' as ProducerConfig['accessMode'] },
      'Failed to create producer: InvalidConfiguration (accessMode Solo)',
    ],
    [
      'a zero batchingMaxMessages',
      { batchingMaxMessages: 0 },
      'batchingMaxMessages must be a positive integer',
    ],
  ])('producer: %s', (_name, extra, message) => {
    expect(() => checkProducerConfig({ topic, ...extra })).toThrow(message);
  });

  it('producer: bytes and string schemas and every access mode are accepted', () => {
    for (const schemaType of ['None', 'Bytes', 'String'] as const) {
      expect(() =>
        checkProducerConfig({ topic, schema: { schemaType }, accessMode: 'Shared' }),
      ).not.toThrow();
    }
    for (const accessMode of ['Exclusive', 'WaitForExclusive', 'ExclusiveWithFencing'] as const) {
      expect(() => checkProducerConfig({ topic, accessMode })).not.toThrow();
    }
  });

  it.each<[string, Partial<ConsumerConfig>, string]>([
    ['privateKeyPath', { privateKeyPath: 'k.pem' }, BINARY],
    ['a Json schema', { schema: { schemaType: 'Json' } }, BINARY],
    [
      'an unknown subscription type',
      { subscriptionType: 'Roundrobin' as ConsumerConfig['subscriptionType'] },
      'subscriptionType',
    ],
    ['a negative receiverQueueSize', { receiverQueueSize: -1 }, 'receiverQueueSize'],
  ])('consumer: %s', (_name, extra, message) => {
    expect(() => checkConsumerConfig({ topic, subscription: 's', ...extra })).toThrow(message);
  });

  it('consumer: Key_Shared sticky ranges are accepted (the server checks them)', () => {
    expect(() =>
      checkConsumerConfig({
        topic,
        subscription: 's',
        subscriptionType: 'KeyShared',
        keySharedPolicy: { keyShareMode: 'Sticky', stickyRanges: [{ start: 0, end: 10 }] },
      }),
    ).not.toThrow();
  });

  it("consumer: pulsar-client's defaults, KeyShared named as ackline's Key_Shared", () => {
    expect(checkConsumerConfig({ topic, subscription: 's', subscriptionType: 'KeyShared' })).toEqual({
      where: { topics: [topic] },
      subscription: 's',
      subscriptionType: 'Key_Shared',
      ackTimeoutMs: 0,
      nackDelayMs: 60_000,
      receiverQueueSize: 1000,
      batchReceive: { maxNumMessages: -1, maxNumBytes: 10 * 1024 * 1024, timeoutMs: 100 },
    });
    expect(
      checkConsumerConfig({ topicsPattern: 'persistent://public/default/a.*', subscription: 's' }).where,
    ).toEqual({
      pattern: 'persistent://public/default/a.*',
    });
  });
});
