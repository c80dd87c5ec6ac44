import { describe, expect, it } from 'vitest';
import { AdminApi, TopicRef } from '../support/admin-fixtures.ts';

// Issue 24, what a new user met: a typo in acknowledgeMessage's query, a page token carried to
// another listing, and a refusal of 1,000 ids whose reason listed every one of them.

const admin = AdminApi.shared();
const MINUTE = 60_000;

async function delayedTopic(prefix: string, subscriptions: readonly string[], count: number) {
  const topic = TopicRef.unique(prefix);
  await admin.createTopic(topic);
  for (const name of subscriptions)
    await admin.createSubscription(topic, name, { type: 'Shared', initialPosition: 'Earliest' });
  const deliverAt = Date.now() + 10 * MINUTE;
  const ids = await admin.produce(
    topic,
    Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, deliverAt: deliverAt + i })),
  );
  return { topic, ids };
}

const reasonOf = (body: unknown) => (body as { reason: string }).reason;

describe('acknowledgeMessage refuses unknown query parameters', () => {
  it('a typo (subscriptionName) answers 400 naming it and acknowledges nothing; authoritative is taken', async () => {
    const { topic, ids } = await delayedTopic('acktypo', ['sub', 'other'], 2);
    const [ledgerId, entryId] = (ids[0] as string).split(':');
    const path = `${topic.adminPath}/acknowledgeMessage?ledgerId=${ledgerId}&entryId=${entryId}`;

    const typo = await admin.send('POST', `${path}&subscriptionName=sub`);
    const many = await admin.send('POST', `${topic.adminPath}/acknowledgeMessage?subscriptionName=sub`, {
      body: { messageIds: ids },
    });
    const backlogs = await admin.backlogs(topic);
    const authoritative = await admin.send('POST', `${path}&subscriptionNames=sub&authoritative=true`);

    expect([typo.status, reasonOf(typo.body)]).toEqual([
      400,
      expect.stringMatching(
        /^Unknown query parameter subscriptionName; this path takes ledgerId, entryId, subscriptionNames/,
      ),
    ]);
    expect(many.status).toBe(400);
    expect(backlogs).toEqual({ sub: 2, other: 2 });
    expect(authoritative.status).toBe(204);
    expect(await admin.backlogs(topic)).toEqual({ sub: 1, other: 2 });
  });
});

describe('a page token goes on only with the listing that gave it', () => {
  it('refuses a scheduled token on another topic, another subscription or the pending path', async () => {
    const { topic } = await delayedTopic('tokena', ['sub', 'other'], 3);
    const { topic: elsewhere } = await delayedTopic('tokenb', ['sub'], 3);
    const first = (
      await admin.expectStatus(200, 'GET', `${topic.adminPath}/subscription/sub/scheduled?limit=1`)
    ).body as { nextPageToken: string };
    const token = first.nextPageToken;

    const same = await admin.send(
      'GET',
      `${topic.adminPath}/subscription/sub/scheduled?limit=1&pageToken=${token}`,
    );
    const otherTopic = await admin.send(
      'GET',
      `${elsewhere.adminPath}/subscription/sub/scheduled?pageToken=${token}`,
    );
    const otherSub = await admin.send(
      'GET',
      `${topic.adminPath}/subscription/other/scheduled?pageToken=${token}`,
    );
    const pending = await admin.send('GET', `${topic.adminPath}/subscription/sub/pending?pageToken=${token}`);

    expect(same.status).toBe(200);
    for (const refused of [otherTopic, otherSub, pending]) {
      expect([refused.status, reasonOf(refused.body)]).toEqual([
        400,
        expect.stringMatching(/was given by another listing/),
      ]);
    }
  });
});

describe('a refusal of many ids stays short', () => {
  it('1,000 unknown ids: the reason counts them and names the first 10', async () => {
    const { topic } = await delayedTopic('ackshort', ['sub'], 1);
    const unknown = Array.from({ length: 1_000 }, (_, i) => `999999:${i}`);
    const malformed = Array.from({ length: 1_000 }, (_, i) => `x${'y'.repeat(100)}${i}`);

    const missing = await admin.send('POST', `${topic.adminPath}/acknowledgeMessage`, {
      body: { messageIds: unknown },
    });
    const bad = await admin.send('POST', `${topic.adminPath}/acknowledgeMessage`, {
      body: { messageIds: malformed },
    });

    expect(missing.status).toBe(404);
    expect(reasonOf(missing.body)).toMatch(
      /^1000 of 1000 messages not found in topic .*: 999999:0, 999999:1, .*999999:9 and 990 more; nothing was acknowledged$/,
    );
    expect(reasonOf(missing.body).length).toBeLessThan(400);
    expect(bad.status).toBe(412);
    expect(reasonOf(bad.body)).toMatch(
      /^1000 of 1000 ids are not .*'xyyy.*\.\.\.', .* and 990 more; nothing/,
    );
    expect(reasonOf(bad.body).length).toBeLessThan(1_000);
  });
});
