import { describe, expect, it } from 'vitest';
import { InvalidTopicNameError } from '../../../shared/domain/errors.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';

describe('TopicName.parse', () => {
  it.each([
    // input, full name, domain, tenant, cluster, namespace, localName, partitionIndex
    ['persistent://t/ns/topic', 'persistent://t/ns/topic', 'persistent', 't', undefined, 'ns', 'topic', -1],
    [
      'non-persistent://t/ns/topic',
      'non-persistent://t/ns/topic',
      'non-persistent',
      't',
      undefined,
      'ns',
      'topic',
      -1,
    ],
    ['t/ns/topic', 'persistent://t/ns/topic', 'persistent', 't', undefined, 'ns', 'topic', -1],
    ['topic', 'persistent://public/default/topic', 'persistent', 'public', undefined, 'default', 'topic', -1],
    ['persistent://p/c1/ns/topic', 'persistent://p/c1/ns/topic', 'persistent', 'p', 'c1', 'ns', 'topic', -1],
    ['p/c1/ns/topic', 'persistent://p/c1/ns/topic', 'persistent', 'p', 'c1', 'ns', 'topic', -1],
    [
      'persistent://t/ns/topic-partition-2',
      'persistent://t/ns/topic-partition-2',
      'persistent',
      't',
      undefined,
      'ns',
      'topic-partition-2',
      2,
    ],
    [
      't/ns/topic-partition-0',
      'persistent://t/ns/topic-partition-0',
      'persistent',
      't',
      undefined,
      'ns',
      'topic-partition-0',
      0,
    ],
    [
      'persistent://p/c/ns/a-partition-11',
      'persistent://p/c/ns/a-partition-11',
      'persistent',
      'p',
      'c',
      'ns',
      'a-partition-11',
      11,
    ],
    [
      'persistent://my_t-1=a:b.c/n.s/x y+z%20',
      'persistent://my_t-1=a:b.c/n.s/x y+z%20',
      'persistent',
      'my_t-1=a:b.c',
      undefined,
      'n.s',
      'x y+z%20',
      -1,
    ],
    ['t/ns/ordres-été', 'persistent://t/ns/ordres-été', 'persistent', 't', undefined, 'ns', 'ordres-été', -1],
  ])('parses %s', (input, full, domain, tenant, cluster, namespace, localName, partitionIndex) => {
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
    ['persistent://t/ns/a/b/c', /found 5/],
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
    ['persistent://t/ns/topic-partition--1', /negative partition index "-1"/],
    ['t/ns/topic-partition--12', /negative partition index/],
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
    expect(TopicName.fromRestV1('persistent', 'p', 'c', 'ns', 'x').toString()).toBe('persistent://p/c/ns/x');
  });

  it.each([
    ['queue', 't', 'ns', 'x', /unknown domain "queue"/],
    ['persistent', 't', 'ns', '%E0%A4%A', /not valid URL encoding/],
    ['persistent', 't', 'ns', 'a%2Fb', /contains '\/'/],
    ['persistent', 't', 'ns', 'a%0Ab', /control character/],
    ['persistent', 't', 'ns', '', /topic part is empty/],
    ['persistent', 't@', 'ns', 'x', /tenant "t@"/],
    ['persistent', 't', '', 'x', /namespace is empty/],
  ])('rejects %s/%s/%s/%s', (domain, tenant, namespace, topic, reason) => {
    expect(() => TopicName.fromRest(domain, tenant, namespace, topic)).toThrow(InvalidTopicNameError);
    expect(() => TopicName.fromRest(domain, tenant, namespace, topic)).toThrow(reason);
  });
});
