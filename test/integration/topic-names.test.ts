import { describe, expect, it } from 'vitest';
import { AdminApi, NamespaceRef } from '../support/admin-fixtures.ts';

// Issue 13, criterion 7: topic names follow Pulsar's rules on every path, and the paths agree.
// The rules are Pulsar's TopicName (and TopicNameTest) and the create checks of its
// PersistentTopics admin resource (validatePartitionedTopicName, validateNonPartitionTopicName).

const api = AdminApi.shared();

describe('topic names with -partition- (Pulsar admin create rules)', () => {
  it('creates tp1-partition-0-DLQ by the admin API (204), as a publish does, and lists it', async () => {
    const namespace = NamespaceRef.unique('names');
    const dlq = namespace.topic('tp1-partition-0-DLQ');
    const published = namespace.topic('tp2-partition-0-DLQ');

    const created = await api.send('PUT', dlq.adminPath);
    const produced = await api.send('POST', published.producePath, {
      body: { messages: [{ payload: 'x' }] },
    });
    const listed = await api.send('GET', namespace.adminPath());

    expect(created.status).toBe(204);
    expect(produced.status).toBe(200);
    expect(listed.body).toEqual([dlq.name, published.name]);
  });

  it.each([
    ['mytopic-partition-00'],
    ['mytopic-partition--1'],
    ['mytopic-partition-+1'],
  ])('refuses %s without a partitioned topic mytopic (412) on the admin API and on a publish alike, and creates nothing', async (localName) => {
    const namespace = NamespaceRef.unique('names');
    const topic = namespace.topic(localName);

    const created = await api.send('PUT', topic.adminPath);
    const produced = await api.send('POST', topic.producePath, { body: { messages: [{ payload: 'x' }] } });
    const listed = await api.send('GET', namespace.adminPath());

    expect(created.status).toBe(412);
    expect(created.body).toEqual({
      reason: expect.stringContaining(
        `isn't a partitioned topic persistent://${namespace.name}/mytopic created`,
      ),
    });
    expect(produced.status).toBe(412);
    expect(produced.body).toEqual(created.body);
    expect(listed.body).toEqual([]);
  });

  it('with partitioned topic a of 2 partitions: a-partition-00 creates, a-partition-1 exists (409), a-partition-2 and a-partition-+5 are refused (412)', async () => {
    const namespace = NamespaceRef.unique('names');
    const base = namespace.topic('a');
    await api.createTopic(base, 2);

    const zeroZero = await api.send('PUT', namespace.topic('a-partition-00').adminPath);
    const partition = await api.send('PUT', base.partition(1).adminPath);
    const beyond = await api.send('PUT', base.partition(2).adminPath);
    const signed = await api.send('PUT', namespace.topic('a-partition-+5').adminPath);
    const listed = await api.send('GET', namespace.adminPath());

    expect(zeroZero.status).toBe(204);
    expect(partition.status).toBe(409);
    expect(beyond.status).toBe(412);
    expect(signed.status).toBe(412);
    expect(signed.body).toEqual({ reason: expect.stringContaining('number of partitions (2)') });
    // Sorted as strings, as Pulsar lists them.
    expect(listed.body).toEqual([
      base.partition(0).name,
      namespace.topic('a-partition-00').name,
      base.partition(1).name,
    ]);
  });

  it("refuses a partitioned topic whose name holds '-partition-' (412), as Pulsar", async () => {
    const namespace = NamespaceRef.unique('names');

    const result = await api.send('PUT', `${namespace.topic('x-partition-y').adminPath}/partitions`, {
      body: 2,
    });

    expect(result.status).toBe(412);
    expect(result.body).toEqual({ reason: expect.stringContaining("should not contain '-partition-'") });
  });
});

describe("local names of Pulsar's TopicNameTest on every path", () => {
  it.each([
    ['a:b:c'],
    ['$#3rpa'],
    ['ordres-été 日本'],
    ['with spaces and+plus'],
    ['mytopic-partition- 12'],
    ['mytopic-partition-1&'],
    ['a:en-in_https\\:'],
  ])('%o: create, publish, subscribe, stats, list and delete agree', async (localName) => {
    const namespace = NamespaceRef.unique('names');
    const topic = namespace.topic(localName);

    const created = await api.send('PUT', topic.adminPath);
    const produced = await api.send('POST', topic.producePath, { body: { messages: [{ payload: 'x' }] } });
    await api.createSubscription(topic, 'sub');
    const stats = await api.stats(topic);
    const listed = await api.send('GET', namespace.adminPath());
    const deleted = await api.send('DELETE', topic.adminPath);

    expect(created.status).toBe(204);
    expect(produced.status).toBe(200);
    expect(stats.subscriptions.sub?.msgBacklog).toBe(1);
    expect(listed.body).toEqual([topic.name]);
    expect(deleted.status).toBe(204);
  });
});
