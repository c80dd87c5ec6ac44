import { afterAll, describe, expect, it } from 'vitest';
import { admin, Pulsar, pulsarClient, uniqueTopic } from '../../support/pulsar-client-fixtures.ts';

// apache/pulsar-client-node v1.18.0 tests/client.test.js, re-expressed against ackline/pulsar-client
// (docs/design/pulsar-client-tests.md). The URL checks need no server; the partition lookups use it.

const clients: Pulsar.Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

describe('pulsar-client tests/client.test.js: CreateFailedByUrlSetIncorrect', () => {
  it('No Set Url: the constructor throws that the service URL is required', () => {
    expect(
      () => new Pulsar.Client({ operationTimeoutSeconds: 30 } as unknown as Pulsar.ClientConfig),
    ).toThrow(
      'Service URL is required and must be specified as a string unless serviceUrlProvider is configured',
    );
  });

  it('Set empty url', () => {
    expect(() => new Pulsar.Client({ serviceUrl: '', operationTimeoutSeconds: 30 })).toThrow(
      'Service URL is required and must be specified as a string',
    );
  });

  it('Set invalid url: an unknown scheme is named', () => {
    expect(() => new Pulsar.Client({ serviceUrl: 'invalid://localhost:6655' })).toThrow(
      'Invalid scheme: invalid',
    );
  });

  it('Set not string url', () => {
    expect(() => new Pulsar.Client({ serviceUrl: -1 } as unknown as Pulsar.ClientConfig)).toThrow(
      'Service URL is required and must be specified as a string',
    );
  });

  it('Set both service url and service url provider', () => {
    const config = {
      serviceUrl: 'http://localhost:8080',
      serviceUrlProvider: { primary: 'http://localhost:8080', secondary: ['http://localhost:8081'] },
    } as unknown as Pulsar.ClientConfig;
    expect(() => new Pulsar.Client(config)).toThrow(
      'Only one of serviceUrl or serviceUrlProvider can be configured',
    );
  });

  it("(ackline) pulsar:// URLs, serviceUrlProvider and TLS client certificates throw that they need Pulsar's binary protocol", () => {
    expect(() => new Pulsar.Client({ serviceUrl: 'pulsar://localhost:6650' })).toThrow(
      "needs Pulsar's binary protocol",
    );
    expect(() => new Pulsar.Client({ serviceUrl: 'pulsar+ssl://localhost:6651' })).toThrow(
      "needs Pulsar's binary protocol",
    );
    expect(
      () =>
        new Pulsar.Client({ serviceUrlProvider: { primary: 'http://a:8080', secondary: ['http://b:8080'] } }),
    ).toThrow("needs Pulsar's binary protocol");
    expect(
      () =>
        new Pulsar.Client({
          serviceUrl: 'http://localhost:8080',
          tlsCertificateFilePath: 'c.pem',
          tlsPrivateKeyFilePath: 'k.pem',
        }),
    ).toThrow("needs Pulsar's binary protocol");
    expect(
      () =>
        new Pulsar.Client({
          serviceUrl: 'http://localhost:8080',
          authentication: new Pulsar.AuthenticationTls({ certificatePath: 'c.pem', privateKeyPath: 'k.pem' }),
        }),
    ).toThrow("needs Pulsar's binary protocol");
  });
});

describe('pulsar-client tests/client.test.js: test getPartitionsForTopic', () => {
  it('GetPartitions for empty topic', async () => {
    const client = pulsarClient();
    clients.push(client);
    await expect(client.getPartitionsForTopic('')).rejects.toThrow(
      'Failed to GetPartitionsForTopic: InvalidTopicName',
    );
  });

  it('Client/getPartitionsForTopic: a non-partitioned topic answers its own name, a partitioned one its partitions', async () => {
    const client = pulsarClient();
    clients.push(client);
    const nonPartitioned = uniqueTopic('test-non-partitioned-topic');
    await admin().topics().createNonPartitionedTopic(nonPartitioned);
    expect(await client.getPartitionsForTopic(nonPartitioned)).toEqual([nonPartitioned]);

    const partitioned = uniqueTopic('test-partitioned-topic-1');
    await admin().topics().createPartitionedTopic(partitioned, 4);
    expect(await client.getPartitionsForTopic(partitioned)).toEqual(
      [0, 1, 2, 3].map((i) => `${partitioned}-partition-${i}`),
    );

    await admin().topics().delete(nonPartitioned);
    await admin().topics().deletePartitionedTopic(partitioned);
  });
});
