import { describe, expect, it } from 'vitest';
import { AdminApi, NamespaceRef, parseMessageId, TopicRef } from '../support/admin-fixtures.ts';

// The topic and subscription admin API of issue 3, over real HTTP against the shared embedded
// stack. Every test works in a namespace of its own, so the suites can run in parallel.

const api = AdminApi.shared();

describe('topics', () => {
  it('creates a non-partitioned topic (204), lists it in its namespace, and refuses to create it twice (409)', async () => {
    const topic = TopicRef.unique('plain');

    const created = await api.send('PUT', topic.adminPath);
    const again = await api.send('PUT', topic.adminPath);
    const listed = await api.send('GET', topic.namespace.adminPath());
    const metadata = await api.send('GET', `${topic.adminPath}/partitions`);

    expect(created.status).toBe(204);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ reason: expect.stringContaining('already exists') });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([topic.name]);
    expect(metadata.body).toEqual({ partitions: 0 });
  });

  it('creates a partitioned topic from a body N (204), answers {"partitions":N} and lists each partition', async () => {
    const topic = TopicRef.unique('parted');

    const created = await api.send('PUT', `${topic.adminPath}/partitions`, { body: 3 });
    const metadata = await api.send('GET', `${topic.adminPath}/partitions`);
    const listed = await api.send('GET', topic.namespace.adminPath());
    const again = await api.send('PUT', `${topic.adminPath}/partitions`, { body: 2 });
    const asPlain = await api.send('PUT', topic.adminPath);

    expect(created.status).toBe(204);
    expect(metadata.status).toBe(200);
    expect(metadata.body).toEqual({ partitions: 3 });
    expect(listed.body).toEqual([0, 1, 2].map((i) => topic.partition(i).name));
    expect(again.status).toBe(409);
    expect(asPlain.status).toBe(409);
  });

  it.each([
    ['zero', '0'],
    ['a negative count', '-2'],
    ['past the limit of 1000', '1001'],
  ])("answers Pulsar's 406 for a partition count that is %s, and creates nothing", async (_label, rawBody) => {
    const topic = TopicRef.unique('outofrange');

    const result = await api.send('PUT', `${topic.adminPath}/partitions`, { rawBody });
    const metadata = await api.send('GET', `${topic.adminPath}/partitions`);

    expect(result.status).toBe(406);
    expect(result.body).toEqual({ reason: expect.stringMatching(/^Number of partitions should be/) });
    expect(metadata.status).toBe(404);
  });

  it.each([
    ['a fraction', '1.5'],
    ['a string', '"3"'],
    ['no body', ''],
    ['invalid JSON', 'three'],
  ])('answers 400 for a partition count that is %s, and creates nothing', async (_label, rawBody) => {
    const topic = TopicRef.unique('badparts');

    const result = await api.send('PUT', `${topic.adminPath}/partitions`, { rawBody });
    const metadata = await api.send('GET', `${topic.adminPath}/partitions`);

    expect(result.status).toBe(400);
    expect(result.body).toEqual({ reason: expect.any(String) });
    expect(metadata.status).toBe(404);
  });

  it('answers 405 naming the allowed methods for a known path asked with another method, 404 for an unknown path', async () => {
    const topic = TopicRef.unique('methods');
    await api.createTopic(topic);

    const wrongOnTopic = await api.send('PATCH', topic.adminPath);
    const wrongOnClusters = await api.send('DELETE', '/admin/v2/clusters');
    const unknown = await api.send('GET', `${topic.adminPath}/no-such-thing/at-all`);

    expect(wrongOnTopic.status).toBe(405);
    expect(wrongOnTopic.body).toEqual({
      reason: expect.stringMatching(/^Method PATCH is not allowed on .*: use .*PUT/),
    });
    expect(wrongOnClusters.status).toBe(405);
    expect(wrongOnClusters.body).toEqual({ reason: expect.stringContaining('use GET') });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ reason: expect.stringMatching(/^No route for GET/) });
  });

  it('lists only the topics of the namespace asked for, sorted', async () => {
    const namespace = NamespaceRef.unique('listing');
    const other = NamespaceRef.unique('listing');
    await api.createTopic(namespace.topic('b'));
    await api.createTopic(namespace.topic('a'));
    await api.createTopic(other.topic('c'));

    const listed = await api.send('GET', namespace.adminPath());

    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([namespace.topic('a').name, namespace.topic('b').name]);
  });

  it('deletes a topic with its subscriptions and messages (204); afterwards it is unknown (404)', async () => {
    const topic = TopicRef.unique('deleted');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    await api.produceMany(topic, 2);

    const deleted = await api.send('DELETE', topic.adminPath);
    const stats = await api.send('GET', `${topic.adminPath}/stats`);
    const listed = await api.send('GET', topic.namespace.adminPath());
    const again = await api.send('DELETE', topic.adminPath);

    expect(deleted.status).toBe(204);
    expect(stats.status).toBe(404);
    expect(listed.body).toEqual([]);
    expect(again.status).toBe(404);
  });

  it('recreates a deleted topic empty: no subscriptions, no messages', async () => {
    const topic = TopicRef.unique('reborn');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    await api.produceMany(topic, 2);
    await api.expectStatus(204, 'DELETE', topic.adminPath);

    await api.createTopic(topic);
    const stats = await api.stats(topic);
    const subscriptions = await api.send('GET', `${topic.adminPath}/subscriptions`);

    expect(stats.msgInCounter).toBe(0);
    expect(stats.subscriptions).toEqual({});
    expect(subscriptions.body).toEqual([]);
  });

  it('deletes a topic with a backlog within seconds; created again it starts on new ledgers, empty, and the old messages are never read', async () => {
    const topic = TopicRef.unique('reborn-ledgers');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    const old: string[] = [];
    for (let batch = 0; batch < 10; batch++) old.push(...(await api.produceMany(topic, 100, `old${batch}-`)));
    const oldLedgers = new Set(old.map((id) => id.split(':')[0]));

    const started = performance.now();
    await api.expectStatus(204, 'DELETE', topic.adminPath);
    const deleteMs = performance.now() - started;
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub', { initialPosition: 'Earliest' });
    const [fresh] = await api.produceMany(topic, 1, 'new');
    const internal = await api.internalStats(topic);
    const stats = await api.stats(topic);
    const peeked = await api.send('GET', `${topic.adminPath}/subscription/sub/position/1`);

    expect(deleteMs).toBeLessThan(5_000);
    expect(oldLedgers.has(String(fresh).split(':')[0])).toBe(false);
    for (const ledger of internal.ledgers) expect(oldLedgers.has(String(ledger.ledgerId))).toBe(false);
    expect(stats.msgInCounter).toBe(1);
    expect(stats.subscriptions.sub?.msgBacklog).toBe(1);
    expect(peeked.status).toBe(200);
    expect(peeked.body).toMatchObject({ messageId: fresh, payload: 'new0' });
  });

  it("lists a namespace's partitioned topics by their own names (GET .../partitioned, pulsar-admin list-partitioned-topics)", async () => {
    const namespace = NamespaceRef.unique('plist');
    const parted = namespace.topic('parted');
    await api.createTopic(parted, 2);
    await api.createTopic(namespace.topic('plain'));
    await api.createTopic(namespace.topic('another'), 3);

    const listed = await api.send('GET', `${namespace.adminPath()}/partitioned`);
    const empty = await api.send('GET', `${NamespaceRef.unique('pnone').adminPath()}/partitioned`);

    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([namespace.topic('another').name, parted.name]);
    expect(empty.body).toEqual([]);
  });

  it('deletes a partitioned topic with every partition', async () => {
    const topic = TopicRef.unique('delparted');
    await api.createTopic(topic, 2);

    const deleted = await api.send('DELETE', topic.adminPath);
    const partitionStats = await api.send('GET', `${topic.partition(1).adminPath}/stats`);
    const listed = await api.send('GET', topic.namespace.adminPath());

    expect(deleted.status).toBe(204);
    expect(partitionStats.status).toBe(404);
    expect(listed.body).toEqual([]);
  });

  it.each([
    ['GET', 'stats'],
    ['GET', 'internalStats'],
    ['GET', 'subscriptions'],
    ['GET', 'partitions'],
  ])('answers 404 with a reason for %s /%s of an unknown topic', async (method, suffix) => {
    const topic = TopicRef.unique('ghost');

    const result = await api.send(method, `${topic.adminPath}/${suffix}`);

    expect(result.status).toBe(404);
    expect(result.body).toEqual({ reason: expect.stringContaining('not found') });
  });
});

describe('subscriptions', () => {
  it('creates a subscription of the type asked (204), lists it, and refuses it twice (409)', async () => {
    const topic = TopicRef.unique('subs');
    await api.createTopic(topic);

    const created = await api.send(
      'PUT',
      `${topic.adminPath}/subscription/billing?subscriptionType=Key_Shared`,
      {
        body: { initialPosition: 'Earliest' },
      },
    );
    const again = await api.send('PUT', `${topic.adminPath}/subscription/billing?subscriptionType=Shared`, {
      body: { initialPosition: 'Earliest' },
    });
    const listed = await api.send('GET', `${topic.adminPath}/subscriptions`);
    const stats = await api.stats(topic);

    expect(created.status).toBe(204);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ reason: expect.stringContaining('already exists') });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual(['billing']);
    expect(stats.subscriptions.billing?.type).toBe('Key_Shared');
  });

  it.each([
    ['non-partitioned', 0],
    ['partitioned', 3],
  ])('creates a subscription once under concurrent creations of a %s topic: one 204, the others 409', async (_label, partitions) => {
    const topic = TopicRef.unique('subrace');
    await api.createTopic(topic, partitions);
    await api.produceMany(partitions > 0 ? topic.partition(0) : topic, 2);

    const results = await Promise.all(
      ['Earliest', 'Latest', 'Earliest', 'Latest', 'Earliest', 'Latest'].map((initialPosition) =>
        api.send('PUT', `${topic.adminPath}/subscription/sub?subscriptionType=Shared`, {
          body: { initialPosition },
        }),
      ),
    );

    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([204, 409, 409, 409, 409, 409]);
    expect(results.filter((result) => result.status === 409).map((result) => result.body)).toEqual(
      Array(5).fill({ reason: expect.stringContaining('already exists') }),
    );
    expect(await api.send('GET', `${topic.adminPath}/subscriptions`)).toMatchObject({ body: ['sub'] });
  });

  it('starts an Earliest subscription before the backlog and a Latest one after it', async () => {
    const topic = TopicRef.unique('initial');
    await api.createTopic(topic);
    const ids = await api.produceMany(topic, 3);
    const { ledgerId } = parseMessageId(ids[0] as string);

    await api.createSubscription(topic, 'early', { initialPosition: 'Earliest' });
    await api.createSubscription(topic, 'late', { initialPosition: 'Latest' });
    const stats = await api.stats(topic);
    const internal = await api.internalStats(topic);

    expect(stats.subscriptions.early?.msgBacklog).toBe(3);
    expect(stats.subscriptions.late?.msgBacklog).toBe(0);
    expect(internal.cursors.early?.markDeletePosition).toBe(`${ledgerId}:-1`);
    expect(internal.cursors.late?.markDeletePosition).toBe(`${ledgerId}:2`);
  });

  it('creates a subscription on every partition of a partitioned topic', async () => {
    const topic = TopicRef.unique('subparted');
    await api.createTopic(topic, 2);

    await api.createSubscription(topic, 'everywhere');
    const onPartition = await api.send('GET', `${topic.partition(1).adminPath}/subscriptions`);
    const again = await api.send('PUT', `${topic.partition(0).adminPath}/subscription/everywhere`, {
      body: { initialPosition: 'Earliest' },
    });

    expect(onPartition.body).toEqual(['everywhere']);
    expect(again.status).toBe(409);
  });

  it.each([
    ['an unknown subscription type', '?subscriptionType=shared', { initialPosition: 'Earliest' }],
    ['an unknown initial position', '?subscriptionType=Shared', { initialPosition: 'Middle' }],
    ['a body that is not an object', '?subscriptionType=Shared', ['Earliest']],
  ])('answers 400 for %s and creates nothing', async (_label, query, body) => {
    const topic = TopicRef.unique('badsub');
    await api.createTopic(topic);

    const result = await api.send('PUT', `${topic.adminPath}/subscription/s${query}`, { body });
    const listed = await api.send('GET', `${topic.adminPath}/subscriptions`);

    expect(result.status).toBe(400);
    expect(listed.body).toEqual([]);
  });

  it('answers 404 for a subscription on an unknown topic', async () => {
    const topic = TopicRef.unique('nosuchtopic');

    const result = await api.send('PUT', `${topic.adminPath}/subscription/s?subscriptionType=Shared`);

    expect(result.status).toBe(404);
  });

  it('deletes a subscription (204), then answers 404 for it', async () => {
    const topic = TopicRef.unique('unsub');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'keep');
    await api.createSubscription(topic, 'drop');

    const deleted = await api.send('DELETE', `${topic.adminPath}/subscription/drop`);
    const listed = await api.send('GET', `${topic.adminPath}/subscriptions`);
    const again = await api.send('DELETE', `${topic.adminPath}/subscription/drop`);

    expect(deleted.status).toBe(204);
    expect(listed.body).toEqual(['keep']);
    expect(again.status).toBe(404);
  });

  it('recreates a deleted subscription with a fresh cursor', async () => {
    const topic = TopicRef.unique('resub');
    await api.createTopic(topic);
    await api.createSubscription(topic, 's');
    await api.produceMany(topic, 3);
    await api.expectStatus(204, 'POST', `${topic.adminPath}/subscription/s/skip/3`);
    await api.expectStatus(204, 'DELETE', `${topic.adminPath}/subscription/s`);

    await api.createSubscription(topic, 's', { initialPosition: 'Earliest' });
    const backlogs = await api.backlogs(topic);

    expect(backlogs).toEqual({ s: 3 });
  });
});

describe('stats and internalStats', () => {
  it('reports counters per subscription', async () => {
    const topic = TopicRef.unique('stats');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'shared', { type: 'Shared' });
    await api.createSubscription(topic, 'failover', { type: 'Failover' });
    await api.produceMany(topic, 4);

    const stats = await api.stats(topic);

    expect(stats.msgInCounter).toBe(4);
    expect(stats.subscriptions).toEqual({
      shared: expect.objectContaining({
        type: 'Shared',
        msgBacklog: 4,
        unackedMessages: 0,
        msgRedeliverCounter: 0,
      }),
      failover: expect.objectContaining({
        type: 'Failover',
        msgBacklog: 4,
        unackedMessages: 0,
        msgRedeliverCounter: 0,
      }),
    });
  });

  it('reports ledgers and cursors in internalStats', async () => {
    const topic = TopicRef.unique('internal');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    const ids = await api.produceMany(topic, 5);
    const { ledgerId } = parseMessageId(ids[0] as string);
    await api.expectStatus(204, 'POST', `${topic.adminPath}/subscription/sub/skipByMessageIds`, {
      body: { type: 'messageId', messageIds: [{ ledgerId: Number(ledgerId), entryId: 2 }] },
    });

    const internal = await api.internalStats(topic);

    expect(internal.entriesAddedCounter).toBe(5);
    expect(internal.ledgers).toEqual([expect.objectContaining({ ledgerId: Number(ledgerId), entries: 5 })]);
    expect(internal.cursors.sub).toMatchObject({
      markDeletePosition: `${ledgerId}:-1`,
      readPosition: `${ledgerId}:0`,
      individuallyDeletedMessages: `[(${ledgerId}:1..${ledgerId}:2]]`,
      // Pulsar's relation: entries added less the backlog (one of the five was skipped).
      messagesConsumedCounter: 1,
    });
    expect(internal.ledgers[0]).not.toHaveProperty('size');
  });

  it('sums a partitioned topic and addresses each partition as name-partition-i', async () => {
    const topic = TopicRef.unique('pstats');
    await api.createTopic(topic, 2);
    await api.createSubscription(topic, 'sub');
    // Java String.hashCode: 'a' = 97 (partition 1 of 2), 'b' = 98 (partition 0).
    await api.produce(topic, [
      { payload: '1', key: 'a' },
      { payload: '2', key: 'a' },
      { payload: '3', key: 'a' },
      { payload: '4', key: 'b' },
    ]);

    const total = await api.stats(topic);
    const first = await api.stats(topic.partition(0));
    const second = await api.stats(topic.partition(1));
    const internal = await api.send('GET', `${topic.partition(1).adminPath}/internalStats`);
    const beyond = await api.send('GET', `${topic.partition(2).adminPath}/stats`);

    expect(total.msgInCounter).toBe(4);
    expect(total.metadata).toEqual({ partitions: 2 });
    expect(total.subscriptions.sub?.msgBacklog).toBe(4);
    expect(first.msgInCounter).toBe(1);
    expect(first.subscriptions.sub?.msgBacklog).toBe(1);
    expect(second.msgInCounter).toBe(3);
    expect(second.subscriptions.sub?.msgBacklog).toBe(3);
    expect((internal.body as { ledgers: { entries: number }[] }).ledgers.map((l) => l.entries)).toEqual([3]);
    expect(beyond.status).toBe(404);
  });
});

describe('reading messages', () => {
  it('peeks the n-th message of a backlog without consuming it', async () => {
    const topic = TopicRef.unique('peek');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    const ids = await api.produce(topic, [
      { payload: 'first' },
      { payload: 'second', key: 'k', properties: { a: '1' } },
    ]);

    const second = await api.send('GET', `${topic.adminPath}/subscription/sub/position/2`);
    const first = await api.send('GET', `${topic.adminPath}/subscription/sub/position/1`);
    const backlogs = await api.backlogs(topic);

    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      messageId: ids[1],
      payload: 'second',
      key: 'k',
      properties: { a: '1' },
    });
    expect(first.body).toMatchObject({ messageId: ids[0], payload: 'first' });
    expect(backlogs).toEqual({ sub: 2 });
  });

  it('peeks past acknowledged messages', async () => {
    const topic = TopicRef.unique('peekgap');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    const ids = await api.produceMany(topic, 3);
    const { ledgerId } = parseMessageId(ids[0] as string);
    await api.expectStatus(204, 'POST', `${topic.adminPath}/subscription/sub/skipByMessageIds`, {
      body: { messageIds: [{ ledgerId, entryId: '0' }] },
    });

    const first = await api.send('GET', `${topic.adminPath}/subscription/sub/position/1`);

    expect(first.body).toMatchObject({ messageId: ids[1], payload: 'm1' });
  });

  it.each([
    ['0', 400],
    ['x', 400],
    ['3', 404],
  ])('answers position/%s of a 2-message backlog with %i', async (position, status) => {
    const topic = TopicRef.unique('peekbad');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    await api.produceMany(topic, 2);

    const result = await api.send('GET', `${topic.adminPath}/subscription/sub/position/${position}`);

    expect(result.status).toBe(status);
    expect(result.body).toEqual({ reason: expect.any(String) });
  });

  it('answers 404 when peeking an unknown subscription', async () => {
    const topic = TopicRef.unique('peeknosub');
    await api.createTopic(topic);
    await api.produceMany(topic, 1);

    const result = await api.send('GET', `${topic.adminPath}/subscription/nobody/position/1`);

    expect(result.status).toBe(404);
  });

  it('gets a message by ledger and entry with every field', async () => {
    const topic = TopicRef.unique('byid');
    await api.createTopic(topic);
    const [id] = await api.produce(topic, [
      { payload: 'héllo', key: 'k1', properties: { x: 'y' }, eventTime: 1_700_000_000_000, deliverAt: 1_000 },
    ]);
    const { ledgerId, entryId } = parseMessageId(id as string);

    const result = await api.send('GET', `${topic.adminPath}/ledger/${ledgerId}/entry/${entryId}`);

    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      messageId: id,
      payload: 'héllo',
      key: 'k1',
      properties: { x: 'y' },
      eventTime: 1_700_000_000_000,
      deliverAt: 1_000,
      publishTime: expect.any(Number),
    });
  });

  it('answers 404 for an entry not written and for a ledger of another topic, 400 for a malformed id', async () => {
    const topic = TopicRef.unique('byidbad');
    const other = TopicRef.unique('byidother');
    await api.createTopic(topic);
    const [id] = await api.produceMany(topic, 1);
    const [otherId] = await api.produceMany(other, 1);
    const mine = parseMessageId(id as string);
    const theirs = parseMessageId(otherId as string);

    const unwritten = await api.send('GET', `${topic.adminPath}/ledger/${mine.ledgerId}/entry/1`);
    const foreign = await api.send('GET', `${topic.adminPath}/ledger/${theirs.ledgerId}/entry/0`);
    const malformed = await api.send('GET', `${topic.adminPath}/ledger/${mine.ledgerId}/entry/-1`);

    expect(unwritten.status).toBe(404);
    expect(foreign.status).toBe(404);
    expect(malformed.status).toBe(400);
  });
});

describe('skip', () => {
  it('skips the first n messages of a backlog (204) and moves the mark-delete position', async () => {
    const topic = TopicRef.unique('skip');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    await api.createSubscription(topic, 'other');
    const ids = await api.produceMany(topic, 3);
    const { ledgerId } = parseMessageId(ids[0] as string);

    const skipped = await api.send('POST', `${topic.adminPath}/subscription/sub/skip/2`);
    const backlogs = await api.backlogs(topic);
    const cursors = await api.cursors(topic);

    expect(skipped.status).toBe(204);
    expect(backlogs).toEqual({ sub: 1, other: 3 });
    expect(cursors.sub).toEqual({ markDelete: `${ledgerId}:1`, individual: '[]' });
  });

  it('skips over holes: skip counts unacknowledged messages only', async () => {
    const topic = TopicRef.unique('skipholes');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    const ids = await api.produceMany(topic, 5);
    const { ledgerId } = parseMessageId(ids[0] as string);
    await api.expectStatus(204, 'POST', `${topic.adminPath}/subscription/sub/skipByMessageIds`, {
      body: { messageIds: [{ ledgerId, entryId: 1 }] },
    });

    await api.expectStatus(204, 'POST', `${topic.adminPath}/subscription/sub/skip/2`);
    const cursors = await api.cursors(topic);
    const backlogs = await api.backlogs(topic);

    expect(cursors.sub).toEqual({ markDelete: `${ledgerId}:2`, individual: '[]' });
    expect(backlogs).toEqual({ sub: 2 });
  });

  it('concurrent skips each skip their own messages, as Pulsar serialises them on the cursor', async () => {
    const topic = TopicRef.unique('skipconcurrent');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    await api.produceMany(topic, 10);

    const results = await Promise.all(
      [1, 2, 3, 4].map(() => api.send('POST', `${topic.adminPath}/subscription/sub/skip/2`)),
    );
    const backlogs = await api.backlogs(topic);

    expect(results.map((result) => result.status)).toEqual([204, 204, 204, 204]);
    expect(backlogs).toEqual({ sub: 2 });
  });

  it("answers 405 on a partitioned topic's name, as Pulsar, and skips on a partition's name", async () => {
    const topic = TopicRef.unique('skippartitioned');
    await api.createTopic(topic, 2);
    await api.createSubscription(topic, 'sub');
    await api.produceMany(topic, 6);
    const before = await api.stats(topic);

    const refused = await api.send('POST', `${topic.adminPath}/subscription/sub/skip/1`);

    expect(refused.status).toBe(405);
    expect(refused.body).toEqual({ reason: expect.stringContaining('partitioned topic') });
    expect(await api.backlogs(topic)).toEqual({ sub: before.subscriptions.sub?.msgBacklog });
    const partition = topic.partition(0);
    const partitionBacklog = (await api.backlogs(partition)).sub as number;
    await api.expectStatus(204, 'POST', `${partition.adminPath}/subscription/sub/skip/1`);
    expect(await api.backlogs(partition)).toEqual({ sub: partitionBacklog - 1 });
    expect(await api.backlogs(topic)).toEqual({ sub: (before.subscriptions.sub?.msgBacklog ?? 0) - 1 });
  });

  it('skipping more than the backlog empties it', async () => {
    const topic = TopicRef.unique('skipall');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    await api.produceMany(topic, 2);

    const skipped = await api.send('POST', `${topic.adminPath}/subscription/sub/skip/10`);
    const backlogs = await api.backlogs(topic);

    expect(skipped.status).toBe(204);
    expect(backlogs).toEqual({ sub: 0 });
  });

  it.each([
    ['a negative count', 'skip/-1', 400],
    ['a count that is not a number', 'skip/all', 400],
  ])('answers %s with %i', async (_label, suffix, status) => {
    const topic = TopicRef.unique('skipbad');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');

    const result = await api.send('POST', `${topic.adminPath}/subscription/sub/${suffix}`);

    expect(result.status).toBe(status);
  });

  it('answers 404 when skipping on an unknown subscription or topic', async () => {
    const topic = TopicRef.unique('skip404');
    await api.createTopic(topic);

    const noSubscription = await api.send('POST', `${topic.adminPath}/subscription/nobody/skip/1`);
    const noTopic = await api.send('POST', `${TopicRef.unique('skip404').adminPath}/subscription/s/skip/1`);

    expect(noSubscription.status).toBe(404);
    expect(noTopic.status).toBe(404);
  });

  it('skips messages by id, given as numbers or numeric strings (204)', async () => {
    const topic = TopicRef.unique('skipids');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    const ids = await api.produceMany(topic, 5);
    const { ledgerId } = parseMessageId(ids[0] as string);

    const result = await api.send('POST', `${topic.adminPath}/subscription/sub/skipByMessageIds`, {
      body: {
        type: 'messageId',
        messageIds: [
          { ledgerId: Number(ledgerId), entryId: 1 },
          { ledgerId: String(ledgerId), entryId: '3' },
        ],
      },
    });
    const holes = await api.cursors(topic);
    await api.expectStatus(204, 'POST', `${topic.adminPath}/subscription/sub/skipByMessageIds`, {
      body: { messageIds: [{ ledgerId, entryId: '0' }] },
    });
    const advanced = await api.cursors(topic);
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(204);
    expect(holes.sub).toEqual({
      markDelete: `${ledgerId}:-1`,
      individual: `[(${ledgerId}:0..${ledgerId}:1],(${ledgerId}:2..${ledgerId}:3]]`,
    });
    expect(advanced.sub).toEqual({
      markDelete: `${ledgerId}:1`,
      individual: `[(${ledgerId}:2..${ledgerId}:3]]`,
    });
    expect(backlogs).toEqual({ sub: 2 });
  });

  it.each([
    ['not an object', '[1,2]'],
    ['without messageIds', '{"type":"messageId"}'],
    ['with an empty list', '{"messageIds":[]}'],
    ['of another type', '{"type":"byTime","messageIds":[{"ledgerId":1,"entryId":0}]}'],
    ['with an id missing its entryId', '{"messageIds":[{"ledgerId":1}]}'],
    ['with a negative id', '{"messageIds":[{"ledgerId":1,"entryId":-1}]}'],
    ['with a fractional id', '{"messageIds":[{"ledgerId":1,"entryId":0.5}]}'],
    ['with a non-numeric string id', '{"messageIds":[{"ledgerId":"one","entryId":"0"}]}'],
    ['with an id that is not a number or string', '{"messageIds":[{"ledgerId":true,"entryId":0}]}'],
    ['that is not JSON', '{messageIds:'],
  ])('answers 400 for a skipByMessageIds body %s, acknowledging nothing', async (_label, rawBody) => {
    const topic = TopicRef.unique('skipidsbad');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    await api.produceMany(topic, 2);

    const result = await api.send('POST', `${topic.adminPath}/subscription/sub/skipByMessageIds`, {
      rawBody,
    });
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(400);
    expect(result.body).toEqual({ reason: expect.any(String) });
    expect(backlogs).toEqual({ sub: 2 });
  });

  it('answers 404 when one id is not a message of the topic, acknowledging none of them', async () => {
    const topic = TopicRef.unique('skipids404');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'sub');
    const ids = await api.produceMany(topic, 2);
    const { ledgerId } = parseMessageId(ids[0] as string);

    const result = await api.send('POST', `${topic.adminPath}/subscription/sub/skipByMessageIds`, {
      body: {
        messageIds: [
          { ledgerId, entryId: 0 },
          { ledgerId, entryId: 7 },
        ],
      },
    });
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(404);
    expect(backlogs).toEqual({ sub: 2 });
  });

  it('skips by id on a partitioned topic in the partition that owns each ledger', async () => {
    const topic = TopicRef.unique('skipidsparted');
    await api.createTopic(topic, 2);
    await api.createSubscription(topic, 'sub');
    const ids = await api.produce(topic, [
      { payload: 'p1', key: 'a' },
      { payload: 'p0', key: 'b' },
    ]);
    const onOne = parseMessageId(ids[0] as string);
    const onZero = parseMessageId(ids[1] as string);

    const result = await api.send('POST', `${topic.adminPath}/subscription/sub/skipByMessageIds`, {
      body: { messageIds: [{ ledgerId: onOne.ledgerId, entryId: onOne.entryId }] },
    });
    const zero = await api.stats(topic.partition(0));
    const one = await api.stats(topic.partition(1));

    expect(result.status).toBe(204);
    expect([onOne.partition, onZero.partition]).toEqual([1, 0]);
    expect(one.subscriptions.sub?.msgBacklog).toBe(0);
    expect(zero.subscriptions.sub?.msgBacklog).toBe(1);
  });
});
