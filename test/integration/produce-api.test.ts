import { describe, expect, it } from 'vitest';
import { AdminApi, parseMessageId, TopicRef } from '../support/admin-fixtures.ts';

// REST produce (`POST /topics/persistent/{tenant}/{namespace}/{topic}`) of issue 3, over real HTTP
// against the shared embedded stack.

const api = AdminApi.shared();
const KIB = 1024;
const MAX_PAYLOAD_BYTES = 256 * KIB;

/** What must not move when a produce request is refused. */
async function storedState(topic: TopicRef) {
  const stats = await api.stats(topic);
  const internal = await api.internalStats(topic);
  return {
    msgInCounter: stats.msgInCounter,
    ledgers: internal.ledgers,
    entries: internal.entriesAddedCounter,
  };
}

describe('produce', () => {
  it('answers 200 with one L:E:P message id per message, in order', async () => {
    const topic = TopicRef.unique('produce');
    await api.createTopic(topic);

    const result = await api.send('POST', topic.producePath, {
      body: { messages: [{ payload: 'one' }, { payload: 'two' }, { payload: 'three' }] },
    });

    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      messagePublishResults: [
        { messageId: expect.stringMatching(/^\d+:0:-1$/), errorCode: 0 },
        { messageId: expect.stringMatching(/^\d+:1:-1$/), errorCode: 0 },
        { messageId: expect.stringMatching(/^\d+:2:-1$/), errorCode: 0 },
      ],
    });
    const ids = (result.body as { messagePublishResults: { messageId: string }[] }).messagePublishResults;
    expect(new Set(ids.map((id) => parseMessageId(id.messageId).ledgerId)).size).toBe(1);
  });

  it('appends after earlier requests and counts every message in msgInCounter', async () => {
    const topic = TopicRef.unique('counter');
    await api.createTopic(topic);
    await api.produceMany(topic, 2);

    const [third] = await api.produce(topic, [{ payload: 'third' }]);
    const stats = await api.stats(topic);

    expect(parseMessageId(third as string).entryId).toBe('2');
    expect(stats.msgInCounter).toBe(3);
  });

  it('stores key, properties, eventTime and deliverAt as given', async () => {
    const topic = TopicRef.unique('fields');
    const deliverAt = Date.now() + 3_600_000;

    const [id] = await api.produce(topic, [
      { payload: '{"order":1}', key: 'order-1', properties: { a: '1', b: 'two' }, eventTime: 42, deliverAt },
    ]);
    const { ledgerId, entryId } = parseMessageId(id as string);
    const stored = await api.send('GET', `${topic.adminPath}/ledger/${ledgerId}/entry/${entryId}`);

    expect(stored.body).toMatchObject({
      payload: '{"order":1}',
      key: 'order-1',
      properties: { a: '1', b: 'two' },
      eventTime: 42,
      deliverAt,
    });
  });

  it('turns deliverAfterMs into a deliverAt that far from the publish time', async () => {
    const topic = TopicRef.unique('after');

    const [id] = await api.produce(topic, [{ payload: 'later', deliverAfterMs: 60_000 }]);
    const { ledgerId, entryId } = parseMessageId(id as string);
    const stored = (await api.send('GET', `${topic.adminPath}/ledger/${ledgerId}/entry/${entryId}`)).body as {
      publishTime: number;
      deliverAt: number;
    };

    expect(stored.deliverAt - stored.publishTime).toBeGreaterThanOrEqual(59_000);
    expect(stored.deliverAt - stored.publishTime).toBeLessThanOrEqual(61_000);
  });

  it('creates an unknown topic, non-partitioned, on first produce', async () => {
    const topic = TopicRef.unique('auto');

    await api.produce(topic, [{ payload: 'x' }]);
    const metadata = await api.send('GET', `${topic.adminPath}/partitions`);

    expect(metadata.body).toEqual({ partitions: 0 });
  });

  it('answers 404 for a partition of a topic that does not exist or is not that wide', async () => {
    const topic = TopicRef.unique('nopart');
    await api.createTopic(topic, 2);

    const beyond = await api.send('POST', topic.partition(2).producePath, {
      body: { messages: [{ payload: 'x' }] },
    });
    const unknown = await api.send('POST', TopicRef.unique('nopart').partition(0).producePath, {
      body: { messages: [{ payload: 'x' }] },
    });

    expect(beyond.status).toBe(404);
    expect(unknown.status).toBe(404);
  });
});

describe('produce to a partitioned topic', () => {
  // Pulsar's default router: signSafeMod(Java String.hashCode(key), partitions). Java hashes:
  // 'a' 97, 'b' 98, 'c' 99, 'customer-7' -1581185528, 'polygenelubricants' -2^31.
  it.each([
    ['a', 1],
    ['b', 2],
    ['c', 0],
    ['customer-7', 1],
    ['polygenelubricants', 1],
  ])('routes key %s to partition %i of 3', async (key, partition) => {
    const topic = TopicRef.unique('keyed');
    await api.createTopic(topic, 3);

    const ids = await api.produce(topic, [
      { payload: '1', key },
      { payload: '2', key },
    ]);
    const stats = await api.stats(topic.partition(partition));

    expect(ids.map((id) => parseMessageId(id).partition)).toEqual([partition, partition]);
    expect(stats.msgInCounter).toBe(2);
  });

  it('spreads keyless messages round-robin: 8 messages on 4 partitions, two each', async () => {
    const topic = TopicRef.unique('roundrobin');
    await api.createTopic(topic, 4);

    const ids = await api.produceMany(topic, 8);
    const perPartition = await Promise.all([0, 1, 2, 3].map((i) => api.stats(topic.partition(i))));

    const partitions = ids.map((id) => parseMessageId(id).partition);
    for (let i = 1; i < partitions.length; i++) {
      expect(partitions[i]).toBe(((partitions[i - 1] as number) + 1) % 4);
    }
    expect(perPartition.map((stats) => stats.msgInCounter)).toEqual([2, 2, 2, 2]);
  });

  it('writes each message id with the partition that stored it', async () => {
    const topic = TopicRef.unique('ids');
    await api.createTopic(topic, 2);

    const [id] = await api.produce(topic, [{ payload: 'x', key: 'a' }]);
    const { ledgerId, entryId, partition } = parseMessageId(id as string);
    const viaPartition = await api.send(
      'GET',
      `${topic.partition(partition).adminPath}/ledger/${ledgerId}/entry/${entryId}`,
    );
    const viaOther = await api.send(
      'GET',
      `${topic.partition(1 - partition).adminPath}/ledger/${ledgerId}/entry/${entryId}`,
    );

    expect(viaPartition.body).toMatchObject({ messageId: id, payload: 'x' });
    expect(viaOther.status).toBe(404);
  });

  it('produces to one partition addressed as name-partition-i, whatever the key', async () => {
    const topic = TopicRef.unique('direct');
    await api.createTopic(topic, 3);

    const ids = await api.produce(topic.partition(2), [{ payload: 'x', key: 'a' }, { payload: 'y' }]);

    expect(ids.map((id) => parseMessageId(id).partition)).toEqual([2, 2]);
    expect((await api.stats(topic.partition(2))).msgInCounter).toBe(2);
  });
});

describe('refused produce requests store nothing', () => {
  it('accepts a payload of exactly 256 KiB', async () => {
    const topic = TopicRef.unique('limit');

    const result = await api.send('POST', topic.producePath, {
      body: { messages: [{ payload: 'x'.repeat(MAX_PAYLOAD_BYTES) }] },
    });

    expect(result.status).toBe(200);
  });

  it.each([
    ['one byte over 256 KiB', 'x'.repeat(MAX_PAYLOAD_BYTES + 1)],
    ['over 256 KiB in UTF-8 bytes though under it in characters', 'é'.repeat(MAX_PAYLOAD_BYTES / 2 + 1)],
  ])('answers 413 for a payload %s', async (_label, payload) => {
    const topic = TopicRef.unique('toolarge');
    await api.createTopic(topic);
    await api.produceMany(topic, 1);
    const before = await storedState(topic);

    const result = await api.send('POST', topic.producePath, { body: { messages: [{ payload }] } });
    const after = await storedState(topic);

    expect(result.status).toBe(413);
    expect(result.body).toEqual({ reason: expect.stringContaining('bytes') });
    expect(after).toEqual(before);
  });

  it('answers 413 for an oversized message in a batch, storing none of the batch', async () => {
    const topic = TopicRef.unique('batch413');
    await api.createTopic(topic);
    const before = await storedState(topic);

    const result = await api.send('POST', topic.producePath, {
      body: { messages: [{ payload: 'ok' }, { payload: 'x'.repeat(MAX_PAYLOAD_BYTES + 1) }] },
    });
    const after = await storedState(topic);

    expect(result.status).toBe(413);
    expect(after).toEqual(before);
  });

  it('refuses a message whose properties make it larger than storage takes, storing nothing', async () => {
    // 30 properties of 16 000 characters: a 480 kB message with a 2-byte payload. DynamoDB
    // (and dynalite) refuse items over 400 KB, so the message cannot be stored as one entry.
    const topic = TopicRef.unique('bigprops');
    await api.createTopic(topic);
    await api.produceMany(topic, 1);
    const before = await storedState(topic);
    const properties = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`p${i}`, 'v'.repeat(16_000)]),
    );

    const result = await api.send('POST', topic.producePath, {
      body: { messages: [{ payload: 'ok', properties }] },
    });
    const after = await storedState(topic);

    expect.soft([400, 413]).toContain(result.status);
    expect(after).toEqual(before);
  });

  it.each([
    ['a body that is not JSON', '{"messages":'],
    ['no body', ''],
    ['a body without messages', '{}'],
    ['an empty message list', '{"messages":[]}'],
    ['messages that are not a list', '{"messages":{"payload":"x"}}'],
    ['a message without payload', '{"messages":[{"key":"k"}]}'],
    ['a payload that is not a string', '{"messages":[{"payload":42}]}'],
    ['a key that is not a string', '{"messages":[{"payload":"x","key":7}]}'],
    ['a property value that is not a string', '{"messages":[{"payload":"x","properties":{"a":1}}]}'],
    ['properties that are not an object', '{"messages":[{"payload":"x","properties":["a"]}]}'],
    ['a negative eventTime', '{"messages":[{"payload":"x","eventTime":-1}]}'],
    ['a fractional deliverAt', '{"messages":[{"payload":"x","deliverAt":1.5}]}'],
    ['a deliverAt given as a string', '{"messages":[{"payload":"x","deliverAt":"soon"}]}'],
    ['a negative deliverAfterMs', '{"messages":[{"payload":"x","deliverAfterMs":-5}]}'],
    ['both deliverAt and deliverAfterMs', '{"messages":[{"payload":"x","deliverAt":1,"deliverAfterMs":1}]}'],
    ['an unknown message field', '{"messages":[{"payload":"x","replicateTo":["eu"]}]}'],
    ['one bad message after a good one', '{"messages":[{"payload":"good"},{"payload":null}]}'],
  ])('answers 400 for %s', async (_label, rawBody) => {
    const topic = TopicRef.unique('bad');
    await api.createTopic(topic);
    await api.produceMany(topic, 1);
    const before = await storedState(topic);

    const result = await api.send('POST', topic.producePath, { rawBody });
    const after = await storedState(topic);

    expect(result.status).toBe(400);
    expect(result.body).toEqual({ reason: expect.any(String) });
    expect(after).toEqual(before);
  });

  it('does not create an unknown topic when the request is refused', async () => {
    const topic = TopicRef.unique('badauto');

    const result = await api.send('POST', topic.producePath, { rawBody: '{"messages":[]}' });
    const metadata = await api.send('GET', `${topic.adminPath}/partitions`);

    expect(result.status).toBe(400);
    expect(metadata.status).toBe(404);
  });
});
