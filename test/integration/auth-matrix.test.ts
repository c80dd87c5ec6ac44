import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TokenRefusal, tokenRefusalReasons } from '../../shared/domain/token-refusal.ts';
import {
  AdminApi,
  NamespaceRef,
  parseMessageId,
  SUPERUSER_ROLE,
  type TopicRef,
  tokenFor,
  uniqueRole,
  withoutRates,
} from '../support/admin-fixtures.ts';
import { ConsumerApi, type TestConsumer } from '../support/consumer-fixtures.ts';
import { base64url, hs256Token } from '../support/hs256-token.ts';
import { type RawRequest, type RawResponse, sendRaw } from '../support/raw-http.ts';
import { type ApiRoute, apiRouteTable } from '../support/route-table.ts';

// Reliability (issue 6, criterion 7): the 401/403 matrix of EVERY route. The routes come from the
// handlers' own route lists (test/support/route-table.ts), so a route added there is in this
// matrix, and the last test checks that every one of them was. Each route is called with a
// request that is valid but for its credentials (a new topic to create, a message to produce or
// acknowledge, a grant to revoke), so a refusal that let the call through would show in the
// fixture, which the last tests compare and then use as a positive control: the same requests as
// the superuser succeed.
//
// Open to any caller: GET /admin/v2/brokers/health only, the public liveness probe (no token
// needed, infra/api-routes.ts publicPaths). Every other route needs a valid token (401) and then
// either superuser rights or an action granted on the topic or namespace (403): no route is open
// to any authenticated role.

const admin = AdminApi.shared();
const consumerApi = ConsumerApi.shared();
const routes = apiRouteTable();

/** An HS256 token over any header and claims, signed with the shared stack's secret. */
function signedRaw(header: unknown, claims: unknown): string {
  return hs256Token(claims, inject('acklineTokenSecret'), header);
}

/** Authorization headers refused with 401, each with what is wrong and the check its reason names. */
const unauthenticated: readonly [string, readonly (readonly [string, string])[], TokenRefusal][] = [
  ['no Authorization header', [], 'missing'],
  ['a malformed token', [['Authorization', 'Bearer not.a.jwt']], 'malformed'],
  ['an empty bearer', [['Authorization', 'Bearer ']], 'missing'],
  ['another scheme (Basic)', [['Authorization', `Basic ${tokenFor(SUPERUSER_ROLE)}`]], 'missing'],
  [
    'a token signed with another secret',
    [['Authorization', `Bearer ${tokenFor(SUPERUSER_ROLE, { secret: 'another-secret-0123456789abcdef' })}`]],
    'signature',
  ],
  [
    'a token whose signature was tampered with',
    [['Authorization', `Bearer ${tokenFor(SUPERUSER_ROLE).slice(0, -4)}AAAA`]],
    'signature',
  ],
  [
    'an expired token',
    [['Authorization', `Bearer ${tokenFor(SUPERUSER_ROLE, { expiresInSeconds: -60 })}`]],
    'expired',
  ],
  [
    'a token not valid for an hour',
    [
      [
        'Authorization',
        `Bearer ${signedRaw({ alg: 'HS256', typ: 'JWT' }, { sub: SUPERUSER_ROLE, nbf: Math.floor(Date.now() / 1000) + 3600 })}`,
      ],
    ],
    'notYetValid',
  ],
  [
    'an unsigned token (alg none)',
    [
      [
        'Authorization',
        `Bearer ${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: SUPERUSER_ROLE })}.`,
      ],
    ],
    'algorithm',
  ],
  [
    'a signed token without a subject',
    [['Authorization', `Bearer ${signedRaw({ alg: 'HS256', typ: 'JWT' }, { role: SUPERUSER_ROLE })}`]],
    'noRole',
  ],
  [
    'two Authorization headers, both valid',
    [
      ['Authorization', `Bearer ${tokenFor(SUPERUSER_ROLE)}`],
      ['authorization', `Bearer ${tokenFor(SUPERUSER_ROLE)}`],
    ],
    'ambiguous',
  ],
];

interface Fixture {
  readonly namespace: NamespaceRef;
  readonly topic: TopicRef;
  /** `{ ledgerId, entryId }` of the topic's first message. */
  readonly first: { readonly ledgerId: string; readonly entryId: string; readonly id: string };
  readonly shared: TestConsumer;
  readonly failover: TestConsumer;
  readonly grantedRole: string;
  /** A tenant of the fixture's own (the topic's tenant is never created) with namespace `ns`. */
  readonly tenant: string;
}

/** A topic with subscriptions `sub` (Shared) and `fo` (Failover), 3 messages, a consumer on each, a grant. */
async function createFixture(label: string): Promise<Fixture> {
  const namespace = NamespaceRef.unique(label);
  const topic = namespace.topic('t');
  await admin.createTopic(topic);
  await admin.createSubscription(topic, 'sub', { type: 'Shared', initialPosition: 'Earliest' });
  await admin.createSubscription(topic, 'fo', { type: 'Failover', initialPosition: 'Earliest' });
  // For partitioned-stats and delete-partitioned-topic, whose topic must be partitioned.
  await admin.createTopic(namespace.topic('parted'), 2);
  const [id] = await admin.produceMany(topic, 3);
  const grantedRole = uniqueRole('granted');
  await admin.grant(topic, grantedRole, ['consume']);
  await admin.grantOnNamespace(namespace, grantedRole, ['produce']);
  const shared = await consumerApi.subscribe(topic, 'sub', { subscriptionType: 'Shared' });
  const failover = await consumerApi.subscribe(topic, 'fo', { subscriptionType: 'Failover' });
  const parts = parseMessageId(id as string);
  const tenant = uniqueRole(`${label}-tenant`);
  await admin.expectStatus(204, 'PUT', `/admin/v2/tenants/${tenant}`, {
    body: { allowedClusters: ['standalone'] },
  });
  await admin.expectStatus(204, 'PUT', `/admin/v2/namespaces/${tenant}/ns`);
  return {
    tenant,
    namespace,
    topic,
    first: { ledgerId: parts.ledgerId, entryId: parts.entryId, id: id as string },
    shared,
    failover,
    grantedRole,
  };
}

/**
 * The request that exercises `route` on the fixture and would change it if let through: new names
 * for what a route creates, existing ones for what it reads, acknowledges or deletes. Parameters
 * are filled by name, so a new route gets a request without a change here.
 */
function requestFor(route: ApiRoute, f: Fixture): Omit<RawRequest, 'headers'> {
  const creates = route.method === 'PUT' || route.path.startsWith('/consumers/{domain}/');
  // Tenants and namespaces as resources: the fixture's own tenant; PUT and DELETE a new namespace
  // (the positive control creates it, then deletes it), PUT and DELETE a new tenant.
  const tenantRoute = route.path.startsWith('/admin/v2/tenants/');
  const namespaceRoute =
    route.path === '/admin/v2/namespaces/{tenant}' ||
    route.path === '/admin/v2/namespaces/{tenant}/{namespace}';
  const values: Record<string, string> = {
    domain: 'persistent',
    tenant: tenantRoute
      ? route.method === 'GET'
        ? f.tenant
        : `${f.tenant}-created`
      : namespaceRoute
        ? f.tenant
        : f.namespace.tenant,
    property: f.namespace.tenant,
    cluster: 'standalone',
    namespace: namespaceRoute ? (route.method === 'GET' ? 'ns' : 'created-ns') : f.namespace.namespace,
    topic:
      route.path.endsWith('/partitioned-stats') ||
      (route.method === 'DELETE' && route.path.endsWith('/partitions'))
        ? 'parted'
        : route.method !== 'PUT' || route.path.includes('/subscription/')
          ? f.topic.localName
          : route.path.endsWith('/partitions')
            ? 'created-parted'
            : 'created',
    subscription: creates ? 'created-sub' : 'sub',
    consumerId: route.path.endsWith('/ack-cumulative') ? f.failover.id : f.shared.id,
    role: route.method === 'POST' ? 'new-role' : f.grantedRole,
    position: '1',
    ledgerId: f.first.ledgerId,
    entryId: f.first.entryId,
    count: '1',
    timestamp: '0',
    expireTimeInSeconds: '3600',
  };
  const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(values[name] ?? 'x'),
  );
  const tail = route.path.slice(route.path.lastIndexOf('/') + 1);
  const query =
    tail === 'acknowledgeMessage'
      ? `?ledgerId=${f.first.ledgerId}&entryId=${f.first.entryId}&subscriptionNames=sub`
      : tail === 'preview'
        ? `?messageId=${f.first.ledgerId}:${f.first.entryId}&consumer=${f.shared.id}`
        : tail === 'receive'
          ? '?maxMessages=10'
          : route.method === 'PUT' && tail === '{subscription}'
            ? '?subscriptionType=Shared'
            : route.method === 'POST' &&
                tail === 'messageTTL' &&
                !route.path.startsWith('/admin/v2/namespaces/')
              ? '?messageTTL=3600'
              : route.method === 'DELETE' && ['{topic}', '{subscription}', 'partitions'].includes(tail)
                ? // The fixture's consumers are connected: Pulsar's force deletes all the same.
                  '?force=true'
                : '';
  const bodies: Record<string, unknown> = {
    '{topic}': route.method === 'POST' ? { messages: [{ payload: 'refused' }] } : undefined,
    '{subscription}':
      route.method === 'PUT' ? { initialPosition: 'Earliest' } : { subscriptionType: 'Shared' },
    partitions: route.method === 'PUT' ? 2 : undefined,
    ack: { messageIds: [f.first.id] },
    nack: { messageIds: [f.first.id] },
    'ack-cumulative': { messageId: f.first.id },
    skipByMessageIds: {
      type: 'messageId',
      messageIds: [{ ledgerId: f.first.ledgerId, entryId: f.first.entryId }],
    },
    '{role}': route.method === 'POST' ? ['produce'] : undefined,
    '{tenant}': route.method === 'PUT' ? { adminRoles: [], allowedClusters: ['standalone'] } : undefined,
    resetcursor: { ledgerId: Number(f.first.ledgerId), entryId: Number(f.first.entryId) },
    retention: route.method === 'POST' ? { retentionTimeInMinutes: 60, retentionSizeInMB: -1 } : undefined,
    messageTTL: route.method === 'POST' && route.path.startsWith('/admin/v2/namespaces/') ? 3600 : undefined,
    reschedule: { messageId: f.first.id, deliverAt: Date.now() + 3_600_000 },
    maxSubscriptionsPerTopic: route.method === 'POST' ? 5 : undefined,
    maxConsumersPerSubscription: route.method === 'POST' ? 5 : undefined,
    deduplication: route.method === 'POST' ? true : undefined,
    deduplicationEnabled: route.method === 'POST' ? true : undefined,
    producers: route.method === 'POST' ? { accessMode: 'Shared' } : undefined,
  };
  const body = bodies[tail];
  return {
    method: route.method,
    target: `${path}${query}`,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

const json: readonly [string, string] = ['Content-Type', 'application/json'];

function reasonOf(response: RawResponse): unknown {
  try {
    return (JSON.parse(response.text) as { reason?: unknown }).reason;
  } catch {
    return undefined;
  }
}

/** What the admin API shows of the fixture, and what its consumers still hold. */
async function stateOf(f: Fixture) {
  const get = async (path: string) => {
    const result = await admin.send('GET', path);
    return { status: result.status, body: withoutRates(result.body) };
  };
  const metadata = (name: string) => `${f.namespace.topic(name).adminPath}/partitions`;
  return {
    topics: await get(f.namespace.adminPath()),
    namespacePermissions: await get(f.namespace.permissionsPath),
    stats: await get(`${f.topic.adminPath}/stats`),
    internalStats: await get(`${f.topic.adminPath}/internalStats`),
    subscriptions: await get(`${f.topic.adminPath}/subscriptions`),
    permissions: await get(`${f.topic.adminPath}/permissions`),
    peek: await get(`${f.topic.adminPath}/subscription/sub/position/1`),
    audit: await get(`${f.topic.adminPath}/acknowledgeMessage/audit`),
    retention: await get(`${f.topic.adminPath}/retention`),
    messageTTL: await get(`${f.topic.adminPath}/messageTTL`),
    namespaceRetention: await get(`/admin/v2/namespaces/${f.namespace.name}/retention`),
    namespaceMessageTTL: await get(`/admin/v2/namespaces/${f.namespace.name}/messageTTL`),
    created: await get(metadata('created')),
    createdPartitioned: await get(metadata('created-parted')),
    // Not the list of all tenants: other suites add and delete theirs meanwhile.
    createdTenant: await get(`/admin/v2/tenants/${f.tenant}-created`),
    tenant: await get(`/admin/v2/tenants/${f.tenant}`),
    namespaces: await get(`/admin/v2/namespaces/${f.tenant}`),
  };
}

describe('the 401/403 matrix of every route', () => {
  let fixture: Fixture;
  let before: Awaited<ReturnType<typeof stateOf>>;
  const covered = new Set<string>();
  const stranger = uniqueRole('stranger');

  beforeAll(async () => {
    fixture = await createFixture('authmatrix');
    before = await stateOf(fixture);
  });

  afterAll(async () => {
    await Promise.allSettled([fixture?.shared.close(), fixture?.failover.close()]);
  });

  it.each(routes.map((route) => [route.key, route] as const))('%s', async (_key, route) => {
    const request = requestFor(route, fixture);
    const send = (headers: readonly (readonly [string, string])[]) =>
      sendRaw(admin.url, { ...request, headers: [...headers, json] });

    const refusedTokens = await Promise.all(unauthenticated.map(([, headers]) => send(headers)));
    const asStranger = await send([['Authorization', `Bearer ${tokenFor(stranger)}`]]);

    covered.add(route.key);
    if (route.isPublic) {
      // The liveness probe answers whoever asks, with or without a token.
      for (const response of [...refusedTokens, asStranger]) expect(response.status).toBe(200);
      return;
    }
    refusedTokens.forEach((response, i) => {
      const [label, , refusal] = unauthenticated[i] as (typeof unauthenticated)[number];
      expect([label, response.status, reasonOf(response)]).toEqual([
        label,
        401,
        tokenRefusalReasons[refusal],
      ]);
    });
    expect(asStranger.status, asStranger.text).toBe(403);
    expect(reasonOf(asStranger)).toEqual(expect.stringMatching(/not a superuser|not allowed|another role/));
  });

  it('covered every route of the handlers, and the refusals wrote nothing', async () => {
    const after = await stateOf(fixture);
    const received = await fixture.shared.receive(10, 500);

    expect(routes.length).toBeGreaterThanOrEqual(30);
    expect([...covered].sort()).toEqual(routes.map((route) => route.key).sort());
    expect(after).toEqual(before);
    expect((before.stats.body as { msgInCounter: number }).msgInCounter).toBe(3);
    expect(received.map((m) => m.payload).sort()).toEqual(['m0', 'm1', 'm2']);
  });

  it('lets the superuser make every one of those requests (they are valid but for their credentials)', async () => {
    // Positive control on a fixture of its own: deleting routes last, the topic last of all.
    const control = await createFixture('authcontrol');
    const rank = (route: ApiRoute) =>
      route.method !== 'DELETE'
        ? 0
        : route.path === '/admin/v2/{domain}/{tenant}/{namespace}/{topic}'
          ? 2
          : 1;
    const ordered = [...routes].sort((a, b) => rank(a) - rank(b));
    const statuses: Record<string, number> = {};
    for (const route of ordered) {
      // Unsubscribe deletes the subscription and closes the consumer: on a fixture of its own.
      const fixture = route.path.endsWith('/unsubscribe') ? await createFixture('authunsub') : control;
      const response = await sendRaw(admin.url, {
        ...requestFor(route, fixture),
        headers: [['Authorization', `Bearer ${tokenFor(SUPERUSER_ROLE)}`], json],
      });
      statuses[route.key] = response.status;
    }

    // Reschedule moves a message that waits in the redelivery tracker; by its turn the fixture's
    // first message is acknowledged (acknowledgeMessage ran before it): 409 says so, past the auth.
    const stateDependent: Record<string, number> = {
      'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/reschedule': 409,
      // A heartbeat names a registration the server gave an exclusive producer; the matrix's made-up
      // id holds no topic: 409 says so, past the auth.
      'POST /topics/{domain}/{tenant}/{namespace}/{topic}/producers/{producerId}/heartbeat': 409,
    };
    expect(
      Object.entries(statuses).filter(([key, status]) => status >= 300 && stateDependent[key] !== status),
    ).toEqual([]);
  });
});
