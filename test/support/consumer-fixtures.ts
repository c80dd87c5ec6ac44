import { inject } from 'vitest';
import { SUPERUSER_ROLE, type SubscriptionType, type TopicRef, tokenFor } from './admin-fixtures.ts';
import { call, type HttpResult } from './http-client.ts';

/**
 * A tiny HTTP consumer for the integration suites, written against the data API's wire format
 * (issue 4) and nothing else: `ConsumerApi` subscribes, `TestConsumer` receives, acknowledges,
 * nacks, redelivers and closes. `send*` methods return whatever the stack answers (for the Act
 * step); the others are Arrange helpers that throw, quoting the answer, on an unexpected status.
 */

/** A backoff as the consumer API takes it: the Multiplier shorthand or a class name with params. */
export type BackoffBody =
  | { readonly minDelayMs?: number; readonly maxDelayMs?: number; readonly multiplier?: number }
  | { readonly className: string; readonly params?: unknown };

/** The subscribe body of `POST /consumers/persistent/{tenant}/{namespace}/{topic}/subscription/{sub}`. */
export interface SubscribeBody {
  readonly subscriptionType: SubscriptionType;
  readonly consumerName?: string;
  readonly subscriptionInitialPosition?: 'Latest' | 'Earliest';
  readonly ackTimeoutMs?: number;
  readonly leaseMs?: number;
  readonly ackTimeoutRedeliveryBackoff?: BackoffBody;
  readonly negativeAckRedeliveryDelayMs?: number;
  readonly negativeAckRedeliveryBackoff?: BackoffBody;
  readonly deadLetterPolicy?: {
    readonly maxRedeliverCount: number;
    readonly deadLetterTopic?: string;
    readonly initialSubscriptionName?: string;
  };
}

/** One message of a receive answer. */
export interface ReceivedMessage {
  readonly messageId: string;
  readonly payload: string;
  readonly key: string | null;
  readonly properties: Record<string, string>;
  readonly redeliveryCount: number;
  readonly publishTime: number;
  readonly eventTime: number | null;
  readonly deliveryHandle: string;
}

/** A received message and when (client clock, after the answer arrived) it was received. */
export interface TimedMessage extends ReceivedMessage {
  readonly receivedAtMs: number;
}

function expectStatus(result: HttpResult, status: number, what: string): HttpResult {
  if (result.status !== status) {
    throw new Error(`${what} answered ${result.status}, expected ${status}: ${result.text}`);
  }
  return result;
}

/** `/consumers/persistent/tenant/ns/topic/subscription/sub`. */
export function subscribePath(topic: TopicRef, subscription: string): string {
  return `/consumers/persistent/${topic.namespace.name}/${encodeURIComponent(topic.localName)}/subscription/${encodeURIComponent(subscription)}`;
}

/** The consumer API of one stack, called as one role. */
export class ConsumerApi {
  constructor(
    readonly url: string,
    /** Undefined: no Authorization header. */
    readonly token: string | undefined,
  ) {}

  /** The shared stack, as the superuser. */
  static shared(): ConsumerApi {
    return new ConsumerApi(inject('acklineUrl'), tokenFor(SUPERUSER_ROLE));
  }

  /** The same stack as another role (signed with the shared secret unless told). */
  as(role: string, secret?: string): ConsumerApi {
    return new ConsumerApi(this.url, tokenFor(role, secret === undefined ? {} : { secret }));
  }

  withToken(token: string | undefined): ConsumerApi {
    return new ConsumerApi(this.url, token);
  }

  send(method: string, path: string, options: { body?: unknown; rawBody?: string } = {}) {
    return call(this.url, method, path, { ...options, ...(this.token ? { token: this.token } : {}) });
  }

  /** Act: the raw subscribe answer. */
  sendSubscribe(topic: TopicRef, subscription: string, body: SubscribeBody | unknown): Promise<HttpResult> {
    return this.send('POST', subscribePath(topic, subscription), { body });
  }

  /** Arrange: subscribes (200) and returns the consumer. */
  async subscribe(topic: TopicRef, subscription: string, body: SubscribeBody): Promise<TestConsumer> {
    const result = expectStatus(
      await this.sendSubscribe(topic, subscription, body),
      200,
      `subscribe ${topic.name} ${subscription}`,
    );
    const { consumerId } = result.body as { consumerId: string };
    if (typeof consumerId !== 'string' || consumerId.length === 0) {
      throw new Error(`subscribe answered no consumerId: ${result.text}`);
    }
    return new TestConsumer(this, consumerId);
  }

  /** A handle on a consumer id (e.g. one created by another role, or one that does not exist). */
  consumer(consumerId: string): TestConsumer {
    return new TestConsumer(this, consumerId);
  }
}

/** One consumer id on one stack. */
export class TestConsumer {
  constructor(
    readonly api: ConsumerApi,
    readonly id: string,
  ) {}

  get path(): string {
    return `/consumers/${encodeURIComponent(this.id)}`;
  }

  /** The same consumer id, called with another role's token. */
  as(api: ConsumerApi): TestConsumer {
    return new TestConsumer(api, this.id);
  }

  sendReceive(query: { maxMessages?: number | string; waitMs?: number | string } = {}): Promise<HttpResult> {
    const params = new URLSearchParams();
    if (query.maxMessages !== undefined) params.set('maxMessages', String(query.maxMessages));
    if (query.waitMs !== undefined) params.set('waitMs', String(query.waitMs));
    const text = params.toString();
    return this.api.send('POST', `${this.path}/receive${text ? `?${text}` : ''}`);
  }

  sendAck(body: {
    messageIds?: readonly string[];
    deliveryHandles?: readonly string[];
  }): Promise<HttpResult> {
    return this.api.send('POST', `${this.path}/ack`, { body });
  }

  sendAckCumulative(messageId: string): Promise<HttpResult> {
    return this.api.send('POST', `${this.path}/ack-cumulative`, { body: { messageId } });
  }

  sendNack(body: {
    messageIds?: readonly string[];
    deliveryHandles?: readonly string[];
  }): Promise<HttpResult> {
    return this.api.send('POST', `${this.path}/nack`, { body });
  }

  sendRedeliverUnacknowledged(deliveryHandles?: readonly string[]): Promise<HttpResult> {
    return this.api.send(
      'POST',
      `${this.path}/redeliver-unacknowledged`,
      deliveryHandles ? { body: { deliveryHandles } } : {},
    );
  }

  sendClose(): Promise<HttpResult> {
    return this.api.send('DELETE', this.path);
  }

  /** One receive call (200), each message stamped with the client time its answer arrived. */
  async receive(maxMessages = 10, waitMs = 0): Promise<TimedMessage[]> {
    const result = expectStatus(await this.sendReceive({ maxMessages, waitMs }), 200, `receive ${this.id}`);
    const receivedAtMs = Date.now();
    return (result.body as { messages: ReceivedMessage[] }).messages.map((m) => ({ ...m, receivedAtMs }));
  }

  /**
   * Receives until `count` messages arrived or `timeoutMs` passed (each call long-polls at most
   * `pollMs`); returns what arrived, in order. Never more than needed: the last call asks only for
   * the messages still missing.
   */
  async receiveN(count: number, timeoutMs: number, pollMs = 1000): Promise<TimedMessage[]> {
    const received: TimedMessage[] = [];
    const deadline = Date.now() + timeoutMs;
    while (received.length < count && Date.now() < deadline) {
      const waitMs = Math.max(0, Math.min(pollMs, deadline - Date.now()));
      received.push(...(await this.receive(Math.min(100, count - received.length), waitMs)));
    }
    return received;
  }

  /** Everything that arrives within `windowMs` (polling in slices of at most 1 s). */
  async receiveFor(windowMs: number, maxMessages = 10): Promise<TimedMessage[]> {
    const received: TimedMessage[] = [];
    const deadline = Date.now() + windowMs;
    while (Date.now() < deadline) {
      received.push(...(await this.receive(maxMessages, Math.min(1000, deadline - Date.now()))));
    }
    return received;
  }

  /** Like {@link receiveFor}, acknowledging (by handle) each message as it arrives, so none times out. */
  async receiveForAcking(windowMs: number, maxMessages = 10): Promise<TimedMessage[]> {
    const received: TimedMessage[] = [];
    const deadline = Date.now() + windowMs;
    while (Date.now() < deadline) {
      const batch = await this.receive(maxMessages, Math.min(1000, deadline - Date.now()));
      if (batch.length > 0) await this.ack(batch);
      received.push(...batch);
    }
    return received;
  }

  async ack(handles: readonly ReceivedMessage[]): Promise<void> {
    expectStatus(
      await this.sendAck({ deliveryHandles: handles.map((m) => m.deliveryHandle) }),
      204,
      `ack ${this.id}`,
    );
  }

  async ackIds(messageIds: readonly string[]): Promise<void> {
    expectStatus(await this.sendAck({ messageIds }), 204, `ack ${this.id}`);
  }

  async ackCumulative(messageId: string): Promise<void> {
    expectStatus(await this.sendAckCumulative(messageId), 204, `ack-cumulative ${this.id}`);
  }

  async nack(messages: readonly ReceivedMessage[]): Promise<void> {
    expectStatus(
      await this.sendNack({ deliveryHandles: messages.map((m) => m.deliveryHandle) }),
      204,
      `nack ${this.id}`,
    );
  }

  async redeliverUnacknowledged(messages?: readonly ReceivedMessage[]): Promise<void> {
    expectStatus(
      await this.sendRedeliverUnacknowledged(messages?.map((m) => m.deliveryHandle)),
      204,
      `redeliver-unacknowledged ${this.id}`,
    );
  }

  async close(): Promise<void> {
    expectStatus(await this.sendClose(), 204, `close ${this.id}`);
  }
}

/** Payloads of the messages, in the order received. */
export function payloads(messages: readonly ReceivedMessage[]): string[] {
  return messages.map((m) => m.payload);
}

/** `[prefix0, prefix1, ...]`. */
export function numbered(count: number, prefix = 'm', from = 0): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${from + i}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The answer to a call of an owner that was replaced after its lease lapsed: 409 (fenced: its
 * record still exists) or, once maintenance (once a minute) removed the lapsed record, 404 saying
 * so. Either way a JSON reason that says why, and never a delivery.
 */
export function expectReplacedOwnerRefused(result: HttpResult): void {
  const reason = (result.body as { reason?: unknown } | undefined)?.reason;
  const why = `${result.status} ${result.text}`;
  if (result.status === 409) {
    if (typeof reason !== 'string' || !/replaced|not the active consumer/.test(reason)) throw new Error(why);
  } else if (result.status === 404) {
    if (typeof reason !== 'string' || !/lease lapsed/.test(reason)) throw new Error(why);
  } else {
    throw new Error(`expected 409 or 404, got ${why}`);
  }
}
