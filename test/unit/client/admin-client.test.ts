import { describe, expect, it } from 'vitest';
import { AcklineAdmin } from '../../../shared/client/admin-client.ts';
import type { FetchFunction } from '../../../shared/client/admin-http.ts';
import {
  AcklineAdminArgumentError,
  AcklineAdminConnectionError,
  AcklineAdminError,
} from '../../../shared/client/errors.ts';
import { fakeFetch, jsonResponse, noContent, type Responder, reasonResponse } from './fake-fetch.ts';

const BASE = 'http://admin.test:8080';
const TOPIC_PATH = '/admin/v2/persistent/my-tenant/my-ns/orders';
const BIG_ID = '18446744073709551615';

function adminWith(respond?: Responder, token?: string) {
  const fake = fakeFetch(respond);
  const admin = AcklineAdmin.builder().serviceHttpUrl(BASE).authToken(token).fetch(fake.fetch).build();
  return { admin, requests: fake.requests };
}

async function failure(promise: Promise<unknown>): Promise<AcklineAdminError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AcklineAdminError);
  return error as AcklineAdminError;
}

describe('AcklineAdmin topics(): requests', () => {
  const topic = 'persistent://my-tenant/my-ns/orders';

  it.each([
    {
      name: 'createNonPartitionedTopic',
      call: (a: AcklineAdmin) => a.topics().createNonPartitionedTopic(topic),
      method: 'PUT',
      path: TOPIC_PATH,
      body: undefined,
    },
    {
      name: 'createPartitionedTopic',
      call: (a: AcklineAdmin) => a.topics().createPartitionedTopic(topic, 4),
      method: 'PUT',
      path: `${TOPIC_PATH}/partitions`,
      body: '4',
    },
    {
      name: 'delete',
      call: (a: AcklineAdmin) => a.topics().delete(topic),
      method: 'DELETE',
      path: TOPIC_PATH,
      body: undefined,
    },
    {
      name: 'createSubscription with type and position',
      call: (a: AcklineAdmin) =>
        a.topics().createSubscription(topic, 'billing', {
          subscriptionType: 'Key_Shared',
          initialPosition: 'Earliest',
        }),
      method: 'PUT',
      path: `${TOPIC_PATH}/subscription/billing?subscriptionType=Key_Shared`,
      body: '{"initialPosition":"Earliest"}',
    },
    {
      name: 'createSubscription without options',
      call: (a: AcklineAdmin) => a.topics().createSubscription(topic, 'billing'),
      method: 'PUT',
      path: `${TOPIC_PATH}/subscription/billing`,
      body: undefined,
    },
    {
      name: 'deleteSubscription',
      call: (a: AcklineAdmin) => a.topics().deleteSubscription(topic, 'bill ing/x'),
      method: 'DELETE',
      path: `${TOPIC_PATH}/subscription/bill%20ing%2Fx`,
      body: undefined,
    },
    {
      name: 'skipMessages',
      call: (a: AcklineAdmin) => a.topics().skipMessages(topic, 'billing', 7),
      method: 'POST',
      path: `${TOPIC_PATH}/subscription/billing/skip/7`,
      body: undefined,
    },
    {
      name: 'skipMessagesByIds keeps 64-bit ids exact',
      call: (a: AcklineAdmin) =>
        a.topics().skipMessagesByIds(topic, 'billing', [
          { ledgerId: BIG_ID, entryId: 3n },
          { ledgerId: 12, entryId: '4' },
        ]),
      method: 'POST',
      path: `${TOPIC_PATH}/subscription/billing/skipByMessageIds`,
      body: `{"type":"messageId","messageIds":[{"ledgerId":${BIG_ID},"entryId":3},{"ledgerId":12,"entryId":4}]}`,
    },
    {
      name: 'grantPermission',
      call: (a: AcklineAdmin) => a.topics().grantPermission(topic, 'ops', ['consume', 'acknowledge_message']),
      method: 'POST',
      path: `${TOPIC_PATH}/permissions/ops`,
      body: '["consume","acknowledge_message"]',
    },
    {
      name: 'revokePermissions',
      call: (a: AcklineAdmin) => a.topics().revokePermissions(topic, 'ops'),
      method: 'DELETE',
      path: `${TOPIC_PATH}/permissions/ops`,
      body: undefined,
    },
  ])('$name', async ({ call, method, path, body }) => {
    const { admin, requests } = adminWith();

    await call(admin);

    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method, url: `${BASE}${path}`, body });
    expect(requests[0]!.headers['content-type']).toBe(body === undefined ? undefined : 'application/json');
  });

  it.each([
    [
      'getPartitionedTopicMetadata',
      (a: AcklineAdmin) => a.topics().getPartitionedTopicMetadata(topic),
      `${TOPIC_PATH}/partitions`,
      { partitions: 4 },
    ],
    [
      'getList',
      (a: AcklineAdmin) => a.topics().getList('my-tenant/my-ns'),
      '/admin/v2/persistent/my-tenant/my-ns',
      [`${topic}`],
    ],
    [
      'getPartitionedTopicList',
      (a: AcklineAdmin) => a.topics().getPartitionedTopicList('my-tenant/my-ns'),
      '/admin/v2/persistent/my-tenant/my-ns/partitioned',
      [`${topic}`],
    ],
    [
      'getSubscriptions',
      (a: AcklineAdmin) => a.topics().getSubscriptions(topic),
      `${TOPIC_PATH}/subscriptions`,
      ['a', 'b'],
    ],
    ['getStats', (a: AcklineAdmin) => a.topics().getStats(topic), `${TOPIC_PATH}/stats`, { msgInCounter: 3 }],
    [
      'getInternalStats',
      (a: AcklineAdmin) => a.topics().getInternalStats(topic),
      `${TOPIC_PATH}/internalStats`,
      { ledgers: [] },
    ],
    [
      'peekNthMessage',
      (a: AcklineAdmin) => a.topics().peekNthMessage(topic, 'billing', 2),
      `${TOPIC_PATH}/subscription/billing/position/2`,
      { messageId: '12:3:-1', payload: 'aGk=' },
    ],
    [
      'getMessageById',
      (a: AcklineAdmin) => a.topics().getMessageById(topic, BIG_ID, '0'),
      `${TOPIC_PATH}/ledger/${BIG_ID}/entry/0`,
      { messageId: `${BIG_ID}:0:-1`, payload: '' },
    ],
    [
      'getAcknowledgeMessageAudit',
      (a: AcklineAdmin) => a.topics().getAcknowledgeMessageAudit(topic),
      `${TOPIC_PATH}/acknowledgeMessage/audit`,
      [{ role: 'ops' }],
    ],
    [
      'getPermissions',
      (a: AcklineAdmin) => a.topics().getPermissions(topic),
      `${TOPIC_PATH}/permissions`,
      { ops: ['consume'] },
    ],
  ])('%s GETs and returns the body', async (_name, call, path, answer) => {
    const { admin, requests } = adminWith(() => jsonResponse(answer));

    const result = await call(admin);

    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([`GET ${BASE}${path}`]);
    expect(result).toEqual(answer);
  });
});

describe('AcklineAdmin topics().acknowledgeMessage', () => {
  it('repeats subscriptionNames and keeps ids above 2^53 exact', async () => {
    const { admin, requests } = adminWith();

    const result = await admin.topics().acknowledgeMessage('my-tenant/my-ns/orders', {
      ledgerId: BIG_ID,
      entryId: 9007199254740993n,
      subscriptionNames: ['a', 'b c'],
    });

    expect(result).toBeUndefined();
    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.url).toBe(
      `${BASE}${TOPIC_PATH}/acknowledgeMessage?ledgerId=${BIG_ID}&entryId=9007199254740993&subscriptionNames=a&subscriptionNames=b%20c`,
    );
    expect(requests[0]!.body).toBeUndefined();
  });

  it('sends no subscriptionNames for all subscriptions, and returns the dry-run report', async () => {
    const { admin, requests } = adminWith(() =>
      jsonResponse(undefined, 200, `{"wouldAcknowledge":["a"],"ledgerId":${BIG_ID}}`),
    );

    const report = await admin.topics().acknowledgeMessage('my-tenant/my-ns/orders', {
      ledgerId: '12',
      entryId: '3',
      dryRun: true,
    });

    expect(new URL(requests[0]!.url).search).toBe('?ledgerId=12&entryId=3&dryRun=true');
    expect(report).toEqual({ wouldAcknowledge: ['a'], ledgerId: BIG_ID });
  });

  it.each([
    [
      "Pulsar's positional form with subscriptions",
      (a: AcklineAdmin) => a.topics().acknowledgeMessage('my-tenant/my-ns/orders', BIG_ID, 3n, ['a', 'b c']),
      `?ledgerId=${BIG_ID}&entryId=3&subscriptionNames=a&subscriptionNames=b%20c`,
    ],
    [
      "Pulsar's positional form for every subscription",
      (a: AcklineAdmin) => a.topics().acknowledgeMessage('my-tenant/my-ns/orders', 12, '0'),
      '?ledgerId=12&entryId=0',
    ],
  ])('%s', async (_name, call, search) => {
    const { admin, requests } = adminWith();

    await call(admin);

    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.url).toBe(`${BASE}${TOPIC_PATH}/acknowledgeMessage${search}`);
  });

  it('checks the ids of the positional form before sending', async () => {
    const { admin, requests } = adminWith();

    const error = await failure(admin.topics().acknowledgeMessage('t/ns/x', '12', -1));

    expect(error).toBeInstanceOf(AcklineAdminArgumentError);
    expect(requests).toHaveLength(0);
  });

  it.each([
    ['a non-digit ledgerId', { ledgerId: '12x', entryId: '3' }],
    ['a negative entryId', { ledgerId: '12', entryId: '-1' }],
    ['an unsafe number', { ledgerId: 2 ** 53 + 2, entryId: '3' }],
    ['a negative bigint', { ledgerId: -1n, entryId: '3' }],
  ])('refuses %s before sending', async (_name, position) => {
    const { admin, requests } = adminWith();

    const error = await failure(admin.topics().acknowledgeMessage('t/ns/x', position));

    expect(error).toBeInstanceOf(AcklineAdminArgumentError);
    expect(error.statusCode).toBe(-1);
    expect(requests).toHaveLength(0);
  });
});

describe('AcklineAdmin topic names', () => {
  it.each([
    ['persistent://t/ns/orders', '/admin/v2/persistent/t/ns/orders'],
    ['non-persistent://t/ns/orders', '/admin/v2/non-persistent/t/ns/orders'],
    ['t/ns/orders', '/admin/v2/persistent/t/ns/orders'],
    ['orders', '/admin/v2/persistent/public/default/orders'],
    ['t/ns/a b%c?d#e', '/admin/v2/persistent/t/ns/a%20b%25c%3Fd%23e'],
  ])('%s -> %s', async (topic, path) => {
    const { admin, requests } = adminWith();

    await admin.topics().delete(topic);

    expect(requests[0]!.url).toBe(`${BASE}${path}`);
  });

  it.each([
    'http://t/ns/x',
    't/ns',
    'persistent://t/c/ns/x',
    't//x',
    't/../x',
    '',
  ])('refuses %j', async (topic) => {
    const { admin, requests } = adminWith();

    const error = await failure(admin.topics().delete(topic));

    expect(error).toBeInstanceOf(AcklineAdminArgumentError);
    expect(requests).toHaveLength(0);
  });
});

describe('AcklineAdmin namespaces()', () => {
  const path = '/admin/v2/namespaces/my-tenant/my-ns/permissions';

  it('grants, revokes and reads namespace permissions', async () => {
    const { admin, requests } = adminWith((request) =>
      request.method === 'GET' ? jsonResponse({ ops: ['produce'] }) : noContent(),
    );

    await admin.namespaces().grantPermissionOnNamespace('my-tenant/my-ns', 'ops', ['produce']);
    await admin.namespaces().revokePermissionsOnNamespace('my-tenant/my-ns', 'ops');
    const permissions = await admin.namespaces().getPermissions('my-tenant/my-ns');

    expect(requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['POST', `${BASE}${path}/ops`, '["produce"]'],
      ['DELETE', `${BASE}${path}/ops`, undefined],
      ['GET', `${BASE}${path}`, undefined],
    ]);
    expect(permissions).toEqual({ ops: ['produce'] });
  });

  it('refuses a namespace that is not tenant/namespace', async () => {
    const { admin } = adminWith();

    await expect(admin.namespaces().getPermissions('my-tenant')).rejects.toBeInstanceOf(
      AcklineAdminArgumentError,
    );
  });
});

describe('AcklineAdmin HTTP', () => {
  it('sends the token as a bearer token, and none when unset', async () => {
    const withToken = adminWith(undefined, 'tok');
    const without = adminWith();

    await withToken.admin.topics().delete('t/ns/x');
    await without.admin.topics().delete('t/ns/x');

    expect(withToken.requests[0]!.headers.authorization).toBe('Bearer tok');
    expect(without.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('keeps a base path prefix and drops trailing slashes', async () => {
    const fake = fakeFetch();
    const admin = AcklineAdmin.builder().serviceHttpUrl('https://api.test/prod/').fetch(fake.fetch).build();

    await admin.topics().delete('t/ns/x');

    expect(fake.requests[0]!.url).toBe('https://api.test/prod/admin/v2/persistent/t/ns/x');
  });

  it('keeps integers above 2^53 in answers as exact strings', async () => {
    const { admin } = adminWith(() =>
      jsonResponse(undefined, 200, `{"messageId":"x","payload":"","ledgerId":${BIG_ID},"entryId":3}`),
    );

    const message = await admin.topics().getMessageById('t/ns/x', '1', '2');

    expect(message.ledgerId).toBe(BIG_ID);
    expect(message.entryId).toBe(3);
  });

  it.each(['', 'ftp://x', 'not a url'])('build() refuses service URL %j', (url) => {
    expect(() => AcklineAdmin.builder().serviceHttpUrl(url).build()).toThrow(AcklineAdminArgumentError);
  });
});

describe('AcklineAdmin errors', () => {
  it("maps an error answer to statusCode and the server's reason", async () => {
    const { admin } = adminWith(() =>
      reasonResponse(412, 'Precondition Failed', 'Message 12:3 is not in the backlog'),
    );

    const error = await failure(
      admin.topics().acknowledgeMessage('t/ns/x', { ledgerId: '12', entryId: '3' }),
    );

    expect(error.statusCode).toBe(412);
    expect(error.reason).toBe('Message 12:3 is not in the backlog');
    expect(error.message).toBe('412 Precondition Failed: Message 12:3 is not in the backlog');
  });

  it.each([
    [
      'a non-JSON body',
      new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
      'Bad Gateway',
    ],
    [
      'JSON without reason',
      new Response('{"error":"x"}', { status: 404, statusText: 'Not Found' }),
      'Not Found',
    ],
    ['no status text', new Response('', { status: 409 }), 'Conflict'],
    ['an unknown status without text', new Response('', { status: 418 }), 'HTTP 418'],
  ])('falls back to the status text on %s', async (_name, response, reason) => {
    const { admin } = adminWith(() => response);

    const error = await failure(admin.topics().delete('t/ns/x'));

    expect(error.reason).toBe(reason);
  });

  it('turns a network failure into a connection error naming the URL', async () => {
    const refused: FetchFunction = async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), { code: 'ECONNREFUSED' }),
      });
    };
    const admin = AcklineAdmin.builder().serviceHttpUrl(BASE).fetch(refused).build();

    const error = await failure(admin.topics().getStats('t/ns/x'));

    expect(error).toBeInstanceOf(AcklineAdminConnectionError);
    expect((error as AcklineAdminConnectionError).url).toBe(`${BASE}/admin/v2/persistent/t/ns/x/stats`);
    expect(error.message).toBe(
      `Cannot reach the admin API at ${BASE}/admin/v2/persistent/t/ns/x/stats: connect ECONNREFUSED 127.0.0.1:8080`,
    );
  });

  it('refuses an answer of the wrong shape', async () => {
    const { admin } = adminWith(() => jsonResponse({ not: 'a list' }));

    const error = await failure(admin.topics().getSubscriptions('t/ns/x'));

    expect(error.reason).toContain('expected an array of strings');
  });
});

describe('AcklineAdmin topics().peekMessages', () => {
  it('peeks positions 1..count and stops early at the end of the backlog', async () => {
    const { admin, requests } = adminWith((request) =>
      request.url.endsWith('/position/3')
        ? reasonResponse(404, 'Not Found', 'No message at position 3')
        : jsonResponse({ messageId: request.url.slice(-1), payload: '' }),
    );

    const messages = await admin.topics().peekMessages('t/ns/x', 'sub', 5);

    expect(messages.map((m) => m.messageId)).toEqual(['1', '2']);
    expect(requests).toHaveLength(3);
  });

  it('fails when the backlog is empty', async () => {
    const { admin } = adminWith(() => reasonResponse(404, 'Not Found', 'No message at position 1'));

    const error = await failure(admin.topics().peekMessages('t/ns/x', 'sub', 2));

    expect(error.statusCode).toBe(404);
  });
});
