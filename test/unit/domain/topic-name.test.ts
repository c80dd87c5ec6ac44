import { describe, expect, it } from 'vitest';
import { InvalidTopicNameError, TopicName } from '../../../shared/domain/topic-name.ts';

describe('TopicName.parse', () => {
  it.each([
    {
      input: 'persistent://t/ns/topic',
      full: 'persistent://t/ns/topic',
      domain: 'persistent',
      tenant: 't',
      cluster: undefined,
      namespace: 'ns',
      localName: 'topic',
      partitionIndex: -1,
    },
    {
      input: 'non-persistent://t/ns/topic',
      full: 'non-persistent://t/ns/topic',
      domain: 'non-persistent',
      tenant: 't',
      cluster: undefined,
      namespace: 'ns',
      localName: 'topic',
      partitionIndex: -1,
    },
    {
      input: 't/ns/topic',
      full: 'persistent://t/ns/topic',
      domain: 'persistent',
      tenant: 't',
      cluster: undefined,
      namespace: 'ns',
      localName: 'topic',
      partitionIndex: -1,
    },
    {
      input: 'topic',
      full: 'persistent://public/default/topic',
      domain: 'persistent',
      tenant: 'public',
      cluster: undefined,
      namespace: 'default',
      localName: 'topic',
      partitionIndex: -1,
    },
    {
      input: 'persistent://p/c1/ns/topic',
      full: 'persistent://p/c1/ns/topic',
      domain: 'persistent',
      tenant: 'p',
      cluster: 'c1',
      namespace: 'ns',
      localName: 'topic',
      partitionIndex: -1,
    },
    {
      input: 'persistent://t/ns/topic-partition-2',
      full: 'persistent://t/ns/topic-partition-2',
      domain: 'persistent',
      tenant: 't',
      cluster: undefined,
      namespace: 'ns',
      localName: 'topic-partition-2',
      partitionIndex: 2,
    },
    {
      input: 't/ns/topic-partition-0',
      full: 'persistent://t/ns/topic-partition-0',
      domain: 'persistent',
      tenant: 't',
      cluster: undefined,
      namespace: 'ns',
      localName: 'topic-partition-0',
      partitionIndex: 0,
    },
    {
      input: 'persistent://p/c/ns/a-partition-11',
      full: 'persistent://p/c/ns/a-partition-11',
      domain: 'persistent',
      tenant: 'p',
      cluster: 'c',
      namespace: 'ns',
      localName: 'a-partition-11',
      partitionIndex: 11,
    },
    {
      input: 'persistent://my_t-1=a:b.c/n.s/x y+z%20',
      full: 'persistent://my_t-1=a:b.c/n.s/x y+z%20',
      domain: 'persistent',
      tenant: 'my_t-1=a:b.c',
      cluster: undefined,
      namespace: 'n.s',
      localName: 'x y+z%20',
      partitionIndex: -1,
    },
    {
      input: 't/ns/ordres-été',
      full: 'persistent://t/ns/ordres-été',
      domain: 'persistent',
      tenant: 't',
      cluster: undefined,
      namespace: 'ns',
      localName: 'ordres-été',
      partitionIndex: -1,
    },
  ])('parses $input', ({ input, full, domain, tenant, cluster, namespace, localName, partitionIndex }) => {
    // Act
    const name = TopicName.parse(input);

    // Assert
    expect(name.toString()).toBe(full);
    expect(name.domain).toBe(domain);
    expect(name.tenant).toBe(tenant);
    expect(name.cluster).toBe(cluster);
    expect(name.namespace).toBe(namespace);
    expect(name.localName).toBe(localName);
    expect(name.partitionIndex).toBe(partitionIndex);
    expect(name.isPartition).toBe(partitionIndex >= 0);
    expect(TopicName.parse(name.toString()).equals(name)).toBe(true);
  });

  // Pulsar reads these suffixes as part of a plain name (TopicName.getPartitionIndex).
  it.each([
    ['t/ns/a-partition-abc'],
    ['t/ns/a-partition-01'],
    ['t/ns/a-partition-+1'],
    ['t/ns/a-partition-'],
    ['t/ns/a-partition-1.5'],
    ['t/ns/a-partition-2147483648'],
  ])('treats %s as a plain (non-partition) name', (input) => {
    // Act
    const name = TopicName.parse(input);

    // Assert
    expect(name.partitionIndex).toBe(-1);
    expect(name.isPartition).toBe(false);
    expect(name.partitionedTopicName.equals(name)).toBe(true);
  });

  it('uses the last -partition- suffix', () => {
    // Act
    const name = TopicName.parse('t/ns/a-partition-1-partition-3');

    // Assert
    expect(name.partitionIndex).toBe(3);
    expect(name.partitionedTopicName.toString()).toBe('persistent://t/ns/a-partition-1');
  });

  it.each([
    ['', /is empty/],
    ['persistent://t/ns', /found 2/],
    ['t/ns', /found 2/],
    ['a/b/c/d/e', /found 5/],
    ['http://t/ns/topic', /unknown domain "http"/],
    ['Persistent://t/ns/topic', /unknown domain "Persistent"/],
    ['://t/ns/topic', /unknown domain ""/],
    ['persistent://t/ns/', /topic part is empty/],
    ['persistent:///ns/topic', /tenant is empty/],
    ['persistent://t//topic', /namespace is empty/],
    ['persistent://p//ns/topic', /cluster is empty/],
    ['t//topic', /namespace is empty/],
    ['persistent://t!/ns/topic', /tenant "t!"/],
    ['persistent://t/n s/topic', /namespace "n s"/],
    ['persistent://p/c#/ns/topic', /cluster "c#"/],
    ['persistent://t/ns%2F/topic', /namespace "ns%2F"/],
    ['persistent://té/ns/topic', /tenant "té"/],
    ['p/c1/ns/topic', /needs persistent:\/\//],
    ['persistent://p/c/ns/', /topic part is empty/],
    ['persistent://t/ns/ ', /topic part is blank/],
    [' ', /topic part is blank/],
    ['t/ns/-partition-0', /empty name/],
    ['t/ns/to\npic', /control character/],
    ['t/ns/to\u0000pic', /control character/],
    ['t/ns/to\u007fpic', /control character/],
    ['t/ns/to\u0085pic', /control character/],
  ])('rejects %o (%s)', (input, reason) => {
    expect(() => TopicName.parse(input)).toThrow(InvalidTopicNameError);
    expect(() => TopicName.parse(input)).toThrow(reason);
  });

  it('quotes the whole input in the message', () => {
    expect(() => TopicName.parse('persistent://t/n s/x')).toThrow(
      'Invalid topic name "persistent://t/n s/x"',
    );
  });
});

describe('TopicName', () => {
  it('gives the namespace name', () => {
    expect(TopicName.parse('persistent://t/ns/x').namespaceName).toBe('t/ns');
    expect(TopicName.parse('persistent://p/c/ns/x').namespaceName).toBe('p/c/ns');
  });

  it('builds partition names from the base or from another partition', () => {
    // Arrange
    const base = TopicName.parse('persistent://t/ns/orders');

    // Act
    const second = base.partition(2);
    const fifth = second.partition(5);

    // Assert
    expect(second.toString()).toBe('persistent://t/ns/orders-partition-2');
    expect(second.partitionIndex).toBe(2);
    expect(fifth.toString()).toBe('persistent://t/ns/orders-partition-5');
    expect(fifth.partitionedTopicName.equals(base)).toBe(true);
    expect(second.equals(TopicName.parse('t/ns/orders-partition-2'))).toBe(true);
  });

  it.each([[-1], [1.5], [2 ** 31], [Number.NaN]])('rejects partition(%o)', (index) => {
    expect(() => TopicName.parse('t/ns/x').partition(index)).toThrow(InvalidTopicNameError);
  });

  it('keeps the domain and cluster of a partition base', () => {
    // Act
    const base = TopicName.parse('non-persistent://p/c/ns/x-partition-3').partitionedTopicName;

    // Assert
    expect(base.toString()).toBe('non-persistent://p/c/ns/x');
    expect(base.isPersistent).toBe(false);
    expect(base.cluster).toBe('c');
  });

  it.each([
    ['persistent://t/ns/topic', 'persistent/t/ns/topic'],
    ['non-persistent://t/ns/topic-partition-1', 'non-persistent/t/ns/topic-partition-1'],
    ['persistent://p/c/ns/topic', 'persistent/p/c/ns/topic'],
    ['t/ns/a b:c=d?e#f%g+h', 'persistent/t/ns/a%20b%3Ac%3Dd%3Fe%23f%25g%2Bh'],
  ])('gives the REST path of %s', (input, path) => {
    expect(TopicName.parse(input).restPath).toBe(path);
  });
});

describe('TopicName.fromRest', () => {
  it('decodes the topic part', () => {
    // Act
    const name = TopicName.fromRest('persistent', 't', 'ns', 'a%20b%3Ac%2Bd+e');

    // Assert
    expect(name.localName).toBe('a b:c+d e');
    expect(name.toString()).toBe('persistent://t/ns/a b:c+d e');
  });

  it('round-trips through restPath', () => {
    // Arrange
    const name = TopicName.parse('non-persistent://t/ns/x y+z%é-partition-4');
    const [domain, tenant, namespace, topic] = name.restPath.split('/');

    // Act
    const back = TopicName.fromRest(domain!, tenant!, namespace!, topic!);

    // Assert
    expect(back.equals(name)).toBe(true);
    expect(back.partitionIndex).toBe(4);
  });

  it('reads the legacy route with a cluster', () => {
    const name = TopicName.fromRestV1({
      domain: 'persistent',
      property: 'p',
      cluster: 'c',
      namespace: 'ns',
      encodedTopic: 'x',
    });

    expect(name.toString()).toBe('persistent://p/c/ns/x');
  });

  it.each([
    { domain: 'queue', tenant: 't', namespace: 'ns', topic: 'x', reason: /unknown domain "queue"/ },
    {
      domain: 'persistent',
      tenant: 't',
      namespace: 'ns',
      topic: '%E0%A4%A',
      reason: /not valid URL encoding/,
    },
    { domain: 'persistent', tenant: 't', namespace: 'ns', topic: 'a%2Fb', reason: /contains '\/'/ },
    { domain: 'persistent', tenant: 't', namespace: 'ns', topic: 'a%0Ab', reason: /control character/ },
    { domain: 'persistent', tenant: 't', namespace: 'ns', topic: '', reason: /topic part is empty/ },
    { domain: 'persistent', tenant: 't@', namespace: 'ns', topic: 'x', reason: /tenant "t@"/ },
    { domain: 'persistent', tenant: 't', namespace: '', topic: 'x', reason: /namespace is empty/ },
  ])('rejects $domain/$tenant/$namespace/$topic', ({ domain, tenant, namespace, topic, reason }) => {
    expect(() => TopicName.fromRest(domain, tenant, namespace, topic)).toThrow(InvalidTopicNameError);
    expect(() => TopicName.fromRest(domain, tenant, namespace, topic)).toThrow(reason);
  });
});

/**
 * The cases of Pulsar's own TopicNameTest (pulsar-common/src/test/java/org/apache/pulsar/common/
 * naming/TopicNameTest.java), each with what Pulsar's TopicName answers.
 */
describe("TopicName against Pulsar's TopicNameTest", () => {
  it.each([
    ['://tenant.namespace:topic'],
    ['://tenant.namespace:my-topic'],
    ['://tenant.namespace'],
    ['invalid://tenant/cluster/namespace/topic'],
    ['tenant/cluster/namespace/topic'],
    ['persistent:///cluster/namespace/mydest-1'],
    ['persistent://pulsar//namespace/mydest-1'],
    ['persistent://pulsar/cluster//mydest-1'],
    ['persistent://pulsar/cluster/namespace/'],
    ['://pulsar/cluster/namespace/'],
    ['://tenant/cluster/namespace'],
    [' '],
    ['pulsar/cluster/namespace/test'],
    ['pulsar/cluster'],
  ])('refuses %o as Pulsar does', (input) => {
    expect(() => TopicName.parse(input)).toThrow(InvalidTopicNameError);
  });

  it('reads a legacy name with its cluster', () => {
    // Act
    const name = TopicName.parse('persistent://tenant/cluster/namespace/topic');

    // Assert
    expect(name.namespaceName).toBe('tenant/cluster/namespace');
    expect(name.tenant).toBe('tenant');
    expect(name.cluster).toBe('cluster');
    expect(name.namespace).toBe('namespace');
    expect(name.localName).toBe('topic');
    expect(name.toString()).toBe('persistent://tenant/cluster/namespace/topic');
  });

  it.each([
    ['persistent://tenant/cluster/namespace/ns-abc/table/1', 'ns-abc/table/1'],
    ['persistent://tenant/cluster/namespace/ns-abc/table/1/', 'ns-abc/table/1/'],
    ['persistent://tenant/cluster/namespace//ns-abc//table//1//', '/ns-abc//table//1//'],
    ['persistent://tenant/cluster/namespace/$#3rpa/table/1', '$#3rpa/table/1'],
  ])('keeps the slashes of a legacy topic part: %s', (input, localName) => {
    // Act
    const name = TopicName.parse(input);

    // Assert
    expect(name.localName).toBe(localName);
    expect(name.restPath).toBe(`persistent/tenant/cluster/namespace/${encodeURIComponent(localName)}`);
    expect(TopicName.parse(name.toString()).equals(name)).toBe(true);
  });

  it('has no v2 name for a legacy topic part with a slash', () => {
    const name = TopicName.parse('persistent://tenant/cluster/namespace/ns-abc/table/1');
    expect(() => name.withoutCluster()).toThrow(/contains '\/'/);
    expect(TopicName.parse('persistent://p/c/ns/x').withoutCluster().toString()).toBe('persistent://p/ns/x');
  });

  it('builds partition names, also of a name that already holds -partition- (testTwoKeyWordPartition)', () => {
    // Arrange
    const legacy = TopicName.parse('persistent://myprop/mycolo/myns/mytopic');
    const dlq = TopicName.parse('tenant1/namespace1/tp1-partition-0-DLQ');

    // Assert
    expect(legacy.partition(0).toString()).toBe('persistent://myprop/mycolo/myns/mytopic-partition-0');
    expect(legacy.partition(2).partitionIndex).toBe(2);
    expect(legacy.partitionIndex).toBe(-1);
    expect(TopicName.parse('persistent://myprop/mycolo/myns/mytopic-partition-4').partitionIndex).toBe(4);
    expect(dlq.isPartition).toBe(false);
    expect(dlq.partition(0).toString()).toBe(
      'persistent://tenant1/namespace1/tp1-partition-0-DLQ-partition-0',
    );
  });

  it.each([
    ['mytopic-partition--1'],
    ['mytopic-partition--2'],
    ['mytopic-partition-00'],
    ['mytopic-partition-01'],
    ['mytopic-partition-012'],
    ['mytopic-partition- 12'],
    ['mytopic-partition-12 '],
    ['mytopic-partition- 12 '],
    ['mytopic-partition-1&'],
    ['mytopic-partition-1!'],
  ])('reads %o as a plain name', (input) => {
    const name = TopicName.parse(input);
    expect(name.isPartition).toBe(false);
    expect(name.partitionIndex).toBe(-1);
  });

  it.each([
    ['mytopic-partition-0', 0],
    ['mytopic-partition-1', 1],
    ['mytopic-partition-12', 12],
  ])('reads %o as partition %i', (input, index) => {
    expect(TopicName.parse(input).partitionIndex).toBe(index);
  });

  it('decodes and encodes a local name with colons, a backslash and slashes (testDecodeEncode)', () => {
    // Arrange
    const encoded =
      'a%3Aen-in_in_business_content_item_20150312173022_https%5C%3A%2F%2Fin.news.example.com%2Fr';
    const raw = 'a:en-in_in_business_content_item_20150312173022_https\\://in.news.example.com/r';

    // Act
    const name = TopicName.parse(`persistent://prop/colo/ns/${raw}`);
    const fromRest = TopicName.fromRestV1({
      domain: 'persistent',
      property: 'prop',
      cluster: 'colo',
      namespace: 'ns',
      encodedTopic: encoded,
    });

    // Assert
    expect(name.localName).toBe(raw);
    expect(name.restPath).toBe(`persistent/prop/colo/ns/${encoded}`);
    expect(fromRest.equals(name)).toBe(true);
  });

  it.each([
    ['persistent://tenant/namespace/a:b:c', 'a:b:c'],
    ['persistent://public_tenant/default_namespace/test_topic', 'test_topic'],
    ['t/ns/ordres-été 日本', 'ordres-été 日本'],
    ['t/ns/$#3rpa', '$#3rpa'],
  ])('takes %s (testFromPersistenceNamingEncoding, unicode, spaces)', (input, localName) => {
    const name = TopicName.parse(input);
    expect(name.localName).toBe(localName);
    expect(
      TopicName.fromRest('persistent', name.tenant, name.namespace, encodeURIComponent(localName)).equals(
        name,
      ),
    ).toBe(true);
  });
});

describe('TopicName.partitionKeywordIndex (Pulsar validateNonPartitionTopicName)', () => {
  it.each([
    ['t/ns/plain', undefined, undefined],
    ['t/ns/tp1-partition-0-DLQ', undefined, undefined],
    ['t/ns/a-partition-x', undefined, undefined],
    ['t/ns/a-partition- 1', undefined, undefined],
    ['t/ns/a-partition-99999999999999999999', undefined, undefined],
    ['t/ns/a-partition-00', 'persistent://t/ns/a', 0n],
    ['t/ns/a-partition-+1', 'persistent://t/ns/a', 1n],
    ['t/ns/a-partition--1', 'persistent://t/ns/a', -1n],
    ['t/ns/a-partition-3', 'persistent://t/ns/a', 3n],
    ['t/ns/a-partition-9223372036854775807', 'persistent://t/ns/a', 9223372036854775807n],
  ])('%s points at %s index %s', (input, partitioned, index) => {
    const claim = TopicName.parse(input).partitionKeywordIndex;
    expect(claim?.partitionedTopic?.toString()).toBe(partitioned);
    expect(claim?.index).toBe(index);
  });

  it('uses the first -partition-, as Pulsar does', () => {
    // 'a-partition-1-partition-3' is partition 3 of 'a-partition-1'; after the first keyword comes no number.
    expect(TopicName.parse('t/ns/a-partition-1-partition-3').partitionKeywordIndex).toBeUndefined();
    expect(TopicName.parse('t/ns/-partition-00').partitionKeywordIndex).toEqual({
      partitionedTopic: undefined,
      index: 0n,
    });
  });
});
