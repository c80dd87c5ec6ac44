import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { bodyStringBytes, LAMBDA_PAYLOAD_LIMIT_BYTES } from '../../shared/http/lambda-payload.ts';
import { hs256Token } from './hs256-token.ts';
import { call, type HttpResult } from './http-client.ts';

/**
 * Helpers for the integration suites that talk to an embedded stack over HTTP: tokens for roles,
 * names that no other suite uses (the suites share one stack and run in parallel), and a thin
 * admin API wrapper whose Arrange helpers fail loudly when the stack answers something else.
 */

/** The superuser role of a stack started without ACKLINE_SUPERUSER_ROLES. */
export const SUPERUSER_ROLE = 'admin';

/** What a proxy event holds besides the messages of a produce request (headers, context): well under this. */
const EVENT_MARGIN_BYTES = 64 * 1024;

/** The tenant every integration suite writes under; namespaces keep suites apart. */
export const TEST_TENANT = 'ackline-it';

export type SubscriptionType = 'Exclusive' | 'Failover' | 'Shared' | 'Key_Shared';
export type AuthAction = 'produce' | 'consume' | 'acknowledge_message';

/**
 * An HS256 token whose subject is `role`, signed with the shared stack's secret unless told.
 * @example const token = tokenFor('ops', { expiresInSeconds: -60 }); // expired a minute ago
 */
export function tokenFor(
  role: string,
  options: { readonly expiresInSeconds?: number; readonly secret?: string } = {},
): string {
  const secret = options.secret ?? inject('acklineTokenSecret');
  const claims =
    options.expiresInSeconds === undefined
      ? { sub: role }
      : { sub: role, exp: Math.floor(Date.now() / 1000) + options.expiresInSeconds };
  return hs256Token(claims, secret);
}

/** A role name no other test uses, so grants made for it affect nobody else. */
export function uniqueRole(label = 'role'): string {
  return `${label}-${suffix()}`;
}

function suffix(): string {
  return `${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** A namespace of {@link TEST_TENANT} that no other test uses. */
export class NamespaceRef {
  constructor(
    readonly tenant: string,
    readonly namespace: string,
  ) {}

  static unique(label = 'ns'): NamespaceRef {
    return new NamespaceRef(TEST_TENANT, `${label}-${suffix()}`);
  }

  /** `tenant/namespace`. */
  get name(): string {
    return `${this.tenant}/${this.namespace}`;
  }

  /** `/admin/v2/{domain}/{tenant}/{namespace}`. */
  adminPath(domain: 'persistent' | 'non-persistent' = 'persistent'): string {
    return `/admin/v2/${domain}/${this.tenant}/${this.namespace}`;
  }

  /** `/admin/v2/namespaces/{tenant}/{namespace}/permissions`. */
  get permissionsPath(): string {
    return `/admin/v2/namespaces/${this.tenant}/${this.namespace}/permissions`;
  }

  topic(localName: string): TopicRef {
    return new TopicRef(this, localName);
  }
}

/** A persistent topic and the REST paths that address it. */
export class TopicRef {
  constructor(
    readonly namespace: NamespaceRef,
    /** The name inside the namespace (may be `x-partition-i`). */
    readonly localName: string,
  ) {}

  /** A topic in a namespace of its own. */
  static unique(label = 'topic'): TopicRef {
    return NamespaceRef.unique(label).topic(label);
  }

  /** `persistent://tenant/ns/topic`. */
  get name(): string {
    return `persistent://${this.namespace.name}/${this.localName}`;
  }

  /** `tenant/ns/topic`, as the CLI accepts it. */
  get shortName(): string {
    return `${this.namespace.name}/${this.localName}`;
  }

  /** `/admin/v2/persistent/tenant/ns/topic`. */
  get adminPath(): string {
    return `${this.namespace.adminPath('persistent')}/${encodeURIComponent(this.localName)}`;
  }

  /** `/admin/v2/non-persistent/tenant/ns/topic`. */
  get nonPersistentAdminPath(): string {
    return `${this.namespace.adminPath('non-persistent')}/${encodeURIComponent(this.localName)}`;
  }

  /** `/admin/v1/persistent/property/cluster/ns/topic`. */
  v1AdminPath(cluster: string): string {
    return `/admin/v1/persistent/${this.namespace.tenant}/${cluster}/${this.namespace.namespace}/${encodeURIComponent(this.localName)}`;
  }

  /** `/topics/persistent/tenant/ns/topic` (REST produce). */
  get producePath(): string {
    return `/topics/persistent/${this.namespace.name}/${encodeURIComponent(this.localName)}`;
  }

  partition(index: number): TopicRef {
    return new TopicRef(this.namespace, `${this.localName}-partition-${index}`);
  }
}

/** `L:E:P` as the produce and admin APIs write message ids. */
export interface MessageIdParts {
  readonly ledgerId: string;
  readonly entryId: string;
  readonly partition: number;
  /** `L:E`. */
  readonly position: string;
}

export function parseMessageId(messageId: string): MessageIdParts {
  const match = /^(\d+):(\d+):(-?\d+)$/.exec(messageId);
  if (!match) throw new Error(`Not a message id L:E:P: '${messageId}'`);
  const [, ledgerId, entryId, partition] = match as unknown as [string, string, string, string];
  return { ledgerId, entryId, partition: Number(partition), position: `${ledgerId}:${entryId}` };
}

export interface NewMessage {
  readonly payload: string;
  readonly key?: string;
  readonly properties?: Record<string, string>;
  readonly eventTime?: number;
  readonly deliverAt?: number;
  readonly deliverAfterMs?: number;
}

export interface SubscriptionStatsBody {
  readonly type: string;
  readonly msgBacklog: number;
  readonly unackedMessages: number;
  readonly msgRedeliverCounter: number;
}

export interface TopicStatsBody {
  readonly msgInCounter: number;
  readonly subscriptions: Record<string, SubscriptionStatsBody>;
  readonly metadata?: { readonly partitions: number };
  readonly partitions?: Record<string, TopicStatsBody>;
}

export interface CursorStatsBody {
  readonly markDeletePosition: string;
  readonly readPosition: string;
  readonly individuallyDeletedMessages: string;
}

export interface InternalStatsBody {
  readonly entriesAddedCounter: number;
  readonly ledgers: readonly { readonly ledgerId: number | string; readonly entries: number }[];
  readonly cursors: Record<string, CursorStatsBody>;
}

export interface AcknowledgeParams {
  readonly ledgerId?: string;
  readonly entryId?: string;
  /** Each sent as its own `subscriptionNames=` parameter. */
  readonly subscriptionNames?: readonly string[];
  readonly dryRun?: boolean;
  /** Extra raw query text appended as is, e.g. `subscriptionNames=a,b`. */
  readonly rawQuery?: string;
}

/** Builds the query string of `POST .../acknowledgeMessage`. */
export function acknowledgeQuery(params: AcknowledgeParams): string {
  const parts: string[] = [];
  if (params.ledgerId !== undefined) parts.push(`ledgerId=${encodeURIComponent(params.ledgerId)}`);
  if (params.entryId !== undefined) parts.push(`entryId=${encodeURIComponent(params.entryId)}`);
  for (const name of params.subscriptionNames ?? []) {
    parts.push(`subscriptionNames=${encodeURIComponent(name)}`);
  }
  if (params.dryRun) parts.push('dryRun=true');
  if (params.rawQuery) parts.push(params.rawQuery);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/**
 * The admin and produce APIs of one stack, called as one role. `send` returns whatever the stack
 * answers (for the Act step); the other methods are Arrange helpers that throw, quoting the
 * answer, unless the stack answers the expected status.
 */
export class AdminApi {
  constructor(
    readonly url: string,
    /** Undefined: no Authorization header. */
    readonly token: string | undefined,
  ) {}

  /** The shared stack, as the superuser. */
  static shared(): AdminApi {
    return new AdminApi(inject('acklineUrl'), tokenFor(SUPERUSER_ROLE));
  }

  /** The same stack as another role (a fresh token signed with the shared secret unless told). */
  as(role: string, secret?: string): AdminApi {
    return new AdminApi(this.url, tokenFor(role, secret === undefined ? {} : { secret }));
  }

  withToken(token: string | undefined): AdminApi {
    return new AdminApi(this.url, token);
  }

  send(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string } = {},
  ): Promise<HttpResult> {
    return call(this.url, method, path, { ...options, ...(this.token ? { token: this.token } : {}) });
  }

  async expectStatus(
    status: number,
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string } = {},
  ): Promise<HttpResult> {
    const result = await this.send(method, path, options);
    if (result.status !== status) {
      throw new Error(`${method} ${path} answered ${result.status}, expected ${status}: ${result.text}`);
    }
    return result;
  }

  async createTopic(topic: TopicRef, partitions = 0): Promise<void> {
    if (partitions === 0) await this.expectStatus(204, 'PUT', topic.adminPath);
    else await this.expectStatus(204, 'PUT', `${topic.adminPath}/partitions`, { body: partitions });
  }

  async createSubscription(
    topic: TopicRef,
    subscription: string,
    options: { type?: SubscriptionType; initialPosition?: 'Earliest' | 'Latest' } = {},
  ): Promise<void> {
    await this.expectStatus(
      204,
      'PUT',
      `${topic.adminPath}/subscription/${encodeURIComponent(subscription)}?subscriptionType=${options.type ?? 'Shared'}`,
      { body: { initialPosition: options.initialPosition ?? 'Earliest' } },
    );
  }

  /** Produces and returns the message ids, in order. */
  async produce(topic: TopicRef, messages: readonly NewMessage[]): Promise<string[]> {
    const result = await this.expectStatus(200, 'POST', topic.producePath, { body: { messages } });
    const body = result.body as { messagePublishResults: { messageId: string; errorCode: number }[] };
    return body.messagePublishResults.map((entry) => entry.messageId);
  }

  /**
   * Produces `messages` in as few requests as keep each one's proxy event within Lambda's 6 MB
   * (a message counts as the event's body string carries it: JSON, escaped again), and returns
   * their ids, in order. A request over the limit is refused with 413, as on AWS.
   */
  async produceWithinLimit(topic: TopicRef, messages: readonly NewMessage[]): Promise<string[]> {
    const room = LAMBDA_PAYLOAD_LIMIT_BYTES - EVENT_MARGIN_BYTES;
    const ids: string[] = [];
    let batch: NewMessage[] = [];
    let bytes = 0;
    for (const message of messages) {
      const size = bodyStringBytes(JSON.stringify(message)) + 1;
      if (batch.length > 0 && bytes + size > room) {
        ids.push(...(await this.produce(topic, batch)));
        batch = [];
        bytes = 0;
      }
      batch.push(message);
      bytes += size;
    }
    if (batch.length > 0) ids.push(...(await this.produce(topic, batch)));
    return ids;
  }

  /** Produces `count` messages `m0`, `m1`, ... one request, and returns their ids. */
  produceMany(topic: TopicRef, count: number, prefix = 'm'): Promise<string[]> {
    return this.produce(
      topic,
      Array.from({ length: count }, (_, i) => ({ payload: `${prefix}${i}` })),
    );
  }

  async stats(topic: TopicRef): Promise<TopicStatsBody> {
    return (await this.expectStatus(200, 'GET', `${topic.adminPath}/stats`)).body as TopicStatsBody;
  }

  async internalStats(topic: TopicRef): Promise<InternalStatsBody> {
    return (await this.expectStatus(200, 'GET', `${topic.adminPath}/internalStats`))
      .body as InternalStatsBody;
  }

  /** `{ sub: msgBacklog }` of every subscription. */
  async backlogs(topic: TopicRef): Promise<Record<string, number>> {
    const stats = await this.stats(topic);
    return Object.fromEntries(
      Object.entries(stats.subscriptions).map(([name, sub]) => [name, sub.msgBacklog]),
    );
  }

  /** `{ sub: { markDeletePosition, individuallyDeletedMessages } }` of every cursor. */
  async cursors(topic: TopicRef): Promise<Record<string, { markDelete: string; individual: string }>> {
    const stats = await this.internalStats(topic);
    return Object.fromEntries(
      Object.entries(stats.cursors).map(([name, cursor]) => [
        name,
        { markDelete: cursor.markDeletePosition, individual: cursor.individuallyDeletedMessages },
      ]),
    );
  }

  async grant(topic: TopicRef, role: string, actions: readonly AuthAction[]): Promise<void> {
    await this.expectStatus(204, 'POST', `${topic.adminPath}/permissions/${encodeURIComponent(role)}`, {
      body: actions,
    });
  }

  async grantOnNamespace(
    namespace: NamespaceRef,
    role: string,
    actions: readonly AuthAction[],
  ): Promise<void> {
    await this.expectStatus(204, 'POST', `${namespace.permissionsPath}/${encodeURIComponent(role)}`, {
      body: actions,
    });
  }

  acknowledge(topic: TopicRef, params: AcknowledgeParams): Promise<HttpResult> {
    return this.send('POST', `${topic.adminPath}/acknowledgeMessage${acknowledgeQuery(params)}`);
  }
}

/**
 * Stats without their rates (msgRate*, msgThroughput*): a rate is the counters' growth over a
 * window that ends at the call, so it changes with time alone; every counter and state stays.
 */
export function withoutRates(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRates);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => !/^msg(Rate|Throughput)/.test(key))
      .map(([key, inner]) => [key, withoutRates(inner)]),
  );
}
