import type { AdminHttp } from './admin-http.ts';
import { namespacePathSegments, pathSegment, topicPath } from './admin-paths.ts';
import type {
  AcknowledgeMessageRequest,
  AdminMessage,
  AuthAction,
  CreateSubscriptionOptions,
  DeleteOptions,
  MessagePosition,
  PartitionedTopicMetadata,
  PermissionMap,
} from './admin-types.ts';
import { checkCount, type EntryIdInput, entryIdText } from './entry-id.ts';
import { AcklineAdminArgumentError, AcklineAdminError } from './errors.ts';
import type { JsonObject, JsonValue } from './lossless-json.ts';
import {
  checkedLimit,
  checkedTtlSeconds,
  limitAnswer,
  type RetentionPolicies,
  retentionAnswer,
  retentionBody,
  type SubscriptionLimit,
  ttlAnswer,
} from './policies.ts';
import { expectArray, expectObject, expectPermissionMap, expectStringArray } from './response-shapes.ts';
import {
  getPending,
  getPreview,
  getScheduled,
  type PendingQuery,
  postReschedule,
  type RescheduleRequest,
  type ScheduledQuery,
} from './topic-scheduling.ts';

function forceQuery(options: DeleteOptions): [string, string][] {
  return options.force ? [['force', 'true']] : [];
}

/**
 * Topic administration, as Pulsar's Java `admin.topics()`. Every `topic` argument accepts
 * `persistent://tenant/ns/topic`, `non-persistent://tenant/ns/topic` or the short `tenant/ns/topic`.
 * Every method throws {@link AcklineAdminError} on failure.
 *
 * @example
 * const topics = admin.topics();
 * await topics.createNonPartitionedTopic('my-tenant/my-ns/orders');
 * await topics.createSubscription('my-tenant/my-ns/orders', 'billing', { subscriptionType: 'Shared' });
 */
export class Topics {
  constructor(private readonly http: AdminHttp) {}

  /**
   * Creates a non-partitioned topic. Fails with 409 when it exists.
   * @example await admin.topics().createNonPartitionedTopic('persistent://my-tenant/my-ns/orders');
   */
  async createNonPartitionedTopic(topic: string): Promise<void> {
    await this.http.send({ method: 'PUT', path: topicPath(topic) });
  }

  /**
   * Creates a partitioned topic of `numPartitions` (>= 1) partitions.
   * @example await admin.topics().createPartitionedTopic('my-tenant/my-ns/orders', 4);
   */
  async createPartitionedTopic(topic: string, numPartitions: number): Promise<void> {
    const body = checkCount(numPartitions, 'number of partitions', 1);
    await this.http.send({ method: 'PUT', path: `${topicPath(topic)}/partitions`, body });
  }

  /**
   * The partition count of a topic (0: not partitioned).
   * @example const { partitions } = await admin.topics().getPartitionedTopicMetadata('my-tenant/my-ns/orders');
   */
  async getPartitionedTopicMetadata(topic: string): Promise<PartitionedTopicMetadata> {
    const body = expectObject(
      await this.http.json({ method: 'GET', path: `${topicPath(topic)}/partitions` }),
      'partitioned topic metadata',
    );
    if (typeof body.partitions !== 'number') {
      throw new AcklineAdminError(200, `Unexpected partitioned topic metadata: ${JSON.stringify(body)}`, {
        statusText: 'OK',
      });
    }
    return { partitions: body.partitions };
  }

  /**
   * The full names of the persistent topics of a namespace.
   * @example const names = await admin.topics().getList('my-tenant/my-ns'); // ['persistent://my-tenant/my-ns/orders']
   */
  async getList(namespace: string): Promise<readonly string[]> {
    const path = `/admin/v2/persistent/${namespacePathSegments(namespace)}`;
    return expectStringArray(await this.http.json({ method: 'GET', path }), 'topic list');
  }

  /**
   * The full names of the partitioned topics of a namespace, by their own names (Pulsar's
   * `getPartitionedTopicList`; {@link getList} names their partitions instead).
   * @example const names = await admin.topics().getPartitionedTopicList('my-tenant/my-ns'); // ['persistent://my-tenant/my-ns/orders']
   */
  async getPartitionedTopicList(namespace: string): Promise<readonly string[]> {
    const path = `/admin/v2/persistent/${namespacePathSegments(namespace)}/partitioned`;
    return expectStringArray(await this.http.json({ method: 'GET', path }), 'partitioned topic list');
  }

  /**
   * Deletes a topic. As Pulsar's, refused (412) while a subscription has connected consumers,
   * unless `force`, which disconnects them.
   * @example
   * await admin.topics().delete('my-tenant/my-ns/orders');
   * await admin.topics().delete('my-tenant/my-ns/orders', { force: true });
   */
  async delete(topic: string, options: DeleteOptions = {}): Promise<void> {
    await this.http.send({ method: 'DELETE', path: topicPath(topic), query: forceQuery(options) });
  }

  /**
   * Deletes a partitioned topic with all of its partitions (Pulsar's `deletePartitionedTopic`);
   * a non-partitioned topic is refused (404) and left alone. `force` as for {@link delete}.
   * @example await admin.topics().deletePartitionedTopic('my-tenant/my-ns/orders');
   */
  async deletePartitionedTopic(topic: string, options: DeleteOptions = {}): Promise<void> {
    await this.http.send({
      method: 'DELETE',
      path: `${topicPath(topic)}/partitions`,
      query: forceQuery(options),
    });
  }

  /**
   * Creates a durable subscription.
   * @example
   * await admin.topics().createSubscription('my-tenant/my-ns/orders', 'billing', {
   *   subscriptionType: 'Key_Shared',
   *   initialPosition: 'Earliest',
   * });
   */
  async createSubscription(
    topic: string,
    subscription: string,
    options: CreateSubscriptionOptions = {},
  ): Promise<void> {
    await this.http.send({
      method: 'PUT',
      path: `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}`,
      query: options.subscriptionType ? [['subscriptionType', options.subscriptionType]] : [],
      body: options.initialPosition ? { initialPosition: options.initialPosition } : undefined,
    });
  }

  /**
   * The names of a topic's subscriptions.
   * @example const names = await admin.topics().getSubscriptions('my-tenant/my-ns/orders');
   */
  async getSubscriptions(topic: string): Promise<readonly string[]> {
    const path = `${topicPath(topic)}/subscriptions`;
    return expectStringArray(await this.http.json({ method: 'GET', path }), 'subscription list');
  }

  /**
   * Deletes a subscription (pulsar-admin `unsubscribe`). As Pulsar's, refused (412) while
   * consumers are connected to it, unless `force`, which disconnects them.
   * @example await admin.topics().deleteSubscription('my-tenant/my-ns/orders', 'billing', { force: true });
   */
  async deleteSubscription(topic: string, subscription: string, options: DeleteOptions = {}): Promise<void> {
    await this.http.send({
      method: 'DELETE',
      path: `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}`,
      query: forceQuery(options),
    });
  }

  /**
   * A topic's stats, in Pulsar's `TopicStats` shape.
   * @example const stats = await admin.topics().getStats('my-tenant/my-ns/orders');
   */
  async getStats(topic: string): Promise<JsonObject> {
    return expectObject(
      await this.http.json({ method: 'GET', path: `${topicPath(topic)}/stats` }),
      'topic stats',
    );
  }

  /**
   * The stats of a partitioned topic, summed over its partitions, with each partition's stats
   * under `partitions` when `perPartition` (Pulsar's `GET .../partitioned-stats`).
   * @example const stats = await admin.topics().getPartitionedStats('my-tenant/my-ns/orders', true);
   */
  async getPartitionedStats(topic: string, perPartition = true): Promise<JsonObject> {
    return expectObject(
      await this.http.json({
        method: 'GET',
        path: `${topicPath(topic)}/partitioned-stats`,
        query: [['perPartition', String(perPartition)]],
      }),
      'partitioned topic stats',
    );
  }

  /**
   * A topic's internal stats, in Pulsar's `PersistentTopicInternalStats` shape (ledgers, cursors).
   * @example const internal = await admin.topics().getInternalStats('my-tenant/my-ns/orders');
   */
  async getInternalStats(topic: string): Promise<JsonObject> {
    const path = `${topicPath(topic)}/internalStats`;
    return expectObject(await this.http.json({ method: 'GET', path }), 'internal stats');
  }

  /**
   * The `n`-th message (1-based) of a subscription's backlog, without consuming it.
   * @example const first = await admin.topics().peekNthMessage('my-tenant/my-ns/orders', 'billing', 1);
   */
  async peekNthMessage(topic: string, subscription: string, n: number): Promise<AdminMessage> {
    const position = checkCount(n, 'message position', 1);
    const path = `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}/position/${position}`;
    return expectObject(await this.http.json({ method: 'GET', path }), 'peeked message') as AdminMessage;
  }

  /**
   * The first `count` messages of a subscription's backlog, without consuming them. As Pulsar's,
   * stops early (returning fewer) when the backlog is shorter; an empty backlog fails with 404.
   * Costs one request per message.
   * @example const messages = await admin.topics().peekMessages('my-tenant/my-ns/orders', 'billing', 10);
   */
  async peekMessages(topic: string, subscription: string, count: number): Promise<readonly AdminMessage[]> {
    checkCount(count, 'message count', 1);
    const messages: AdminMessage[] = [];
    for (let n = 1; n <= count; n++) {
      try {
        messages.push(await this.peekNthMessage(topic, subscription, n));
      } catch (error) {
        if (n > 1 && error instanceof AcklineAdminError && error.statusCode === 404) break;
        throw error;
      }
    }
    return messages;
  }

  /**
   * The message stored at a position.
   * @example const message = await admin.topics().getMessageById('my-tenant/my-ns/orders', '12', '3');
   */
  async getMessageById(topic: string, ledgerId: EntryIdInput, entryId: EntryIdInput): Promise<AdminMessage> {
    const path = `${topicPath(topic)}/ledger/${entryIdText(ledgerId, 'ledgerId')}/entry/${entryIdText(entryId, 'entryId')}`;
    return expectObject(await this.http.json({ method: 'GET', path }), 'message') as AdminMessage;
  }

  /**
   * Skips (acknowledges) the next `numMessages` messages of a subscription's backlog.
   * @example await admin.topics().skipMessages('my-tenant/my-ns/orders', 'billing', 5);
   */
  async skipMessages(topic: string, subscription: string, numMessages: number): Promise<void> {
    const count = checkCount(numMessages, 'message count', 0);
    await this.http.send({
      method: 'POST',
      path: `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}/skip/${count}`,
    });
  }

  /**
   * Skips (acknowledges) the given messages of a subscription. Ids are sent as exact JSON integers.
   * @example await admin.topics().skipMessagesByIds('my-tenant/my-ns/orders', 'billing', [{ ledgerId: '12', entryId: '3' }]);
   */
  async skipMessagesByIds(
    topic: string,
    subscription: string,
    positions: readonly MessagePosition[],
  ): Promise<void> {
    const messageIds = positions.map((position) => ({
      ledgerId: BigInt(entryIdText(position.ledgerId, 'ledgerId')),
      entryId: BigInt(entryIdText(position.entryId, 'entryId')),
    }));
    await this.http.send({
      method: 'POST',
      path: `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}/skipByMessageIds`,
      body: { type: 'messageId', messageIds },
    });
  }

  /**
   * Resets a subscription's cursor (Pulsar's `resetCursor`): to the first message published at or
   * after `timestampMs` (a number), or to a message id (`{ ledgerId, entryId }`, after it with
   * `isExcluded`), or to `'earliest'` / `'latest'` (Pulsar's MessageId.earliest and .latest, on
   * every partition). Messages from there on are delivered again, as first deliveries; on a
   * partitioned topic a timestamp resets every partition, a message id the partition holding it.
   * With `dryRun`, nothing moves and the server's report of where each cursor would go is returned.
   * @example
   * await admin.topics().resetCursor('my-tenant/my-ns/orders', 'billing', Date.now() - 3_600_000);
   * await admin.topics().resetCursor('my-tenant/my-ns/orders', 'billing', { ledgerId: '12', entryId: '3' });
   * await admin.topics().resetCursor('my-tenant/my-ns/orders', 'billing', 'earliest');
   */
  async resetCursor(
    topic: string,
    subscription: string,
    to: number | 'earliest' | 'latest' | (MessagePosition & { readonly isExcluded?: boolean }),
    options: { readonly dryRun?: boolean } = {},
  ): Promise<JsonValue | undefined> {
    const base = `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}/resetcursor`;
    const query: [string, string][] = options.dryRun ? [['dryRun', 'true']] : [];
    if (typeof to === 'number') {
      return this.http.send({ method: 'POST', path: `${base}/${checkCount(to, 'timestamp', 0)}`, query });
    }
    if (to === 'earliest' || to === 'latest') {
      // Pulsar's MessageId.earliest is -1:-1, MessageId.latest Long.MAX_VALUE twice.
      const id = to === 'earliest' ? -1n : 9_223_372_036_854_775_807n;
      return this.http.send({ method: 'POST', path: base, query, body: { ledgerId: id, entryId: id } });
    }
    const body = {
      ledgerId: BigInt(entryIdText(to.ledgerId, 'ledgerId')),
      entryId: BigInt(entryIdText(to.entryId, 'entryId')),
      // Pulsar's ResetCursorData field is sent as `excluded` (what pulsar-admin sends).
      ...(to.isExcluded ? { excluded: true } : {}),
    };
    return this.http.send({ method: 'POST', path: base, query, body });
  }

  /**
   * Skips every message of a subscription's backlog (Pulsar's `skipAllMessages`, pulsar-admin
   * `clear-backlog`).
   * @example await admin.topics().skipAllMessages('my-tenant/my-ns/orders', 'billing');
   */
  async skipAllMessages(
    topic: string,
    subscription: string,
    options: { readonly dryRun?: boolean } = {},
  ): Promise<JsonValue | undefined> {
    return this.http.send({
      method: 'POST',
      path: `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}/skip_all`,
      query: options.dryRun ? [['dryRun', 'true']] : [],
    });
  }

  /**
   * Acknowledges every message of a subscription published more than `expireTimeInSeconds` ago
   * (Pulsar's `expireMessages`).
   * @example await admin.topics().expireMessages('my-tenant/my-ns/orders', 'billing', 3600);
   */
  async expireMessages(
    topic: string,
    subscription: string,
    expireTimeInSeconds: number,
    options: { readonly dryRun?: boolean } = {},
  ): Promise<JsonValue | undefined> {
    return this.expire(
      `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}`,
      expireTimeInSeconds,
      options,
    );
  }

  /**
   * {@link expireMessages} on every subscription of the topic (Pulsar's
   * `expireMessagesForAllSubscriptions`).
   * @example await admin.topics().expireMessagesForAllSubscriptions('my-tenant/my-ns/orders', 3600);
   */
  async expireMessagesForAllSubscriptions(
    topic: string,
    expireTimeInSeconds: number,
    options: { readonly dryRun?: boolean } = {},
  ): Promise<JsonValue | undefined> {
    return this.expire(`${topicPath(topic)}/all_subscription`, expireTimeInSeconds, options);
  }

  private expire(
    base: string,
    expireTimeInSeconds: number,
    options: { readonly dryRun?: boolean },
  ): Promise<JsonValue | undefined> {
    const seconds = checkCount(expireTimeInSeconds, 'expireTimeInSeconds', 0);
    return this.http.send({
      method: 'POST',
      path: `${base}/expireMessages/${seconds}`,
      query: options.dryRun ? [['dryRun', 'true']] : [],
    });
  }

  /**
   * Acknowledges one message on the named subscriptions, or on all of them (PIP-423). Resolves to the
   * server's report when it sends one (a dry run), else to undefined. A 412 means the message could
   * not be acknowledged as asked; the error's `reason` says why.
   *
   * Two forms: Pulsar's positional `(topic, ledgerId, entryId, subscriptionNames?)`, and an options
   * object that can also ask for a dry run.
   * @example
   * await admin.topics().acknowledgeMessage('my-tenant/my-ns/orders', '18446744073709551615', 3, ['billing', 'audit']);
   * await admin.topics().acknowledgeMessage('my-tenant/my-ns/orders', {
   *   ledgerId: '18446744073709551615',
   *   entryId: '3',
   *   subscriptionNames: ['billing', 'audit'],
   * });
   */
  async acknowledgeMessage(topic: string, request: AcknowledgeMessageRequest): Promise<JsonValue | undefined>;
  /**
   * Pulsar's positional form: acknowledges `ledgerId:entryId` on `subscriptionNames`, or on every
   * subscription when absent or empty.
   * @example await admin.topics().acknowledgeMessage('my-tenant/my-ns/orders', 12, 3, ['billing']);
   */
  async acknowledgeMessage(
    topic: string,
    ledgerId: EntryIdInput,
    entryId: EntryIdInput,
    subscriptionNames?: readonly string[],
  ): Promise<JsonValue | undefined>;
  async acknowledgeMessage(
    topic: string,
    requestOrLedgerId: AcknowledgeMessageRequest | EntryIdInput,
    entryId?: EntryIdInput,
    subscriptionNames?: readonly string[],
  ): Promise<JsonValue | undefined> {
    const request: AcknowledgeMessageRequest =
      typeof requestOrLedgerId === 'object' && requestOrLedgerId !== null
        ? requestOrLedgerId
        : { ledgerId: requestOrLedgerId, entryId: entryId as EntryIdInput, subscriptionNames };
    const query: [string, string][] = [
      ['ledgerId', entryIdText(request.ledgerId, 'ledgerId')],
      ['entryId', entryIdText(request.entryId, 'entryId')],
    ];
    for (const name of request.subscriptionNames ?? []) {
      if (name.length === 0) throw new AcklineAdminArgumentError('Invalid subscription name: it is empty');
      query.push(['subscriptionNames', name]);
    }
    if (request.dryRun) query.push(['dryRun', 'true']);
    return this.http.send({ method: 'POST', path: `${topicPath(topic)}/acknowledgeMessage`, query });
  }

  /**
   * Acknowledges many messages at once on chosen subscriptions (all when none is named), all or
   * nothing (ackline's extension of PIP-423's acknowledgeMessage); with `dryRun`, the per-id report.
   * @example await admin.topics().acknowledgeMessages('my-tenant/my-ns/orders', ['12:3', '12:4'], { subscriptionNames: ['billing'] });
   */
  async acknowledgeMessages(
    topic: string,
    messageIds: readonly string[],
    options: { readonly subscriptionNames?: readonly string[]; readonly dryRun?: boolean } = {},
  ): Promise<JsonValue | undefined> {
    const query: [string, string][] = (options.subscriptionNames ?? []).map((name) => [
      'subscriptionNames',
      name,
    ]);
    if (options.dryRun) query.push(['dryRun', 'true']);
    const path = `${topicPath(topic)}/acknowledgeMessage`;
    return this.http.send({ method: 'POST', path, query, body: { messageIds: [...messageIds] } });
  }

  /**
   * What waits on a subscription, in due-time order: delayed messages, nack backoffs, ack
   * timeouts, a gone consumer's messages (`{ messages, nextPageToken }`), or with
   * `histogramSeconds` the counts per bucket.
   * @example const page = await admin.topics().getScheduledMessages('my-tenant/my-ns/orders', 'billing', { limit: 50 });
   */
  async getScheduledMessages(
    topic: string,
    subscription: string,
    query: ScheduledQuery = {},
  ): Promise<JsonValue | undefined> {
    return getScheduled(this.http, { topic, subscription }, query);
  }

  /**
   * What each consumer of a subscription holds (handed out, not acknowledged) and when it comes back.
   * @example const held = await admin.topics().getPendingMessages('my-tenant/my-ns/orders', 'billing', { consumer: 'c-1' });
   */
  async getPendingMessages(
    topic: string,
    subscription: string,
    query: PendingQuery = {},
  ): Promise<JsonValue | undefined> {
    return getPending(this.http, { topic, subscription }, query);
  }

  /**
   * For one message on a subscription, its next `count` redeliveries under a consumer's policy,
   * for nack and for ack timeout separately (earliest and latest, jitter included), and the count
   * at which it is dead-lettered.
   * @example const preview = await admin.topics().previewRedeliveries('my-tenant/my-ns/orders', 'billing', { messageId: '12:3', count: 5 });
   */
  async previewRedeliveries(
    topic: string,
    subscription: string,
    query: { readonly messageId: string; readonly consumer?: string; readonly count?: number },
  ): Promise<JsonValue | undefined> {
    return getPreview(this.http, { topic, subscription }, query);
  }

  /**
   * Moves one waiting message's due time on a subscription (never into the past; earlier than its
   * consumer's policy only with `earlier`); with `dryRun`, what would change.
   * @example await admin.topics().rescheduleMessage('my-tenant/my-ns/orders', 'billing', { messageId: '12:3', deliverAt: Date.now() + 60_000 });
   */
  async rescheduleMessage(
    topic: string,
    subscription: string,
    request: RescheduleRequest,
  ): Promise<JsonValue | undefined> {
    return postReschedule(this.http, { topic, subscription }, request);
  }

  /**
   * The audit trail of admin acknowledgements on a topic.
   * @example const records = await admin.topics().getAcknowledgeMessageAudit('my-tenant/my-ns/orders');
   */
  async getAcknowledgeMessageAudit(topic: string): Promise<readonly JsonValue[]> {
    const path = `${topicPath(topic)}/acknowledgeMessage/audit`;
    return expectArray(await this.http.json({ method: 'GET', path }), 'acknowledge audit');
  }

  /**
   * Grants `role` the `actions` on a topic (replacing its previous grant on the topic).
   * @example await admin.topics().grantPermission('my-tenant/my-ns/orders', 'ops', ['consume', 'acknowledge_message']);
   */
  async grantPermission(
    topic: string,
    role: string,
    actions: readonly (AuthAction | string)[],
  ): Promise<void> {
    await this.http.send({
      method: 'POST',
      path: `${topicPath(topic)}/permissions/${pathSegment(role, 'role')}`,
      body: [...actions],
    });
  }

  /**
   * Revokes every action granted to `role` on a topic.
   * @example await admin.topics().revokePermissions('my-tenant/my-ns/orders', 'ops');
   */
  async revokePermissions(topic: string, role: string): Promise<void> {
    await this.http.send({
      method: 'DELETE',
      path: `${topicPath(topic)}/permissions/${pathSegment(role, 'role')}`,
    });
  }

  /**
   * The permissions on a topic, role -> actions.
   * @example const permissions = await admin.topics().getPermissions('my-tenant/my-ns/orders'); // { ops: ['consume'] }
   */
  async getPermissions(topic: string): Promise<PermissionMap> {
    const path = `${topicPath(topic)}/permissions`;
    return expectPermissionMap(await this.http.json({ method: 'GET', path }));
  }

  /**
   * Sets a topic's own retention, over its namespace's (Pulsar's `POST .../{topic}/retention`).
   * @example await admin.topics().setRetention('my-tenant/my-ns/orders', { retentionTimeInMinutes: 60, retentionSizeInMB: -1 });
   */
  async setRetention(topic: string, retention: RetentionPolicies): Promise<void> {
    await this.http.send({
      method: 'POST',
      path: `${topicPath(topic)}/retention`,
      body: { ...retentionBody(retention) },
    });
  }

  /**
   * A topic's own retention, or undefined when it has none; with `applied`, the one in force (its
   * own, else its namespace's, else the deployment's default).
   * @example const retention = await admin.topics().getRetention('my-tenant/my-ns/orders', true);
   */
  async getRetention(topic: string, applied = false): Promise<RetentionPolicies | undefined> {
    return retentionAnswer(
      await this.http.send({
        method: 'GET',
        path: `${topicPath(topic)}/retention`,
        query: [['applied', String(applied)]],
      }),
    );
  }

  /**
   * Removes a topic's own retention: its namespace's applies again.
   * @example await admin.topics().removeRetention('my-tenant/my-ns/orders');
   */
  async removeRetention(topic: string): Promise<void> {
    await this.http.send({ method: 'DELETE', path: `${topicPath(topic)}/retention` });
  }

  /**
   * Sets a topic's own message TTL in seconds (Pulsar's `POST .../{topic}/messageTTL?messageTTL=N`).
   * @example await admin.topics().setMessageTTL('my-tenant/my-ns/orders', 3600);
   */
  async setMessageTTL(topic: string, ttlInSeconds: number): Promise<void> {
    await this.http.send({
      method: 'POST',
      path: `${topicPath(topic)}/messageTTL`,
      query: [['messageTTL', String(checkedTtlSeconds(ttlInSeconds))]],
    });
  }

  /**
   * A topic's own message TTL in seconds, or undefined when it has none; with `applied`, the one in
   * force.
   * @example const ttlSeconds = await admin.topics().getMessageTTL('my-tenant/my-ns/orders', true);
   */
  async getMessageTTL(topic: string, applied = false): Promise<number | undefined> {
    return ttlAnswer(
      await this.http.send({
        method: 'GET',
        path: `${topicPath(topic)}/messageTTL`,
        query: [['applied', String(applied)]],
      }),
    );
  }

  /**
   * Removes a topic's own message TTL: its namespace's applies again.
   * @example await admin.topics().removeMessageTTL('my-tenant/my-ns/orders');
   */
  async removeMessageTTL(topic: string): Promise<void> {
    await this.http.send({ method: 'DELETE', path: `${topicPath(topic)}/messageTTL` });
  }
  /**
   * Sets how many subscriptions the topic (each partition) may have, over its namespace's (Pulsar's
   * `POST .../{topic}/maxSubscriptionsPerTopic`, body the number; 0: no limit). One more is refused (412).
   * @example await admin.topics().setMaxSubscriptionsPerTopic('my-tenant/my-ns/orders', 50);
   */
  async setMaxSubscriptionsPerTopic(topic: string, maxSubscriptionsPerTopic: number): Promise<void> {
    await setTopicLimit(this.http, topic, ['maxSubscriptionsPerTopic', maxSubscriptionsPerTopic]);
  }

  /**
   * The topic's own maxSubscriptionsPerTopic, or undefined when it has none; with `applied`, the
   * one in force (its own, else its namespace's, else ackline's default, 1,000).
   * @example const max = await admin.topics().getMaxSubscriptionsPerTopic('my-tenant/my-ns/orders', true);
   */
  async getMaxSubscriptionsPerTopic(topic: string, applied = false): Promise<number | undefined> {
    return getTopicLimit(this.http, topic, 'maxSubscriptionsPerTopic', applied);
  }

  /**
   * Removes the topic's own maxSubscriptionsPerTopic: its namespace's applies again.
   * @example await admin.topics().removeMaxSubscriptionsPerTopic('my-tenant/my-ns/orders');
   */
  async removeMaxSubscriptionsPerTopic(topic: string): Promise<void> {
    await this.http.send({ method: 'DELETE', path: `${topicPath(topic)}/maxSubscriptionsPerTopic` });
  }

  /**
   * Sets how many consumers each subscription of the topic may have connected, over its
   * namespace's (Pulsar's `POST .../{topic}/maxConsumersPerSubscription`; 0: no limit). One more
   * is refused (409).
   * @example await admin.topics().setMaxConsumersPerSubscription('my-tenant/my-ns/orders', 10);
   */
  async setMaxConsumersPerSubscription(topic: string, maxConsumersPerSubscription: number): Promise<void> {
    await setTopicLimit(this.http, topic, ['maxConsumersPerSubscription', maxConsumersPerSubscription]);
  }

  /**
   * The topic's own maxConsumersPerSubscription, or undefined when it has none; with `applied`,
   * the one in force.
   * @example const max = await admin.topics().getMaxConsumersPerSubscription('my-tenant/my-ns/orders', true);
   */
  async getMaxConsumersPerSubscription(topic: string, applied = false): Promise<number | undefined> {
    return getTopicLimit(this.http, topic, 'maxConsumersPerSubscription', applied);
  }

  /**
   * Removes the topic's own maxConsumersPerSubscription: its namespace's applies again.
   * @example await admin.topics().removeMaxConsumersPerSubscription('my-tenant/my-ns/orders');
   */
  async removeMaxConsumersPerSubscription(topic: string): Promise<void> {
    await this.http.send({ method: 'DELETE', path: `${topicPath(topic)}/maxConsumersPerSubscription` });
  }
}

async function setTopicLimit(
  http: AdminHttp,
  topic: string,
  [name, value]: readonly [SubscriptionLimit, number],
): Promise<void> {
  await http.send({ method: 'POST', path: `${topicPath(topic)}/${name}`, body: checkedLimit(name, value) });
}

async function getTopicLimit(
  http: AdminHttp,
  topic: string,
  name: SubscriptionLimit,
  applied: boolean,
): Promise<number | undefined> {
  const path = `${topicPath(topic)}/${name}`;
  return limitAnswer(await http.send({ method: 'GET', path, query: [['applied', String(applied)]] }), name);
}
