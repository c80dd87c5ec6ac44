import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AdminApi,
  parseMessageId,
  SUPERUSER_ROLE,
  type SubscriptionType,
  TopicRef,
  tokenFor,
  uniqueRole,
} from '../support/admin-fixtures.ts';
import { makeDataDir, startEmbeddedProcess, TEST_TOKEN_SECRET } from '../support/embedded-process.ts';
import { hs256Token } from '../support/hs256-token.ts';

// PIP-423 `POST .../acknowledgeMessage` (v2 and v1) of issue 3, over real HTTP against the shared
// embedded stack (and one stack of its own for the restart).

const api = AdminApi.shared();

interface Fixture {
  readonly topic: TopicRef;
  readonly ledgerId: string;
  readonly ids: readonly string[];
}

/** A topic with the given subscriptions (Earliest) and `count` messages. */
async function topicWith(
  label: string,
  subscriptions: Record<string, SubscriptionType>,
  count = 3,
): Promise<Fixture> {
  const topic = TopicRef.unique(label);
  await api.createTopic(topic);
  for (const [name, type] of Object.entries(subscriptions))
    await api.createSubscription(topic, name, { type });
  const ids = await api.produceMany(topic, count);
  return { topic, ledgerId: parseMessageId(ids[0] as string).ledgerId, ids };
}

/** Everything an acknowledgement could change: every cursor and every backlog. */
async function cursorState(topic: TopicRef) {
  return { cursors: await api.cursors(topic), backlogs: await api.backlogs(topic) };
}

describe('acknowledgeMessage acknowledges', () => {
  it('on the named subscriptions only (204), leaving the others untouched', async () => {
    const { topic, ledgerId } = await topicWith('named', { a: 'Shared', b: 'Key_Shared', c: 'Shared' });

    const result = await api.acknowledge(topic, { ledgerId, entryId: '1', subscriptionNames: ['a', 'b'] });
    const { cursors, backlogs } = await cursorState(topic);

    expect(result.status).toBe(204);
    expect(result.text).toBe('');
    expect(backlogs).toEqual({ a: 2, b: 2, c: 3 });
    expect(cursors).toEqual({
      a: { markDelete: `${ledgerId}:-1`, individual: `[(${ledgerId}:0..${ledgerId}:1]]` },
      b: { markDelete: `${ledgerId}:-1`, individual: `[(${ledgerId}:0..${ledgerId}:1]]` },
      c: { markDelete: `${ledgerId}:-1`, individual: '[]' },
    });
  });

  it('on comma-separated subscription names', async () => {
    const { topic, ledgerId } = await topicWith('comma', { a: 'Shared', b: 'Shared', c: 'Shared' });

    const result = await api.acknowledge(topic, {
      ledgerId,
      entryId: '2',
      rawQuery: 'subscriptionNames=a,c',
    });
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(204);
    expect(backlogs).toEqual({ a: 2, b: 3, c: 2 });
  });

  it('on every subscription when none is named', async () => {
    const { topic, ledgerId } = await topicWith('all', { a: 'Shared', b: 'Key_Shared' });

    const result = await api.acknowledge(topic, { ledgerId, entryId: '0' });
    const { cursors, backlogs } = await cursorState(topic);

    expect(result.status).toBe(204);
    expect(backlogs).toEqual({ a: 2, b: 2 });
    expect(cursors.a).toEqual({ markDelete: `${ledgerId}:0`, individual: '[]' });
    expect(cursors.b).toEqual({ markDelete: `${ledgerId}:0`, individual: '[]' });
  });

  it('idempotently: a repeated call answers 204 and changes nothing', async () => {
    const { topic, ledgerId } = await topicWith('repeat', { a: 'Shared', b: 'Shared' });
    await api.acknowledge(topic, { ledgerId, entryId: '1', subscriptionNames: ['a'] });
    const before = await cursorState(topic);

    const again = await api.acknowledge(topic, { ledgerId, entryId: '1', subscriptionNames: ['a'] });
    const after = await cursorState(topic);

    expect(again.status).toBe(204);
    expect(after).toEqual(before);
    expect(after.backlogs).toEqual({ a: 2, b: 3 });
  });

  it('a message already behind the mark-delete position: 204, nothing changes', async () => {
    const { topic, ledgerId } = await topicWith('behind', { a: 'Shared' });
    await api.expectStatus(204, 'POST', `${topic.adminPath}/subscription/a/skip/2`);
    const before = await cursorState(topic);

    const result = await api.acknowledge(topic, { ledgerId, entryId: '0', subscriptionNames: ['a'] });
    const after = await cursorState(topic);

    expect(result.status).toBe(204);
    expect(after).toEqual(before);
  });

  it('on a subscription deleted and created again under the same name: the new one, never the old cursor', async () => {
    const { topic, ledgerId } = await topicWith('recreated', { a: 'Shared' }, 4);
    await api.acknowledge(topic, { ledgerId, entryId: '0', subscriptionNames: ['a'] });
    await api.acknowledge(topic, { ledgerId, entryId: '1', subscriptionNames: ['a'] });
    expect(await api.backlogs(topic)).toEqual({ a: 2 });

    await api.expectStatus(204, 'DELETE', `${topic.adminPath}/subscription/a`);
    await api.createSubscription(topic, 'a', { type: 'Shared' });
    const result = await api.acknowledge(topic, { ledgerId, entryId: '2', subscriptionNames: ['a'] });
    const { cursors, backlogs } = await cursorState(topic);

    expect(result.status).toBe(204);
    expect(backlogs).toEqual({ a: 3 });
    expect(cursors.a).toEqual({
      markDelete: `${ledgerId}:-1`,
      individual: `[(${ledgerId}:1..${ledgerId}:2]]`,
    });
  });

  it('moves the mark-delete position when the acknowledged message closes the gap', async () => {
    const { topic, ledgerId } = await topicWith('gap', { a: 'Shared' }, 4);
    await api.acknowledge(topic, { ledgerId, entryId: '1', subscriptionNames: ['a'] });
    await api.acknowledge(topic, { ledgerId, entryId: '3', subscriptionNames: ['a'] });

    await api.acknowledge(topic, { ledgerId, entryId: '0', subscriptionNames: ['a'] });
    const { cursors, backlogs } = await cursorState(topic);

    expect(cursors.a).toEqual({
      markDelete: `${ledgerId}:1`,
      individual: `[(${ledgerId}:2..${ledgerId}:3]]`,
    });
    expect(backlogs).toEqual({ a: 1 });
  });

  it('takes the message out of the subscription backlog seen by peek', async () => {
    const { topic, ledgerId, ids } = await topicWith('peek', { a: 'Shared' });

    await api.acknowledge(topic, { ledgerId, entryId: '0', subscriptionNames: ['a'] });
    const first = await api.send('GET', `${topic.adminPath}/subscription/a/position/1`);

    expect(first.body).toMatchObject({ messageId: ids[1] });
  });
});

describe('acknowledgeMessage refuses', () => {
  it.each([
    ['ledgerId missing', { entryId: '0' }],
    ['entryId missing', { ledgerId: 'L' }],
    ['both missing', {}],
    ['a negative ledgerId', { ledgerId: '-1', entryId: '0' }],
    ['a negative entryId', { ledgerId: 'L', entryId: '-1' }],
    ['a fractional entryId', { ledgerId: 'L', entryId: '0.5' }],
    ['an entryId in exponent notation', { ledgerId: 'L', entryId: '1e0' }],
    ['a non-numeric ledgerId', { ledgerId: 'one', entryId: '0' }],
    ['an empty entryId', { ledgerId: 'L', entryId: '' }],
    ['an entryId beyond 2^63-1', { ledgerId: 'L', entryId: '9223372036854775808' }],
  ])('412 for %s, acknowledging nothing', async (_label, params: { ledgerId?: string; entryId?: string }) => {
    const { topic, ledgerId } = await topicWith('badid', { a: 'Shared' });
    const before = await cursorState(topic);
    const query = {
      ...(params.ledgerId === undefined
        ? {}
        : { ledgerId: params.ledgerId === 'L' ? ledgerId : params.ledgerId }),
      ...(params.entryId === undefined ? {} : { entryId: params.entryId }),
      subscriptionNames: ['a'],
    };

    const result = await api.acknowledge(topic, query);
    const after = await cursorState(topic);

    expect(result.status).toBe(412);
    expect(result.body).toEqual({ reason: expect.stringMatching(/ledgerId|entryId/) });
    expect(after).toEqual(before);
  });

  it.each([
    'Exclusive',
    'Failover',
  ] as const)('412 when a named subscription is %s, acknowledging on no subscription at all', async (type) => {
    const { topic, ledgerId } = await topicWith('cumulative', {
      shared: 'Shared',
      strict: type,
      keyed: 'Key_Shared',
    });
    const before = await cursorState(topic);

    const result = await api.acknowledge(topic, {
      ledgerId,
      entryId: '0',
      subscriptionNames: ['shared', 'strict', 'keyed'],
    });
    const after = await cursorState(topic);

    expect(result.status).toBe(412);
    expect(result.body).toEqual({ reason: expect.stringContaining(type) });
    expect(after).toEqual(before);
    expect(after.backlogs).toEqual({ shared: 3, strict: 3, keyed: 3 });
  });

  it('404 for an unknown topic', async () => {
    const topic = TopicRef.unique('ghost');

    const result = await api.acknowledge(topic, { ledgerId: '1', entryId: '0' });

    expect(result.status).toBe(404);
    expect(result.body).toEqual({ reason: expect.stringContaining('not found') });
  });

  it('404 for an unknown subscription, acknowledging nothing on the known ones', async () => {
    const { topic, ledgerId } = await topicWith('nosub', { a: 'Shared' });
    const before = await cursorState(topic);

    const result = await api.acknowledge(topic, {
      ledgerId,
      entryId: '0',
      subscriptionNames: ['a', 'nobody'],
    });
    const after = await cursorState(topic);

    expect(result.status).toBe(404);
    expect(result.body).toEqual({ reason: expect.stringContaining('nobody') });
    expect(after).toEqual(before);
  });

  it('404 for positions that are not messages of this topic', async () => {
    const { topic, ledgerId } = await topicWith('notmine', { a: 'Shared' });
    const other = await topicWith('theirs', { a: 'Shared' });
    const before = await cursorState(topic);

    const results = {
      unwritten: await api.acknowledge(topic, { ledgerId, entryId: '3' }),
      farBeyond: await api.acknowledge(topic, { ledgerId, entryId: '9223372036854775807' }),
      otherTopicsLedger: await api.acknowledge(topic, { ledgerId: other.ledgerId, entryId: '0' }),
      unknownLedger: await api.acknowledge(topic, { ledgerId: '9000000000000', entryId: '0' }),
    };
    const after = await cursorState(topic);
    const otherAfter = await api.backlogs(other.topic);

    expect(Object.values(results).map((result) => result.status)).toEqual([404, 404, 404, 404]);
    expect(after).toEqual(before);
    expect(otherAfter).toEqual({ a: 3 });
  });

  it('405 on a non-persistent topic', async () => {
    const { topic, ledgerId } = await topicWith('nonpersistent', { a: 'Shared' });

    const result = await api.send(
      'POST',
      `${topic.nonPersistentAdminPath}/acknowledgeMessage?ledgerId=${ledgerId}&entryId=0`,
    );

    expect(result.status).toBe(405);
    expect(result.body).toEqual({ reason: expect.stringContaining('non-persistent') });
  });

  it.each([
    ['no token', undefined],
    ['a token with a bad signature', hs256Token({ sub: SUPERUSER_ROLE }, 'not-the-stack-secret-0123456789')],
    ['an expired token', tokenFor(SUPERUSER_ROLE, { expiresInSeconds: -1 })],
  ])('401 for %s, acknowledging nothing', async (_label, token) => {
    const { topic, ledgerId } = await topicWith('unauth', { a: 'Shared' });
    const before = await cursorState(topic);

    const result = await api.withToken(token).acknowledge(topic, { ledgerId, entryId: '0' });
    const after = await cursorState(topic);

    expect(result.status).toBe(401);
    expect(after).toEqual(before);
  });

  it('403 for a role holding produce and consume but not acknowledge_message', async () => {
    const { topic, ledgerId } = await topicWith('forbidden', { a: 'Shared' });
    const role = uniqueRole('consumer');
    await api.grant(topic, role, ['produce', 'consume']);
    const before = await cursorState(topic);

    const result = await api.as(role).acknowledge(topic, { ledgerId, entryId: '0' });
    const after = await cursorState(topic);

    expect(result.status).toBe(403);
    expect(result.body).toEqual({ reason: expect.stringContaining('acknowledge_message') });
    expect(after).toEqual(before);
  });
});

describe('acknowledgeMessage permissions', () => {
  it('204 for a role granted acknowledge_message on the topic', async () => {
    const { topic, ledgerId } = await topicWith('granted', { a: 'Shared' });
    const role = uniqueRole('operator');
    await api.grant(topic, role, ['acknowledge_message']);

    const result = await api.as(role).acknowledge(topic, { ledgerId, entryId: '0' });
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(204);
    expect(backlogs).toEqual({ a: 2 });
  });

  it('204 for a role granted acknowledge_message on the namespace, 403 on another namespace', async () => {
    const { topic, ledgerId } = await topicWith('nsgranted', { a: 'Shared' });
    const other = await topicWith('nsother', { a: 'Shared' });
    const role = uniqueRole('nsoperator');
    await api.grantOnNamespace(topic.namespace, role, ['acknowledge_message']);

    const here = await api.as(role).acknowledge(topic, { ledgerId, entryId: '0' });
    const there = await api.as(role).acknowledge(other.topic, { ledgerId: other.ledgerId, entryId: '0' });

    expect(here.status).toBe(204);
    expect(there.status).toBe(403);
    expect(await api.backlogs(other.topic)).toEqual({ a: 3 });
  });
});

describe('acknowledgeMessage v1', () => {
  it('acknowledges through /admin/v1/persistent/{property}/standalone/{namespace}/{topic} (204)', async () => {
    const { topic, ledgerId } = await topicWith('v1', { a: 'Shared', b: 'Shared' });

    const result = await api.send(
      'POST',
      `${topic.v1AdminPath('standalone')}/acknowledgeMessage?ledgerId=${ledgerId}&entryId=1&subscriptionNames=b`,
    );
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(204);
    expect(backlogs).toEqual({ a: 3, b: 2 });
  });

  it('404 for another cluster, acknowledging nothing', async () => {
    const { topic, ledgerId } = await topicWith('v1other', { a: 'Shared' });

    const result = await api.send(
      'POST',
      `${topic.v1AdminPath('us-west')}/acknowledgeMessage?ledgerId=${ledgerId}&entryId=0`,
    );
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(404);
    expect(result.body).toEqual({ reason: expect.stringContaining('us-west') });
    expect(backlogs).toEqual({ a: 3 });
  });

  it('412 for a missing entryId on v1 too', async () => {
    const { topic, ledgerId } = await topicWith('v1bad', { a: 'Shared' });

    const result = await api.send(
      'POST',
      `${topic.v1AdminPath('standalone')}/acknowledgeMessage?ledgerId=${ledgerId}`,
    );

    expect(result.status).toBe(412);
  });
});

describe('acknowledgeMessage on a partitioned topic', () => {
  // Java String.hashCode % 3: 'c' -> 0, 'a' -> 1, 'b' -> 2.
  async function partitioned(label: string) {
    const topic = TopicRef.unique(label);
    await api.createTopic(topic, 3);
    await api.createSubscription(topic, 's1');
    await api.createSubscription(topic, 's2');
    const ids = await api.produce(topic, [
      { payload: 'zero', key: 'c' },
      { payload: 'one', key: 'a' },
      { payload: 'two', key: 'b' },
      { payload: 'two again', key: 'b' },
    ]);
    return { topic, ids: ids.map(parseMessageId) };
  }

  async function partitionBacklogs(topic: TopicRef) {
    return Promise.all([0, 1, 2].map((i) => api.backlogs(topic.partition(i))));
  }

  it('reaches the partition that owns the ledger when called on the partitioned topic', async () => {
    const { topic, ids } = await partitioned('parted');
    const target = ids[2]!;

    const result = await api.acknowledge(topic, {
      ledgerId: target.ledgerId,
      entryId: target.entryId,
      subscriptionNames: ['s1'],
    });
    const backlogs = await partitionBacklogs(topic);
    const total = await api.backlogs(topic);

    expect(ids.map((id) => id.partition)).toEqual([0, 1, 2, 2]);
    expect(result.status).toBe(204);
    expect(backlogs).toEqual([
      { s1: 1, s2: 1 },
      { s1: 1, s2: 1 },
      { s1: 1, s2: 2 },
    ]);
    expect(total).toEqual({ s1: 3, s2: 4 });
  });

  it('acknowledges on every subscription of the owning partition when none is named', async () => {
    const { topic, ids } = await partitioned('partedall');
    const target = ids[1]!;

    const result = await api.acknowledge(topic, { ledgerId: target.ledgerId, entryId: target.entryId });
    const backlogs = await partitionBacklogs(topic);

    expect(result.status).toBe(204);
    expect(backlogs).toEqual([
      { s1: 1, s2: 1 },
      { s1: 0, s2: 0 },
      { s1: 2, s2: 2 },
    ]);
  });

  it('acknowledges on a partition addressed by name, and answers 404 for a message of another partition', async () => {
    const { topic, ids } = await partitioned('partedname');
    const onTwo = ids[3]!;
    const before = await partitionBacklogs(topic);

    const own = await api.acknowledge(topic.partition(2), {
      ledgerId: onTwo.ledgerId,
      entryId: onTwo.entryId,
    });
    const foreign = await api.acknowledge(topic.partition(0), { ledgerId: onTwo.ledgerId, entryId: '0' });
    const after = await partitionBacklogs(topic);

    expect(own.status).toBe(204);
    expect(foreign.status).toBe(404);
    expect(after).toEqual([before[0], before[1], { s1: 1, s2: 1 }]);
  });
});

describe('acknowledgeMessage dry run', () => {
  it('answers 200 with each subscription view of the message and changes nothing', async () => {
    const { topic, ledgerId } = await topicWith('dry', { acked: 'Shared', waiting: 'Key_Shared' });
    await api.acknowledge(topic, { ledgerId, entryId: '1', subscriptionNames: ['acked'] });
    const before = await cursorState(topic);

    const result = await api.acknowledge(topic, { ledgerId, entryId: '1', dryRun: true });
    const after = await cursorState(topic);

    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      messageId: `${ledgerId}:1:-1`,
      subscriptions: { acked: { state: 'already acknowledged' }, waiting: { state: 'in backlog' } },
    });
    expect(after).toEqual(before);
  });

  it("reports a delayed message as 'delayed' with its deliverAt", async () => {
    const topic = TopicRef.unique('drydelayed');
    await api.createTopic(topic);
    await api.createSubscription(topic, 'a');
    const deliverAt = Date.now() + 3_600_000;
    const [id] = await api.produce(topic, [{ payload: 'later', deliverAt }]);
    const { ledgerId, entryId } = parseMessageId(id as string);

    const result = await api.acknowledge(topic, {
      ledgerId,
      entryId,
      subscriptionNames: ['a'],
      dryRun: true,
    });
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(200);
    expect(result.body).toEqual({ messageId: id, subscriptions: { a: { state: 'delayed', deliverAt } } });
    expect(backlogs).toEqual({ a: 1 });
  });

  it('refuses as the real call would (412 for an Exclusive subscription)', async () => {
    const { topic, ledgerId } = await topicWith('dryexclusive', { a: 'Exclusive' });

    const result = await api.acknowledge(topic, {
      ledgerId,
      entryId: '0',
      subscriptionNames: ['a'],
      dryRun: true,
    });

    expect(result.status).toBe(412);
  });

  it('answers 400 for a dryRun that is not true or false', async () => {
    const { topic, ledgerId } = await topicWith('drybad', { a: 'Shared' });

    const result = await api.acknowledge(topic, { ledgerId, entryId: '0', rawQuery: 'dryRun=maybe' });
    const backlogs = await api.backlogs(topic);

    expect(result.status).toBe(400);
    expect(backlogs).toEqual({ a: 3 });
  });
});

describe('acknowledgeMessage audit log', () => {
  it('records who acknowledged what, when, on which subscriptions, with the outcome, newest first', async () => {
    const { topic, ledgerId } = await topicWith('audit', { a: 'Shared', b: 'Shared', x: 'Exclusive' });
    const role = uniqueRole('auditor');
    await api.grant(topic, role, ['acknowledge_message']);
    const startMs = Date.now();
    await api.as(role).acknowledge(topic, { ledgerId, entryId: '0', subscriptionNames: ['a', 'b'] });
    await api.acknowledge(topic, { ledgerId, entryId: '1', subscriptionNames: ['x'] });
    await api.acknowledge(topic, { ledgerId, entryId: '2', subscriptionNames: ['a'], dryRun: true });
    const endMs = Date.now();

    const result = await api.send('GET', `${topic.adminPath}/acknowledgeMessage/audit`);
    const records = result.body as { atMs: number; role: string; outcome: string }[];

    expect(result.status).toBe(200);
    expect(records).toEqual([
      expect.objectContaining({
        role: SUPERUSER_ROLE,
        topic: topic.name,
        position: `${ledgerId}:2`,
        subscriptions: ['a'],
        dryRun: true,
      }),
      expect.objectContaining({
        role: SUPERUSER_ROLE,
        topic: topic.name,
        position: `${ledgerId}:1`,
        subscriptions: ['x'],
        outcome: expect.stringMatching(/^refused/),
      }),
      expect.objectContaining({
        role,
        topic: topic.name,
        position: `${ledgerId}:0`,
        subscriptions: ['a', 'b'],
        outcome: 'acknowledged',
        dryRun: false,
      }),
    ]);
    for (const record of records) {
      expect(record.atMs).toBeGreaterThanOrEqual(startMs - 1_000);
      expect(record.atMs).toBeLessThanOrEqual(endMs + 1_000);
    }
  });

  it('is read on the partitioned topic for acknowledgements made through its partitions', async () => {
    const topic = TopicRef.unique('auditparted');
    await api.createTopic(topic, 2);
    await api.createSubscription(topic, 's');
    const [id] = await api.produce(topic, [{ payload: 'x', key: 'a' }]);
    const { ledgerId, entryId, partition } = parseMessageId(id as string);
    await api.acknowledge(topic.partition(partition), { ledgerId, entryId });

    const result = await api.send('GET', `${topic.adminPath}/acknowledgeMessage/audit`);

    expect(result.body).toEqual([
      expect.objectContaining({
        topic: topic.name,
        position: `${ledgerId}:${entryId}`,
        outcome: 'acknowledged',
      }),
    ]);
  });

  it('is refused (403) to a role without acknowledge_message', async () => {
    const { topic } = await topicWith('auditforbidden', { a: 'Shared' });
    const role = uniqueRole('curious');
    await api.grant(topic, role, ['consume', 'produce']);

    const result = await api.as(role).send('GET', `${topic.adminPath}/acknowledgeMessage/audit`);

    expect(result.status).toBe(403);
  });
});

describe('acknowledgeMessage durability', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('keeps an acknowledgement across a restart of the embedded stack', async () => {
    const dataDir = await makeDataDir();
    dirs.push(dataDir);
    const first = await startEmbeddedProcess({ dataDir });
    const topic = TopicRef.unique('restart');
    let before: { cursors: unknown; backlogs: Record<string, number> };
    try {
      const own = new AdminApi(first.url, tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET }));
      await own.createTopic(topic);
      await own.createSubscription(topic, 'a');
      await own.createSubscription(topic, 'b');
      const [id] = await own.produceMany(topic, 3);
      const { ledgerId } = parseMessageId(id as string);
      await own.expectStatus(
        204,
        'POST',
        `${topic.adminPath}/acknowledgeMessage?ledgerId=${ledgerId}&entryId=1&subscriptionNames=a`,
      );
      before = { cursors: await own.cursors(topic), backlogs: await own.backlogs(topic) };
    } finally {
      await first.stop('SIGTERM');
    }

    const second = await startEmbeddedProcess({ dataDir });
    let after: typeof before;
    try {
      const own = new AdminApi(second.url, tokenFor(SUPERUSER_ROLE, { secret: TEST_TOKEN_SECRET }));
      after = { cursors: await own.cursors(topic), backlogs: await own.backlogs(topic) };
    } finally {
      await second.stop('SIGTERM');
    }

    expect(before.backlogs).toEqual({ a: 2, b: 3 });
    expect(after).toEqual(before);
  });
});

describe('acknowledgeMessage guards', () => {
  it('refuses an empty subscriptionNames (400) instead of acknowledging on every subscription', async () => {
    const { topic, ledgerId } = await topicWith('empty-names', { a: 'Shared', b: 'Shared' });
    const before = await cursorState(topic);

    const result = await api.acknowledge(topic, { ledgerId, entryId: '0', rawQuery: 'subscriptionNames=' });

    expect(result.status).toBe(400);
    expect(result.body).toEqual({ reason: expect.stringContaining('subscriptionNames is empty') });
    expect(await cursorState(topic)).toEqual(before);
  });

  it('checks the permission before the ids (403, not 412) and leaves no audit record for that role', async () => {
    const { topic } = await topicWith('authz-first', { a: 'Shared' });
    const role = uniqueRole('no-ack');

    const result = await api.as(role).acknowledge(topic, { ledgerId: 'x', entryId: '-1' });
    const audit = await api.expectStatus(200, 'GET', `${topic.adminPath}/acknowledgeMessage/audit`);

    expect(result.status).toBe(403);
    expect((audit.body as { role: string }[]).filter((record) => record.role === role)).toEqual([]);
  });
});
