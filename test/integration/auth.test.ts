import { describe, expect, inject, it } from 'vitest';
import { type TokenRefusal, tokenRefusalReasons } from '../../shared/domain/token-refusal.ts';
import {
  AdminApi,
  type AuthAction,
  NamespaceRef,
  parseMessageId,
  SUPERUSER_ROLE,
  TopicRef,
  tokenFor,
  uniqueRole,
} from '../support/admin-fixtures.ts';
import { base64url, hs256Token } from '../support/hs256-token.ts';
import { sendRaw } from '../support/raw-http.ts';

// Authentication (bearer tokens, role = sub; the shared stack verifies HS256) and authorization
// (superuser, or an action granted on the topic or its namespace) of issues 3 and 12, over real
// HTTP against the shared stack.

const api = AdminApi.shared();

/** An HS256 token over any claims, signed with the shared stack's secret. */
function signedRaw(claims: unknown): string {
  return hs256Token(claims, inject('acklineTokenSecret'));
}

/** A topic with one Shared subscription `sub` (Earliest) and two messages. */
async function topicWithBacklog(label: string): Promise<{ topic: TopicRef; ledgerId: string }> {
  const topic = TopicRef.unique(label);
  await api.createTopic(topic);
  await api.createSubscription(topic, 'sub', { type: 'Shared' });
  const [id] = await api.produceMany(topic, 2);
  return { topic, ledgerId: parseMessageId(id as string).ledgerId };
}

/** One call per action, each needing exactly that action (or a superuser). */
function actionCalls(
  topic: TopicRef,
  ledgerId: string,
): Record<AuthAction, (as: AdminApi) => Promise<number>> {
  return {
    produce: async (as) =>
      (await as.send('POST', topic.producePath, { body: { messages: [{ payload: 'p' }] } })).status,
    consume: async (as) => (await as.send('POST', `${topic.adminPath}/subscription/sub/skip/0`)).status,
    acknowledge_message: async (as) =>
      (await as.acknowledge(topic, { ledgerId, entryId: '0', subscriptionNames: ['sub'], dryRun: true }))
        .status,
  };
}

describe('authentication', () => {
  const expiredAdmin = tokenFor(SUPERUSER_ROLE, { expiresInSeconds: -60 });
  const header = base64url({ alg: 'HS256', typ: 'JWT' });
  const adminClaims = base64url({ sub: SUPERUSER_ROLE });
  const goodSignature = (tokenFor(SUPERUSER_ROLE).split('.')[2] as string).split('').reverse().join('');

  const nowS = () => Math.floor(Date.now() / 1000);

  it.each<[string, () => string | undefined, TokenRefusal]>([
    ['no token', () => undefined, 'missing'],
    [
      'a token signed with another secret',
      () => hs256Token({ sub: SUPERUSER_ROLE }, 'another-secret-0123456789'),
      'signature',
    ],
    [
      'a token whose signature was tampered with',
      () => `${header}.${adminClaims}.${goodSignature}`,
      'signature',
    ],
    ['an expired token', () => expiredAdmin, 'expired'],
    [
      'a token not valid for an hour',
      () => signedRaw({ sub: SUPERUSER_ROLE, nbf: nowS() + 3600 }),
      'notYetValid',
    ],
    [
      'an unsigned token (alg none)',
      () => `${base64url({ alg: 'none', typ: 'JWT' })}.${adminClaims}.`,
      'algorithm',
    ],
    [
      'a token in another algorithm (HS512)',
      () => hs256Token({ sub: SUPERUSER_ROLE }, inject('acklineTokenSecret'), { alg: 'HS512' }),
      'algorithm',
    ],
    ['a correctly signed token with an empty subject', () => signedRaw({ sub: '' }), 'noRole'],
    ['a correctly signed token without a subject', () => signedRaw({ role: SUPERUSER_ROLE }), 'noRole'],
    [
      'a correctly signed token with a string exp',
      () => signedRaw({ sub: SUPERUSER_ROLE, exp: 'never' }),
      'malformed',
    ],
    ['a malformed token', () => 'not.a.jwt', 'malformed'],
    ['a token that is no JWS at all', () => 'opaque-api-key-0123456789', 'malformed'],
  ])('answers 401 naming the check for %s, on admin and produce routes, without echoing it', async (_label, tokenOf, refusal) => {
    const token = tokenOf();
    const topic = TopicRef.unique('auth401');
    await api.createTopic(topic);
    const as = api.withToken(token);

    const results = await Promise.all([
      as.send('GET', `${topic.adminPath}/stats`),
      as.send('PUT', TopicRef.unique('auth401').adminPath),
      as.send('POST', topic.producePath, { body: { messages: [{ payload: 'x' }] } }),
      as.acknowledge(topic, { ledgerId: '1', entryId: '0' }),
    ]);
    const stats = await api.stats(topic);

    for (const result of results) {
      expect(result.status).toBe(401);
      expect(result.body).toEqual({ reason: tokenRefusalReasons[refusal] });
      for (const part of (token ?? '').split('.').filter((part: string) => part.length > 3)) {
        expect(JSON.stringify(result.body)).not.toContain(part);
      }
    }
    expect(stats.msgInCounter).toBe(0);
  });

  it('answers 401 naming the missing token for a request without an Authorization header', async () => {
    const path = TopicRef.unique('noheader').namespace.adminPath();

    const response = await fetch(`${api.url}${path}`);

    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ reason: tokenRefusalReasons.missing });
  });

  it('answers 401 for a valid token sent with another scheme than Bearer', async () => {
    const path = TopicRef.unique('basic').namespace.adminPath();

    const basic = await fetch(`${api.url}${path}`, {
      headers: { authorization: `Basic ${tokenFor(SUPERUSER_ROLE)}` },
    });
    const bearer = await fetch(`${api.url}${path}`, {
      headers: { authorization: `Bearer ${tokenFor(SUPERUSER_ROLE)}` },
    });

    expect(basic.status).toBe(401);
    expect(await basic.json()).toEqual({ reason: tokenRefusalReasons.missing });
    expect(bearer.status).toBe(200);
  });

  it('accepts a hand-signed token with the stack secret (the refusals above are not about signing)', async () => {
    const result = await api
      .withToken(signedRaw({ sub: SUPERUSER_ROLE }))
      .send('PUT', TopicRef.unique('raw').adminPath);

    expect(result.status).toBe(204);
  });

  it('accepts a token that expires in the future', async () => {
    const topic = TopicRef.unique('notexpired');

    const result = await api
      .withToken(tokenFor(SUPERUSER_ROLE, { expiresInSeconds: 600 }))
      .send('PUT', topic.adminPath);

    expect(result.status).toBe(204);
  });
});

// The gateway keeps the authorizer's answer per Authorization value (AUTHORIZER_RESULT_TTL_SECONDS,
// as API Gateway does): what a kept answer cannot see, the handlers check on every request.
describe('a kept authorizer answer', () => {
  it('stops serving a token once it expires, within the cache TTL', async () => {
    const token = tokenFor(uniqueRole('expiring'), { expiresInSeconds: 2 });
    const path = TopicRef.unique('expiring').namespace.adminPath();
    const as = api.withToken(token);
    const exp = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).exp as number;

    const before = await as.send('GET', path);
    await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 50));
    const after = await as.send('GET', path);

    expect(before.status).toBe(403); // authenticated (a role without grants), and its answer kept
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ reason: tokenRefusalReasons.expired });
  });

  it('starts serving a token at its nbf, within the cache TTL', async () => {
    const nbf = Math.floor(Date.now() / 1000) + 2;
    const token = signedRaw({ sub: uniqueRole('later'), nbf });
    const path = TopicRef.unique('later').namespace.adminPath();
    const as = api.withToken(token);

    const before = await as.send('GET', path);
    await new Promise((resolve) => setTimeout(resolve, nbf * 1000 - Date.now() + 50));
    const after = await as.send('GET', path);

    expect(before.status).toBe(401);
    expect(before.body).toEqual({ reason: tokenRefusalReasons.notYetValid });
    expect(after.status).toBe(403); // authenticated now (a role without grants), from the kept answer
  });

  it('refuses two Authorization headers even when the token alone was answered before', async () => {
    const token = tokenFor(SUPERUSER_ROLE);
    const path = TopicRef.unique('twoheaders').namespace.adminPath();
    const send = (values: string[]) =>
      sendRaw(api.url, { method: 'GET', target: path, headers: values.map((v) => ['Authorization', v]) });

    const alone = await send([`Bearer ${token}`]);
    const twice = await send([`Bearer ${token}`, `Bearer ${token}`]);
    const afterAnother = await send(['Bearer not.a.jwt', `Bearer ${token}`]);

    expect(alone.status).toBe(200);
    for (const response of [twice, afterAnother]) {
      expect(response.status).toBe(401);
      expect(JSON.parse(response.text)).toEqual({ reason: tokenRefusalReasons.ambiguous });
    }
  });
});

describe('authorization', () => {
  it('lets the superuser role admin do everything without a grant', async () => {
    const { topic, ledgerId } = await topicWithBacklog('super');
    const calls = actionCalls(topic, ledgerId);

    const statuses = await Promise.all(Object.values(calls).map((callAs) => callAs(api)));

    expect(statuses).toEqual([200, 204, 200]);
  });

  it.each([
    'Admin',
    'admin ',
    'administrator',
  ])('does not treat the role %j as the superuser admin', async (role) => {
    const topic = TopicRef.unique('notsuper');

    const result = await api.as(role).send('PUT', topic.adminPath);

    expect(result.status).toBe(403);
  });

  it('answers 403 with a reason for every action a role without grants tries', async () => {
    const { topic, ledgerId } = await topicWithBacklog('nogrant');
    const stranger = api.as(uniqueRole('stranger'));

    const statuses = await Promise.all(
      Object.values(actionCalls(topic, ledgerId)).map((callAs) => callAs(stranger)),
    );
    const reads = await Promise.all([
      stranger.send('GET', `${topic.adminPath}/stats`),
      stranger.send('GET', `${topic.adminPath}/internalStats`),
      stranger.send('GET', `${topic.adminPath}/subscriptions`),
      stranger.send('GET', `${topic.adminPath}/subscription/sub/position/1`),
      stranger.send('GET', `${topic.adminPath}/ledger/${ledgerId}/entry/0`),
      stranger.send('GET', `${topic.adminPath}/acknowledgeMessage/audit`),
    ]);
    const stats = await api.stats(topic);

    expect(statuses).toEqual([403, 403, 403]);
    for (const read of reads) {
      expect(read.status).toBe(403);
      expect(read.body).toEqual({ reason: expect.stringContaining('not allowed') });
    }
    expect(stats.msgInCounter).toBe(2);
  });

  it.each([
    ['produce', [200, 403, 403]],
    ['consume', [403, 204, 403]],
    ['acknowledge_message', [403, 403, 200]],
  ] as const)('a topic grant of %s allows exactly that action', async (action, expected) => {
    const { topic, ledgerId } = await topicWithBacklog('grant');
    const role = uniqueRole(action);
    await api.grant(topic, role, [action]);

    const statuses = await Promise.all(
      Object.values(actionCalls(topic, ledgerId)).map((callAs) => callAs(api.as(role))),
    );

    expect(statuses).toEqual(expected);
  });

  it('lets a role with consume read stats, subscriptions and messages', async () => {
    const { topic, ledgerId } = await topicWithBacklog('reader');
    const role = uniqueRole('reader');
    await api.grant(topic, role, ['consume']);
    const reader = api.as(role);

    const results = await Promise.all([
      reader.send('GET', `${topic.adminPath}/stats`),
      reader.send('GET', `${topic.adminPath}/internalStats`),
      reader.send('GET', `${topic.adminPath}/subscriptions`),
      reader.send('GET', `${topic.adminPath}/subscription/sub/position/1`),
      reader.send('GET', `${topic.adminPath}/ledger/${ledgerId}/entry/0`),
    ]);

    expect(results.map((result) => result.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('gives a role nothing through a grant to another role', async () => {
    const { topic, ledgerId } = await topicWithBacklog('otherrole');
    await api.grant(topic, uniqueRole('granted'), ['produce', 'consume', 'acknowledge_message']);

    const statuses = await Promise.all(
      Object.values(actionCalls(topic, ledgerId)).map((callAs) => callAs(api.as(uniqueRole('ungranted')))),
    );

    expect(statuses).toEqual([403, 403, 403]);
  });

  it('lists topic grants (GET) and revokes them (DELETE 204), after which the role is refused', async () => {
    const { topic, ledgerId } = await topicWithBacklog('revoke');
    const role = uniqueRole('revoked');
    const other = uniqueRole('kept');
    await api.grant(topic, role, ['consume', 'produce']);
    await api.grant(topic, other, ['acknowledge_message']);
    const calls = actionCalls(topic, ledgerId);

    const listed = await api.send('GET', `${topic.adminPath}/permissions`);
    const beforeRevoke = await calls.produce(api.as(role));
    const revoked = await api.send('DELETE', `${topic.adminPath}/permissions/${role}`);
    const afterRevoke = await calls.produce(api.as(role));
    const listedAfter = await api.send('GET', `${topic.adminPath}/permissions`);

    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ [role]: ['consume', 'produce'], [other]: ['acknowledge_message'] });
    expect(beforeRevoke).toBe(200);
    expect(revoked.status).toBe(204);
    expect(afterRevoke).toBe(403);
    expect(listedAfter.body).toEqual({ [other]: ['acknowledge_message'] });
  });

  it('replaces a role grant with a new one', async () => {
    const { topic, ledgerId } = await topicWithBacklog('replace');
    const role = uniqueRole('replaced');
    await api.grant(topic, role, ['produce']);

    await api.grant(topic, role, ['consume']);
    const statuses = await Promise.all(
      Object.values(actionCalls(topic, ledgerId)).map((callAs) => callAs(api.as(role))),
    );

    expect(statuses).toEqual([403, 204, 403]);
  });

  it('covers every partition with a grant on the partitioned topic', async () => {
    const topic = TopicRef.unique('grantparted');
    await api.createTopic(topic, 2);
    const role = uniqueRole('partitions');
    await api.grant(topic, role, ['produce']);

    const result = await api.as(role).send('POST', topic.partition(1).producePath, {
      body: { messages: [{ payload: 'x' }] },
    });

    expect(result.status).toBe(200);
  });

  it.each([
    ['non-partitioned', 0],
    ['partitioned', 2],
  ])('deletes a %s topic with its grants, as Pulsar: a topic created again under the name has none', async (_label, partitions) => {
    const topic = TopicRef.unique('grantdeleted');
    await api.createTopic(topic, partitions);
    const role = uniqueRole('stale');
    await api.grant(topic, role, ['produce']);

    await api.expectStatus(204, 'DELETE', partitions > 0 ? `${topic.adminPath}/partitions` : topic.adminPath);
    await api.createTopic(topic, partitions);
    const listed = await api.send('GET', `${topic.adminPath}/permissions`);
    const produced = await api
      .as(role)
      .send('POST', (partitions > 0 ? topic.partition(0) : topic).producePath, {
        body: { messages: [{ payload: 'x' }] },
      });

    expect(listed.body).toEqual({});
    expect(produced.status).toBe(403);
  });

  it.each([
    ['not a JSON array', '{"actions":["produce"]}'],
    ['an unknown action', '["produce","delete_everything"]'],
    ['an action that is not a string', '[1]'],
  ])('answers 400 for a grant body that is %s', async (_label, rawBody) => {
    const topic = TopicRef.unique('badgrant');
    await api.createTopic(topic);
    const role = uniqueRole('bad');

    const result = await api.send('POST', `${topic.adminPath}/permissions/${role}`, { rawBody });
    const listed = await api.send('GET', `${topic.adminPath}/permissions`);

    expect(result.status).toBe(400);
    expect(listed.body).toEqual({});
  });
});

describe('namespace grants', () => {
  it('gives an action on every topic of the namespace, and nothing on another namespace', async () => {
    const { topic, ledgerId } = await topicWithBacklog('nsgrant');
    const sibling = topic.namespace.topic('sibling');
    const elsewhere = await topicWithBacklog('nsother');
    const role = uniqueRole('ns');

    const granted = await api.send('POST', `${topic.namespace.permissionsPath}/${role}`, {
      body: ['produce', 'acknowledge_message'],
    });
    const as = api.as(role);
    const here = actionCalls(topic, ledgerId);
    const there = actionCalls(elsewhere.topic, elsewhere.ledgerId);
    const statuses = {
      produce: await here.produce(as),
      acknowledge: await here.acknowledge_message(as),
      consume: await here.consume(as),
      siblingProduce: (await as.send('POST', sibling.producePath, { body: { messages: [{ payload: 'x' }] } }))
        .status,
      otherProduce: await there.produce(as),
      otherAcknowledge: await there.acknowledge_message(as),
    };

    expect(granted.status).toBe(204);
    expect(statuses).toEqual({
      produce: 200,
      acknowledge: 200,
      consume: 403,
      siblingProduce: 200,
      otherProduce: 403,
      otherAcknowledge: 403,
    });
  });

  it('lists namespace grants (GET) and revokes them (DELETE 204)', async () => {
    const namespace = NamespaceRef.unique('nslist');
    const topic = namespace.topic('t');
    await api.createTopic(topic);
    const role = uniqueRole('nsrole');
    await api.grantOnNamespace(namespace, role, ['produce']);

    const listed = await api.send('GET', namespace.permissionsPath);
    const revoked = await api.send('DELETE', `${namespace.permissionsPath}/${role}`);
    const listedAfter = await api.send('GET', namespace.permissionsPath);
    const produce = await api
      .as(role)
      .send('POST', topic.producePath, { body: { messages: [{ payload: 'x' }] } });

    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ [role]: ['produce'] });
    expect(revoked.status).toBe(204);
    expect(listedAfter.body).toEqual({});
    expect(produce.status).toBe(403);
  });

  it('keeps a topic grant when the namespace grant of the same role is revoked', async () => {
    const { topic, ledgerId } = await topicWithBacklog('nskeep');
    const role = uniqueRole('both');
    await api.grantOnNamespace(topic.namespace, role, ['produce']);
    await api.grant(topic, role, ['consume']);

    await api.expectStatus(204, 'DELETE', `${topic.namespace.permissionsPath}/${role}`);
    const statuses = await Promise.all(
      Object.values(actionCalls(topic, ledgerId)).map((callAs) => callAs(api.as(role))),
    );

    expect(statuses).toEqual([403, 204, 403]);
  });
});

describe('management needs a superuser', () => {
  it('answers 403 to a role holding every action for topic, subscription and permission management', async () => {
    const { topic } = await topicWithBacklog('manage');
    const role = uniqueRole('operator');
    await api.grant(topic, role, ['produce', 'consume', 'acknowledge_message']);
    await api.grantOnNamespace(topic.namespace, role, ['produce', 'consume', 'acknowledge_message']);
    const operator = api.as(role);
    const fresh = topic.namespace.topic('fresh');

    const results = {
      createTopic: await operator.send('PUT', fresh.adminPath),
      createPartitioned: await operator.send('PUT', `${fresh.adminPath}/partitions`, { body: 2 }),
      listTopics: await operator.send('GET', topic.namespace.adminPath()),
      deleteTopic: await operator.send('DELETE', topic.adminPath),
      createSubscription: await operator.send(
        'PUT',
        `${topic.adminPath}/subscription/mine?subscriptionType=Shared`,
      ),
      deleteSubscription: await operator.send('DELETE', `${topic.adminPath}/subscription/sub`),
      grant: await operator.send('POST', `${topic.adminPath}/permissions/${role}-friend`, {
        body: ['produce'],
      }),
      revoke: await operator.send('DELETE', `${topic.adminPath}/permissions/${role}`),
      listGrants: await operator.send('GET', `${topic.adminPath}/permissions`),
      grantNamespace: await operator.send('POST', `${topic.namespace.permissionsPath}/${role}-friend`, {
        body: ['produce'],
      }),
      listNamespaceGrants: await operator.send('GET', topic.namespace.permissionsPath),
    };
    const subscriptions = await api.send('GET', `${topic.adminPath}/subscriptions`);
    const listed = await api.send('GET', topic.namespace.adminPath());

    for (const result of Object.values(results)) {
      expect(result.status).toBe(403);
      expect(result.body).toEqual({ reason: expect.stringContaining('superuser') });
    }
    expect(subscriptions.body).toEqual(['sub']);
    expect(listed.body).toEqual([topic.name]);
  });
});
