import { describe, expect, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';

// Issue 24, criterion 4, over HTTP: PIP-423's acknowledgeMessage with many ids in one call,
// validated all or nothing, a per-id dry-run report, one audit record with every id.

const admin = AdminApi.shared();

interface AuditBody {
  readonly position: string;
  readonly subscriptions: string[];
  readonly dryRun: boolean;
  readonly outcome: string;
}

async function topicWith(count: number, partitions = 0): Promise<{ topic: TopicRef; ids: string[] }> {
  const topic = TopicRef.unique('ackmany');
  await admin.createTopic(topic, partitions);
  await admin.createSubscription(topic, 'sub', { type: 'Shared', initialPosition: 'Earliest' });
  await admin.createSubscription(topic, 'other', { type: 'Shared', initialPosition: 'Earliest' });
  const ids = await admin.produce(
    topic,
    Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, key: `k${i}` })),
  );
  return { topic, ids };
}

const ack = (topic: TopicRef, query: string, messageIds: unknown) =>
  admin.send('POST', `${topic.adminPath}/acknowledgeMessage${query}`, { body: { messageIds } });

async function audit(topic: TopicRef): Promise<AuditBody[]> {
  return (await admin.expectStatus(200, 'GET', `${topic.adminPath}/acknowledgeMessage/audit`))
    .body as AuditBody[];
}

async function backlogOf(topic: TopicRef, subscription: string): Promise<number> {
  const stats = (
    await admin.expectStatus(200, 'GET', `${topic.adminPath}/partitioned-stats`).catch(() => undefined)
  )?.body as { subscriptions: Record<string, { msgBacklog: number }> } | undefined;
  return (stats ?? (await admin.stats(topic))).subscriptions[subscription]?.msgBacklog ?? -1;
}

describe('acknowledgeMessage with many ids', () => {
  it('acknowledges them all on the named subscription, audited as one operation', async () => {
    const { topic, ids } = await topicWith(5);
    const chosen = [ids[0], ids[2], ids[4]] as string[];

    const result = await ack(topic, '?subscriptionNames=sub', chosen);

    expect(result.status).toBe(204);
    expect(await admin.backlogs(topic)).toEqual({ sub: 2, other: 5 });
    const [record] = await audit(topic);
    expect(record).toMatchObject({
      position: chosen.join(','),
      subscriptions: ['sub'],
      dryRun: false,
      outcome: 'acknowledged 3',
    });
  });

  it('one bad id refuses the call (412) and acknowledges nothing; a missing one (404) too', async () => {
    const { topic, ids } = await topicWith(3);
    const malformed = await ack(topic, '', [ids[0], 'x:1', ids[1]]);
    expect(malformed.status).toBe(412);
    expect((malformed.body as { reason: string }).reason).toMatch(
      /1 of 3 ids .*'x:1'.*nothing was acknowledged/,
    );
    const [ledgerId] = (ids[0] as string).split(':');
    const missing = await ack(topic, '', [ids[0], `${ledgerId}:999`]);
    expect(missing.status).toBe(404);
    expect((missing.body as { reason: string }).reason).toMatch(
      new RegExp(`${ledgerId}:999.*nothing was acknowledged`),
    );
    expect(await admin.backlogs(topic)).toEqual({ sub: 3, other: 3 });
    const records = await audit(topic);
    expect(records.map((r) => r.outcome.slice(0, 8))).toEqual(['refused:', 'refused:']);
  });

  it("an id naming another partition than its ledger's is refused (412), nothing acknowledged", async () => {
    const { topic, ids } = await topicWith(2);
    const [ledgerId, entryId] = (ids[1] as string).split(':');
    const misplaced = await ack(topic, '', [ids[0], `${ledgerId}:${entryId}:5`]);
    expect(misplaced.status).toBe(412);
    expect((misplaced.body as { reason: string }).reason).toMatch(
      new RegExp(`'${ledgerId}:${entryId}:5' names partition 5.*nothing was acknowledged`),
    );
    expect(await admin.backlogs(topic)).toEqual({ sub: 2, other: 2 });
    const partitioned = await topicWith(4, 2);
    const [first] = partitioned.ids as [string];
    const [l, e, p] = first.split(':');
    const other = ack(partitioned.topic, '', [`${l}:${e}:${p === '0' ? 1 : 0}`]);
    expect((await other).status).toBe(412);
  });

  it('dry run: a report per id and subscription, nothing changed', async () => {
    const { topic, ids } = await topicWith(2);
    await ack(topic, '?subscriptionNames=other', [ids[1]]);
    const result = await ack(topic, '?dryRun=true', ids);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      messages: [
        {
          messageId: ids[0],
          subscriptions: { sub: { state: 'in backlog' }, other: { state: 'in backlog' } },
        },
        {
          messageId: ids[1],
          subscriptions: { sub: { state: 'in backlog' }, other: { state: 'already acknowledged' } },
        },
      ],
    });
    expect(await admin.backlogs(topic)).toEqual({ sub: 2, other: 1 });
  });

  it('a partitioned topic: ids of several partitions in one call', async () => {
    const { topic, ids } = await topicWith(6, 3);
    expect(new Set(ids.map((id) => id.split(':')[2])).size).toBe(3);
    expect((await ack(topic, '?subscriptionNames=sub', ids.slice(0, 4))).status).toBe(204);
    expect(await backlogOf(topic, 'sub')).toBe(2);
  });

  it.each([
    ['an empty list', []],
    ['not strings', [1, 2]],
    ['more than 1000', Array.from({ length: 1001 }, (_, i) => `1:${i}`)],
  ])('400 for %s', async (_, messageIds) => {
    const { topic } = await topicWith(1);
    const result = await ack(topic, '', messageIds);
    expect(result.status).toBe(400);
    expect((result.body as { reason: string }).reason).toMatch(/messageIds/);
  });

  it('400 when both the query ids and a body name messages', async () => {
    const { topic, ids } = await topicWith(1);
    const [ledgerId, entryId] = (ids[0] as string).split(':');
    const result = await ack(topic, `?ledgerId=${ledgerId}&entryId=${entryId}`, ids);
    expect(result.status).toBe(400);
    expect((result.body as { reason: string }).reason).toMatch(/not both/);
  });
});
