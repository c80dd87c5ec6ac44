import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { SUPERUSER_ROLE, tokenFor } from '../support/admin-fixtures.ts';
import {
  type OperationKey,
  PulsarAdminSwaggerClient,
  type SwaggerAnswer,
  SwaggerDefinition,
  type SwaggerSchema,
} from '../support/pulsar-swagger-client.ts';
import { apiRouteTable } from '../support/route-table.ts';

// Issue 13, criterion 6: a Pulsar admin REST client generated from Pulsar's Swagger definition
// (test/fixtures/pulsar-admin-swagger, Pulsar 4.2.5) calls every admin path ackline implements and
// parses every answer: a declared status (or 2xx), a JSON body valid against the declared schema.

const op = (method: string, path: string): OperationKey => ({ method, path });
const T = '/persistent/{tenant}/{namespace}/{topic}';
const NS = '/namespaces/{tenant}/{namespace}';

/**
 * Every admin route of ackline (functions/admin-api/routes.ts) and the Swagger operation it serves;
 * `{domain}` routes map to the `/persistent` operation (the `/non-persistent` ones share their
 * parameters). Adding a route is one line here; a route missing from this table fails the first test.
 */
const SWAGGER_OPERATION_OF: Record<string, OperationKey> = {
  'GET /admin/v2/brokers/health': op('get', '/brokers/health'),
  'GET /admin/v2/clusters': op('get', '/clusters'),
  'GET /admin/v2/tenants': op('get', '/tenants'),
  'GET /admin/v2/tenants/{tenant}': op('get', '/tenants/{tenant}'),
  'PUT /admin/v2/tenants/{tenant}': op('put', '/tenants/{tenant}'),
  'DELETE /admin/v2/tenants/{tenant}': op('delete', '/tenants/{tenant}'),
  'GET /admin/v2/namespaces/{tenant}': op('get', '/namespaces/{tenant}'),
  'GET /admin/v2/namespaces/{tenant}/{namespace}': op('get', '/namespaces/{tenant}/{namespace}'),
  'PUT /admin/v2/namespaces/{tenant}/{namespace}': op('put', '/namespaces/{tenant}/{namespace}'),
  'DELETE /admin/v2/namespaces/{tenant}/{namespace}': op('delete', '/namespaces/{tenant}/{namespace}'),
  'GET /admin/v2/namespaces/{tenant}/{namespace}/retention': op('get', `${NS}/retention`),
  'POST /admin/v2/namespaces/{tenant}/{namespace}/retention': op('post', `${NS}/retention`),
  'DELETE /admin/v2/namespaces/{tenant}/{namespace}/retention': op('delete', `${NS}/retention`),
  'GET /admin/v2/namespaces/{tenant}/{namespace}/messageTTL': op('get', `${NS}/messageTTL`),
  'POST /admin/v2/namespaces/{tenant}/{namespace}/messageTTL': op('post', `${NS}/messageTTL`),
  'DELETE /admin/v2/namespaces/{tenant}/{namespace}/messageTTL': op('delete', `${NS}/messageTTL`),
  'GET /admin/v2/namespaces/{tenant}/{namespace}/permissions': op(
    'get',
    '/namespaces/{tenant}/{namespace}/permissions',
  ),
  'POST /admin/v2/namespaces/{tenant}/{namespace}/permissions/{role}': op(
    'post',
    '/namespaces/{tenant}/{namespace}/permissions/{role}',
  ),
  'DELETE /admin/v2/namespaces/{tenant}/{namespace}/permissions/{role}': op(
    'delete',
    '/namespaces/{tenant}/{namespace}/permissions/{role}',
  ),
  'GET /admin/v2/{domain}/{tenant}/{namespace}': op('get', '/persistent/{tenant}/{namespace}'),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/partitioned': op(
    'get',
    '/persistent/{tenant}/{namespace}/partitioned',
  ),
  'PUT /admin/v2/{domain}/{tenant}/{namespace}/{topic}': op('put', T),
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}': op('delete', T),
  'PUT /admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions': op('put', `${T}/partitions`),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions': op('get', `${T}/partitions`),
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitions': op('delete', `${T}/partitions`),
  'PUT /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}': op(
    'put',
    `${T}/subscription/{subscriptionName}`,
  ),
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}': op(
    'delete',
    `${T}/subscription/{subName}`,
  ),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscriptions': op('get', `${T}/subscriptions`),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/stats': op('get', `${T}/stats`),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/partitioned-stats': op(
    'get',
    `${T}/partitioned-stats`,
  ),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/internalStats': op('get', `${T}/internalStats`),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/position/{position}': op(
    'get',
    `${T}/subscription/{subName}/position/{messagePosition}`,
  ),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/ledger/{ledgerId}/entry/{entryId}': op(
    'get',
    `${T}/ledger/{ledgerId}/entry/{entryId}`,
  ),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/skip/{count}': op(
    'post',
    `${T}/subscription/{subName}/skip/{numMessages}`,
  ),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/resetcursor/{timestamp}':
    op('post', `${T}/subscription/{subName}/resetcursor/{timestamp}`),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/resetcursor': op(
    'post',
    `${T}/subscription/{subName}/resetcursor`,
  ),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/skip_all': op(
    'post',
    `${T}/subscription/{subName}/skip_all`,
  ),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/expireMessages/{expireTimeInSeconds}':
    op('post', `${T}/subscription/{subName}/expireMessages/{expireTimeInSeconds}`),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/all_subscription/expireMessages/{expireTimeInSeconds}':
    op('post', `${T}/all_subscription/expireMessages/{expireTimeInSeconds}`),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/retention': op('get', `${T}/retention`),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/retention': op('post', `${T}/retention`),
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}/retention': op('delete', `${T}/retention`),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/messageTTL': op('get', `${T}/messageTTL`),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/messageTTL': op('post', `${T}/messageTTL`),
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}/messageTTL': op('delete', `${T}/messageTTL`),
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/permissions': op('get', `${T}/permissions`),
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/permissions/{role}': op(
    'post',
    `${T}/permissions/{role}`,
  ),
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}/permissions/{role}': op(
    'delete',
    `${T}/permissions/{role}`,
  ),
};

/** Admin routes with no operation in Pulsar 4.2.5's definition, and why. */
const ACKLINE_ONLY: Record<string, string> = {
  'GET /admin/v2/namespaces/{tenant}/{namespace}/maxSubscriptionsPerTopic':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'POST /admin/v2/namespaces/{tenant}/{namespace}/maxSubscriptionsPerTopic':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'DELETE /admin/v2/namespaces/{tenant}/{namespace}/maxSubscriptionsPerTopic':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'GET /admin/v2/namespaces/{tenant}/{namespace}/maxConsumersPerSubscription':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'POST /admin/v2/namespaces/{tenant}/{namespace}/maxConsumersPerSubscription':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'DELETE /admin/v2/namespaces/{tenant}/{namespace}/maxConsumersPerSubscription':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/maxSubscriptionsPerTopic':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/maxSubscriptionsPerTopic':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}/maxSubscriptionsPerTopic':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/maxConsumersPerSubscription':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/maxConsumersPerSubscription':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}/maxConsumersPerSubscription':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'GET /admin/v2/namespaces/{tenant}/{namespace}/deduplication':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'POST /admin/v2/namespaces/{tenant}/{namespace}/deduplication':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'DELETE /admin/v2/namespaces/{tenant}/{namespace}/deduplication':
    "Pulsar's namespace policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/deduplicationEnabled':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/deduplicationEnabled':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'DELETE /admin/v2/{domain}/{tenant}/{namespace}/{topic}/deduplicationEnabled':
    "Pulsar's topic policy operation, not in the stored subset of the 4.2.5 definition (test/fixtures/pulsar-admin-swagger)",
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/acknowledgeMessage':
    'PIP-423 acknowledgeMessage: not in the released 4.2.5 definition',
  'POST /admin/v1/{domain}/{property}/{cluster}/{namespace}/{topic}/acknowledgeMessage':
    'PIP-423 on the v1 path (basePath /admin/v1, another definition)',
  'POST /admin/{domain}/{property}/{cluster}/{namespace}/{topic}/acknowledgeMessage':
    'PIP-423 on the legacy v1 path (basePath /admin, another definition)',
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/acknowledgeMessage/audit':
    "ackline's audit of acknowledgeMessage calls; Pulsar has none",
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/scheduled':
    "ackline's view of what waits on a subscription (issue 24); Pulsar has none (apache/pulsar #6979, #25267)",
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/pending':
    "ackline's view of who holds what on a subscription (issue 24); Pulsar shows only counts in stats",
  'GET /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/preview':
    "ackline's preview of one message's next redeliveries under a consumer's policy (issue 24); Pulsar has none",
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/reschedule':
    "ackline's reschedule of one waiting message (issue 24); Pulsar has none (apache/pulsar #11180)",
  'POST /admin/v2/{domain}/{tenant}/{namespace}/{topic}/subscription/{subscription}/skipByMessageIds':
    'skip by message ids: not in the released 4.2.5 definition (only skip/{numMessages} and skip_all)',
};

/**
 * Known disagreements of the definition itself, checked with the structure Pulsar answers instead:
 * the two permission maps are declared `Map<String, AuthAction>` by Swagger while their descriptions
 * (and Pulsar's answers) say `Map<String, Set<AuthAction>>`.
 */
const ACTIONS_BY_ROLE: SwaggerSchema = {
  type: 'object',
  additionalProperties: {
    type: 'array',
    items: { type: 'string', enum: ['produce', 'consume', 'functions', 'sources', 'sinks', 'packages'] },
  },
};
const SCHEMA_OVERRIDES: Record<string, SwaggerSchema> = {
  'get /namespaces/{tenant}/{namespace}/permissions': ACTIONS_BY_ROLE,
  [`get ${T}/permissions`]: ACTIONS_BY_ROLE,
};

const definition = SwaggerDefinition.load();
const keyOf = (key: OperationKey) => `${key.method} ${key.path}`;

describe("Pulsar's admin Swagger definition against ackline's admin routes", () => {
  it('maps every admin route to an operation of the definition, or lists it as ackline-only with a reason', () => {
    const adminRoutes = apiRouteTable()
      .filter((route) => route.functionName === 'admin-api')
      .map((route) => route.key);

    const unmapped = adminRoutes.filter((key) => !(key in SWAGGER_OPERATION_OF) && !(key in ACKLINE_ONLY));
    const stale = [...Object.keys(SWAGGER_OPERATION_OF), ...Object.keys(ACKLINE_ONLY)].filter(
      (key) => !adminRoutes.includes(key),
    );
    const absent = Object.values(SWAGGER_OPERATION_OF).filter((key) => !definition.find(key));
    const both = Object.keys(ACKLINE_ONLY).filter((key) => key in SWAGGER_OPERATION_OF);

    expect(unmapped).toEqual([]);
    expect(stale).toEqual([]);
    expect(absent).toEqual([]);
    expect(both).toEqual([]);
    expect(definition.find(op('post', `${T}/acknowledgeMessage`))).toBeUndefined();
  });

  it('calls every mapped operation through the generated client and every answer fits its operation', async () => {
    const client = new PulsarAdminSwaggerClient(definition, inject('acklineUrl'), tokenFor(SUPERUSER_ROLE));
    const called = new Set<string>();
    const problems: string[] = [];
    const send = async (key: OperationKey, args: Parameters<PulsarAdminSwaggerClient['call']>[1] = {}) => {
      const answer = await client.call(key, args);
      called.add(keyOf(key));
      // The committed subset is closed under $ref: a "not checked" line is a problem too.
      problems.push(...client.check(answer, SCHEMA_OVERRIDES[keyOf(key)]));
      return answer;
    };
    const expectStatus = (answer: SwaggerAnswer, status: number) => {
      if (answer.status !== status)
        problems.push(`${keyOf(answer.key)}: ${answer.status}, expected ${status}: ${answer.text}`);
    };
    const backlog = (answer: SwaggerAnswer) =>
      (answer.body as { subscriptions: Record<string, { msgBacklog: number }> }).subscriptions.billing
        ?.msgBacklog;
    const tenant = `swagger-${process.pid}-${randomBytes(3).toString('hex')}`;
    const ns = { tenant, namespace: 'ns' };
    const topic = { ...ns, topic: 'orders' };
    const partitioned = { ...ns, topic: 'parted' };

    expectStatus(await send(op('get', '/brokers/health')), 200);
    const clusters = await send(op('get', '/clusters'));
    const cluster = (clusters.body as string[])[0] as string;
    expectStatus(
      await send(op('put', '/tenants/{tenant}'), {
        path: { tenant },
        body: { adminRoles: [], allowedClusters: [cluster] },
      }),
      204,
    );
    expectStatus(await send(op('get', '/tenants')), 200);
    expectStatus(await send(op('get', '/tenants/{tenant}'), { path: { tenant } }), 200);
    expectStatus(await send(op('put', '/namespaces/{tenant}/{namespace}'), { path: ns, body: {} }), 204);
    expectStatus(await send(op('get', '/namespaces/{tenant}'), { path: { tenant } }), 200);
    expectStatus(await send(op('get', '/namespaces/{tenant}/{namespace}'), { path: ns }), 200);
    const nsRole = { ...ns, role: 'reader' };
    expectStatus(
      await send(op('post', '/namespaces/{tenant}/{namespace}/permissions/{role}'), {
        path: nsRole,
        body: ['consume'],
      }),
      204,
    );
    expectStatus(await send(op('get', '/namespaces/{tenant}/{namespace}/permissions'), { path: ns }), 200);
    expectStatus(
      await send(op('delete', '/namespaces/{tenant}/{namespace}/permissions/{role}'), { path: nsRole }),
      204,
    );

    expectStatus(await send(op('put', T), { path: topic }), 204);
    expectStatus(await send(op('put', `${T}/partitions`), { path: partitioned, body: 2 }), 204);
    expectStatus(await send(op('get', `${T}/partitions`), { path: partitioned }), 200);
    expectStatus(await send(op('get', '/persistent/{tenant}/{namespace}'), { path: ns }), 200);
    const partitionedList = await send(op('get', '/persistent/{tenant}/{namespace}/partitioned'), {
      path: ns,
    });
    expectStatus(partitionedList, 200);
    if (JSON.stringify(partitionedList.body) !== JSON.stringify([`persistent://${tenant}/ns/parted`])) {
      problems.push(`partitioned topic list: ${partitionedList.text}`);
    }

    // Retention and message TTL of the namespace and of the topic: set, read back, remove. The
    // namespace's set/remove of retention declare only 200, but they are void JAX-RS methods, so
    // Pulsar answers 204 (any 2xx fits an operation); ackline answers 204 too.
    const readBack: unknown[] = [];
    const retention = { retentionTimeInMinutes: 60, retentionSizeInMB: 10 };
    for (const [base, path] of [
      [NS, ns],
      [T, topic],
    ] as const) {
      expectStatus(await send(op('post', `${base}/retention`), { path, body: retention }), 204);
      const read = await send(op('get', `${base}/retention`), { path });
      expectStatus(read, 200);
      readBack.push(read.body);
      expectStatus(await send(op('delete', `${base}/retention`), { path }), 204);
    }
    // The namespace takes the TTL as the body, the topic as the messageTTL query parameter.
    expectStatus(await send(op('post', `${NS}/messageTTL`), { path: ns, body: 120 }), 204);
    const nsTTL = await send(op('get', `${NS}/messageTTL`), { path: ns });
    expectStatus(nsTTL, 200);
    expectStatus(await send(op('delete', `${NS}/messageTTL`), { path: ns }), 204);
    expectStatus(await send(op('post', `${T}/messageTTL`), { path: topic, query: { messageTTL: 60 } }), 204);
    const topicTTL = await send(op('get', `${T}/messageTTL`), { path: topic });
    expectStatus(topicTTL, 200);
    expectStatus(await send(op('delete', `${T}/messageTTL`), { path: topic }), 204);
    readBack.push(nsTTL.body, topicTTL.body);
    const produced = await fetch(`${inject('acklineUrl')}/topics/persistent/${tenant}/ns/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenFor(SUPERUSER_ROLE)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }] }),
    });
    const ids = (
      (await produced.json()) as { messagePublishResults: { messageId: string }[] }
    ).messagePublishResults.map((result) => result.messageId.split(':').map(Number));
    const [ledgerId, entryId] = ids[0] as [number, number];
    // MessageId.earliest as pulsar-admin sends it: the subscription must see the messages produced before it.
    const sub = { ...topic, subscriptionName: 'billing' };
    expectStatus(
      await send(op('put', `${T}/subscription/{subscriptionName}`), {
        path: sub,
        body: { ledgerId: -1, entryId: -1 },
      }),
      204,
    );
    expectStatus(await send(op('get', `${T}/subscriptions`), { path: topic }), 200);

    const subPath = { ...topic, subName: 'billing' };
    expectStatus(
      await send(op('get', `${T}/subscription/{subName}/position/{messagePosition}`), {
        path: { ...subPath, messagePosition: 1 },
      }),
      200,
    );
    expectStatus(
      await send(op('get', `${T}/ledger/{ledgerId}/entry/{entryId}`), {
        path: { ...topic, ledgerId, entryId },
      }),
      200,
    );
    const before = await send(op('get', `${T}/stats`), { path: topic });
    expectStatus(before, 200);
    expectStatus(
      await send(op('post', `${T}/subscription/{subName}/skip/{numMessages}`), {
        path: { ...subPath, numMessages: 1 },
      }),
      204,
    );
    const after = await send(op('get', `${T}/stats`), { path: topic });
    expectStatus(
      await send(op('get', `${T}/partitioned-stats`), { path: partitioned, query: { perPartition: true } }),
      200,
    );

    // Cursor operations, each 204 as Pulsar's, seen through the backlog they leave.
    const backlogs: unknown[] = [];
    const noteBacklog = async () =>
      backlogs.push(backlog(await send(op('get', `${T}/stats`), { path: topic })));
    expectStatus(
      await send(op('post', `${T}/subscription/{subName}/resetcursor/{timestamp}`), {
        path: { ...subPath, timestamp: 0 },
      }),
      204,
    );
    await noteBacklog(); // 3: back to the first message
    // `excluded` as pulsar-admin sends it (ResetCursorData's JSON name): start after the first message.
    expectStatus(
      await send(op('post', `${T}/subscription/{subName}/resetcursor`), {
        path: subPath,
        body: { ledgerId, entryId, partitionIndex: -1, excluded: true, batchIndex: -1 },
      }),
      204,
    );
    await noteBacklog(); // 2
    expectStatus(await send(op('post', `${T}/subscription/{subName}/skip_all`), { path: subPath }), 204);
    await noteBacklog(); // 0
    expectStatus(
      await send(op('post', `${T}/subscription/{subName}/resetcursor/{timestamp}`), {
        path: { ...subPath, timestamp: 0 },
      }),
      204,
    );
    expectStatus(
      await send(op('post', `${T}/subscription/{subName}/expireMessages/{expireTimeInSeconds}`), {
        path: { ...subPath, expireTimeInSeconds: 3600 },
      }),
      204,
    );
    await noteBacklog(); // 3: none is an hour old
    expectStatus(
      await send(op('post', `${T}/all_subscription/expireMessages/{expireTimeInSeconds}`), {
        path: { ...topic, expireTimeInSeconds: 0 },
      }),
      204,
    );
    // As Pulsar's isEntryExpired, 0 expires nothing (expiry itself: cursor-operations.test.ts).
    await noteBacklog(); // 3
    expectStatus(await send(op('get', `${T}/internalStats`), { path: topic }), 200);
    const topicRole = { ...topic, role: 'writer' };
    expectStatus(
      await send(op('post', `${T}/permissions/{role}`), { path: topicRole, body: ['produce'] }),
      204,
    );
    expectStatus(await send(op('get', `${T}/permissions`), { path: topic }), 200);
    expectStatus(await send(op('delete', `${T}/permissions/{role}`), { path: topicRole }), 204);

    expectStatus(await send(op('delete', `${T}/subscription/{subName}`), { path: subPath }), 204);
    // delete-partitioned-topic: Pulsar's 404 for a non-partitioned topic, then the partitioned one.
    expectStatus(await send(op('delete', `${T}/partitions`), { path: topic }), 404);
    expectStatus(await send(op('delete', `${T}/partitions`), { path: partitioned }), 204);
    expectStatus(await send(op('get', `${T}/partitions`), { path: partitioned }), 404);
    expectStatus(await send(op('delete', T), { path: topic }), 204);
    expectStatus(await send(op('delete', '/namespaces/{tenant}/{namespace}'), { path: ns }), 204);
    expectStatus(await send(op('delete', '/tenants/{tenant}'), { path: { tenant } }), 204);

    expect(problems).toEqual([]);
    expect([backlog(before), backlog(after)]).toEqual([3, 2]);
    expect(backlogs).toEqual([3, 2, 0, 3, 3]);
    expect(readBack).toEqual([retention, retention, 120, 60]);
    expect([...called].sort()).toEqual(Object.values(SWAGGER_OPERATION_OF).map(keyOf).sort());
  });

  it('refuses, before sending, a call the definition does not allow', async () => {
    const client = new PulsarAdminSwaggerClient(definition, inject('acklineUrl'), undefined);
    const topic = { tenant: 't', namespace: 'n', topic: 'x' };

    await expect(
      client.call(op('put', `${T}/subscription/{subscriptionName}`), {
        path: { ...topic, subscriptionName: 's' },
        query: { subscriptionType: 'Shared' },
      }),
    ).rejects.toThrow('has no query parameter subscriptionType');
    await expect(client.call(op('put', `${T}/partitions`), { path: topic })).rejects.toThrow('body missing');
    await expect(
      client.call(op('post', `${T}/subscription/{subName}/skip/{numMessages}`), {
        path: { ...topic, subName: 's', numMessages: 'two' },
      }),
    ).rejects.toThrow('expected an integer');
    await expect(client.call(op('post', `${T}/acknowledgeMessage`))).rejects.toThrow('has no operation');
  });
});
