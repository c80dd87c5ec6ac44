import { setTimeout as sleep } from 'node:timers/promises';
import { MessageId } from '../domain/message-id.ts';
import { isCumulativeAckType } from '../domain/subscription-type.ts';
import type { SubscriptionType } from './admin-types.ts';
import type { ClientClock } from './client-clock.ts';
import { ConsumerHeartbeat } from './consumer-heartbeat.ts';
import { parseReceivedMessages } from './data-answers.ts';
import { consumerPath, type DataHttp, type DataTopic } from './data-http.ts';
import { AcklineClientArgumentError, AcklineClientClosedError, AcklineClientError } from './errors.ts';
import type { HttpRequest } from './http-transport.ts';
import { ListenerLoop } from './listener-loop.ts';
import type { JsonInput } from './lossless-json.ts';
import { Message } from './message.ts';

/** Pulsar's `Long.MAX_VALUE`, the ledger and entry id of `MessageId.latest` in a reset-cursor body. */
const LONG_MAX = '9223372036854775807';

/** The longest wait one receive poll may ask the server for. */
export const MAX_RECEIVE_WAIT_MS = 20_000;
/** The most messages one receive poll may ask for. */
export const MAX_MESSAGES_PER_RECEIVE = 100;
/** The largest receiverQueueSize a consumer takes. */
export const MAX_RECEIVER_QUEUE_SIZE = 100_000;
/**
 * When the server answers a poll with no message before the wait it was asked for (it may cap the
 * wait), the consumer pauses this long at most before polling again, so it never spins.
 */
const EARLY_EMPTY_ANSWER_PAUSE_MS = 1_000;

/**
 * Pulsar's `MessageListener`: called with each message, one at a time in order, instead of the
 * application calling receive(). It acknowledges (or nacks) the message itself.
 */
export type MessageListener = (message: Message, consumer: Consumer) => void | Promise<void>;

/** Where {@link Consumer.seek} moves the subscription: a message, or an edge of the topic. */
export type SeekTarget = MessageId | 'earliest' | 'latest';

/** What `acknowledge` and `negativeAcknowledge` accept. */
export type AcknowledgeTarget = Message | MessageId | readonly (Message | MessageId)[];

/** Everything a {@link Consumer} is built with. */
export interface ConsumerSettings {
  readonly http: DataHttp;
  readonly consumerId: string;
  readonly topic: DataTopic;
  readonly subscription: string;
  readonly subscriptionType: SubscriptionType;
  /** Messages the consumer may keep beyond those waited for (Pulsar's receiverQueueSize). */
  readonly receiverQueueSize: number;
  /** Payload bytes the kept messages may hold before polls ask only for what receives wait for. */
  readonly receiverQueueMaxBytes: number;
  /** The message listener, when one is set: receive() and batchReceive() are refused. */
  readonly listener?: MessageListener;
  /** Told what a listener threw and why a listener's receive failed (default: nothing). */
  readonly onListenerError?: (error: unknown) => void;
  readonly batchReceive: { readonly maxNumMessages: number; readonly timeoutMs: number };
  /** The client's request timeout; a poll's timeout adds the wait it asks for. */
  readonly requestTimeoutMs: number;
  /** The consumer's lease (the server's default when it set none): its heartbeat beats at a third. */
  readonly leaseMs: number;
  /** Schedules the heartbeat. */
  readonly clock: ClientClock;
  /** Called once the consumer has closed (the client stops tracking it). */
  readonly onClose: (consumer: Consumer) => void;
}

interface Waiter {
  /** How many messages it takes: 1 for receive, up to maxNumMessages for batchReceive. */
  readonly wanted: number;
  /** Epoch ms, or undefined to wait until a message comes. */
  readonly deadlineMs: number | undefined;
  readonly resolve: (message: Message | undefined) => void;
  readonly reject: (error: unknown) => void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * An HTTP consumer of one subscription, as Pulsar's `Consumer<String>`. `receive()` long-polls the
 * data API (`POST /consumers/{id}/receive?maxMessages&waitMs`) only while a receive waits; a poll may
 * bring more messages than are waited for (up to `receiverQueueSize`), which are kept, in order, for
 * the next receives. Kept messages are delivered to this consumer but not acknowledged: closing or
 * `redeliverUnacknowledgedMessages()` hands them back to the subscription.
 *
 * While open, the consumer keeps its lease alive in the background: when it made no call for a third
 * of its lease (the application is busy with a message), it sends `POST /consumers/{id}/heartbeat`.
 * A heartbeat or receive answered 404 (the server dropped the consumer, or its subscription was
 * deleted) or 409 (another consumer replaced it as the active one of an Exclusive or Failover
 * subscription) makes every later call reject with {@link AcklineClientClosedError}: subscribe again.
 *
 * On Exclusive and Failover subscriptions, a receive poll that failed without a 4xx answer (network
 * error, timeout, 5xx) may have lost messages the server recorded as delivered; the consumer calls
 * redeliver-unacknowledged before its next receive or cumulative acknowledgement, so the server
 * rewinds to the mark-delete position and a cumulative acknowledgement never covers a message the
 * application did not see.
 *
 * @example
 * const consumer = await client.newConsumer().topic('my-tenant/my-ns/orders').subscriptionName('billing')
 *   .subscriptionType('Shared').subscribe();
 * const message = await consumer.receive();
 * try {
 *   await handle(message.getValue());
 *   await consumer.acknowledge(message);
 * } catch {
 *   await consumer.negativeAcknowledge(message);
 * }
 */
export class Consumer {
  private readonly incoming: Message[] = [];
  private readonly waiters: Waiter[] = [];
  private polling = false;
  /** Aborted on close: stops the poll in flight (the server redelivers what it held). */
  private readonly closed = new AbortController();
  private closing: Promise<void> | undefined;
  /** Set by close(): calls reject with "is closed" rather than with {@link lost}. */
  private closeCalled = false;
  /** Why the server no longer serves this consumer, once a heartbeat told (404 or 409). */
  private lost: AcklineClientClosedError | undefined;
  /** Exclusive/Failover: a poll failed without a 4xx answer; rewind before the next receive or cumulative ack. */
  private rewindNeeded = false;
  private rewinding: Promise<void> | undefined;
  private readonly heartbeat: ConsumerHeartbeat;
  /** Raised by seek: what a poll started before it brings is handed back, not kept. */
  private seekGeneration = 0;
  /** The mean payload size of the last poll's messages (0 before any): what a poll's count is sized by. */
  private averagePayloadBytes = 0;
  private readonly listenerLoop: ListenerLoop | undefined;

  /** Use `client.newConsumer()...subscribe()`. */
  constructor(private readonly settings: ConsumerSettings) {
    this.heartbeat = new ConsumerHeartbeat({
      clock: settings.clock,
      leaseMs: settings.leaseMs,
      send: () => settings.http.send({ method: 'POST', path: this.path('heartbeat') }),
      onLost: (answer) => this.markLost(answer),
    });
    this.heartbeat.start();
    const { listener } = settings;
    if (listener) {
      this.listenerLoop = new ListenerLoop({
        receive: () => this.take(1, undefined) as Promise<Message>,
        deliver: (message) => listener(message, this),
        stopped: this.closed.signal,
        onError: settings.onListenerError ?? (() => undefined),
      });
      this.listenerLoop.start();
    }
  }

  /**
   * The topic's full name.
   * @example consumer.getTopic(); // 'persistent://my-tenant/my-ns/orders'
   */
  getTopic(): string {
    return this.settings.topic.name;
  }

  /**
   * The subscription's name.
   * @example consumer.getSubscription(); // 'billing'
   */
  getSubscription(): string {
    return this.settings.subscription;
  }

  /**
   * The id the server gave this consumer at subscribe.
   * @example log.info({ consumerId: consumer.getConsumerId() }, 'subscribed');
   */
  getConsumerId(): string {
    return this.settings.consumerId;
  }

  /**
   * Waits for the next message. Concurrent receives are served in call order.
   * @throws AcklineClientClosedError (rejects) when the consumer is closed, also while waiting;
   * AcklineClientError when a poll fails (every waiting receive rejects with it).
   * @example const message = await consumer.receive();
   */
  receive(): Promise<Message>;
  /**
   * Waits at most `timeoutMs` for the next message; resolves to undefined when none came (as Pulsar's
   * `receive(timeout, unit)` returns null). A message a poll brings after the timeout is kept for the
   * next receive. `receive(0)` answers from the kept messages, else polls without waiting (what that
   * poll brings too late is kept for the next call).
   * @example
   * const message = await consumer.receive(5_000);
   * if (message === undefined) console.log('nothing for 5 s');
   */
  receive(timeoutMs: number): Promise<Message | undefined>;
  async receive(timeoutMs?: number): Promise<Message | undefined> {
    this.checkOpen();
    this.refuseWithListener('receive');
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs >= 0)) {
      throw new AcklineClientArgumentError(`Invalid receive timeout '${timeoutMs}' ms: expected >= 0`);
    }
    return this.take(1, timeoutMs);
  }

  /**
   * Waits for messages and resolves with those one poll brings, up to the batch receive policy's
   * `maxNumMessages` (default 100), or with none after its `timeoutMs` (default 100 ms).
   * @example
   * const messages = await consumer.batchReceive();
   * await Promise.all(messages.map(handle));
   * await consumer.acknowledge(messages);
   */
  async batchReceive(): Promise<Message[]> {
    this.checkOpen();
    this.refuseWithListener('batchReceive');
    const { maxNumMessages, timeoutMs } = this.settings.batchReceive;
    if (this.incoming.length === 0) {
      const first = await this.take(maxNumMessages, timeoutMs);
      if (first === undefined) return [];
      return [first, ...this.incoming.splice(0, maxNumMessages - 1)];
    }
    return this.incoming.splice(0, maxNumMessages);
  }

  /**
   * Acknowledges messages individually (`POST /consumers/{id}/ack`). A {@link Message} is
   * acknowledged by its delivery handle (the delivery it came from), a {@link MessageId} by id; an
   * array may mix both and goes in one request.
   * @example
   * await consumer.acknowledge(message);
   * await consumer.acknowledge(MessageId.parse('12:3:-1'));
   * await consumer.acknowledge(messages);
   */
  async acknowledge(target: AcknowledgeTarget): Promise<void> {
    this.checkOpen();
    const { messageIds, deliveryHandles } = identify(target, 'acknowledge');
    if (messageIds.length === 0 && deliveryHandles.length === 0) return;
    await this.send({
      method: 'POST',
      path: this.path('ack'),
      body: {
        messageIds: messageIds.length > 0 ? messageIds : undefined,
        deliveryHandles: deliveryHandles.length > 0 ? deliveryHandles : undefined,
      },
    });
  }

  /**
   * Acknowledges every message up to and including `target` (`POST /consumers/{id}/ack-cumulative`).
   * Only Exclusive and Failover subscriptions may: on Shared and Key_Shared it rejects before sending,
   * as Pulsar's client does (the server would answer 412).
   * @example await consumer.acknowledgeCumulative(lastMessageOfTheBatch);
   */
  async acknowledgeCumulative(target: Message | MessageId): Promise<void> {
    this.checkOpen();
    const { subscriptionType } = this.settings;
    if (!isCumulativeAckType(subscriptionType)) {
      throw new AcklineClientArgumentError(
        `Cannot acknowledge cumulatively on the ${subscriptionType} subscription '${this.getSubscription()}': only Exclusive and Failover subscriptions can`,
      );
    }
    const messageId = target instanceof Message ? target.getMessageId() : target;
    if (!(messageId instanceof MessageId)) {
      throw new AcklineClientArgumentError('acknowledgeCumulative takes a Message or a MessageId');
    }
    await this.rewindIfNeeded();
    await this.send({
      method: 'POST',
      path: this.path('ack-cumulative'),
      body: { messageId: messageId.toString() },
    });
  }

  /**
   * Asks for messages to be redelivered later (`POST /consumers/{id}/nack`), after the consumer's
   * `negativeAckRedeliveryBackoff` delay for the message's redelivery count, or its fixed
   * `negativeAckRedeliveryDelay`. A {@link Message} is named by its delivery handle, a
   * {@link MessageId} by id (a mixed array takes one request of each).
   * @example
   * try {
   *   await handle(message);
   *   await consumer.acknowledge(message);
   * } catch {
   *   await consumer.negativeAcknowledge(message);
   * }
   *
   * With `{ delayMs }` (ackline, beyond Pulsar) this nack's delay replaces the consumer's backoff
   * (0 to 86,400,000 ms; the dead-letter rule still applies).
   * @example await consumer.negativeAcknowledge(message, { delayMs: 30_000 }); // back in 30 s
   */
  async negativeAcknowledge(
    target: AcknowledgeTarget,
    options: { readonly delayMs?: number } = {},
  ): Promise<void> {
    this.checkOpen();
    const { messageIds, deliveryHandles } = identify(target, 'negativeAcknowledge');
    const { delayMs } = options;
    if (delayMs !== undefined && (!Number.isSafeInteger(delayMs) || delayMs < 0 || delayMs > 86_400_000)) {
      throw new RangeError(
        `negativeAcknowledge: delayMs must be an integer from 0 to 86400000, got ${delayMs}`,
      );
    }
    const delay = delayMs === undefined ? {} : { delayMs };
    const requests: Promise<unknown>[] = [];
    const path = this.path('nack');
    if (deliveryHandles.length > 0)
      requests.push(this.send({ method: 'POST', path, body: { deliveryHandles, ...delay } }));
    if (messageIds.length > 0)
      requests.push(this.send({ method: 'POST', path, body: { messageIds, ...delay } }));
    await Promise.all(requests);
  }

  /**
   * Hands every message delivered to this consumer and not yet acknowledged back to the subscription
   * (`POST /consumers/{id}/redeliver-unacknowledged`), including those kept for the next receives.
   * @example await consumer.redeliverUnacknowledgedMessages();
   */
  async redeliverUnacknowledgedMessages(): Promise<void> {
    this.checkOpen();
    this.incoming.length = 0;
    await this.send({ method: 'POST', path: this.path('redeliver-unacknowledged') });
    // It is the rewind a failed poll asked for, too.
    this.rewindNeeded = false;
  }

  /**
   * Pulsar's `seek(MessageId)`: the subscription starts over at `target` (the message itself is
   * delivered again), or at the topic's `'earliest'` / `'latest'` message, through the admin
   * reset-cursor call (`POST /admin/v2/.../subscription/{sub}/resetcursor`, which the `consume`
   * permission allows). Every consumer of the subscription gets what follows from there, with
   * redeliveryCount 0; this consumer drops the messages it kept. On a partitioned topic a message id
   * moves its own partition only, an edge moves every partition.
   * @throws AcklineClientError 412 when the message is not one of the topic's.
   * @example
   * const first = await consumer.receive();
   * await consumer.seek(first.getMessageId()); // first comes again
   * await consumer.seek('earliest');
   */
  async seek(target: SeekTarget): Promise<void> {
    this.checkOpen();
    let body: JsonInput;
    if (target === 'earliest') body = { ledgerId: -1, entryId: -1 };
    else if (target === 'latest') body = { ledgerId: LONG_MAX, entryId: LONG_MAX };
    else if (target instanceof MessageId) {
      body = { ledgerId: target.ledgerId, entryId: target.entryId, partitionIndex: target.partitionIndex };
    } else {
      throw new AcklineClientArgumentError(
        `seek takes a MessageId, 'earliest' or 'latest', not ${String(target)}`,
      );
    }
    await this.resetCursor({ method: 'POST', path: this.resetCursorPath(), body });
  }

  /**
   * Pulsar's `seek(timestamp)`: the subscription starts over at the first message published at or
   * after `timestampMs` (epoch milliseconds; the end of the topic when none is), on every partition
   * (`POST /admin/v2/.../subscription/{sub}/resetcursor/{timestamp}`).
   * @example await consumer.seekTimestamp(Date.now() - 60 * 60_000); // the last hour again
   */
  async seekTimestamp(timestampMs: number): Promise<void> {
    this.checkOpen();
    if (!Number.isSafeInteger(timestampMs) || timestampMs < 0) {
      throw new AcklineClientArgumentError(
        `Invalid seek timestamp '${timestampMs}': expected epoch milliseconds, a whole number >= 0`,
      );
    }
    await this.resetCursor({ method: 'POST', path: `${this.resetCursorPath()}/${timestampMs}` });
  }

  /**
   * Pulsar's `unsubscribe()`: deletes the subscription (on every partition this consumer reads) and
   * closes this consumer (`POST /consumers/{id}/unsubscribe`). Needs only the `consume` permission.
   * @throws AcklineClientError 412 while another consumer is connected to the subscription (nothing
   * changes, the consumer stays open), as Pulsar refuses.
   * @example await consumer.unsubscribe();
   */
  async unsubscribe(): Promise<void> {
    this.checkOpen();
    await this.send({ method: 'POST', path: this.path('unsubscribe') });
    this.stopLocally();
    this.closing = Promise.resolve();
    this.settings.onClose(this);
  }

  /**
   * Closes the consumer (`DELETE /consumers/{id}`): waiting receives reject with
   * {@link AcklineClientClosedError}, kept messages are dropped and the server redelivers everything
   * this consumer had not acknowledged. A consumer the server no longer knows (404) counts as closed.
   * Closing again returns the same promise; if the DELETE failed, closing again retries it.
   * @example await consumer.close();
   */
  async close(): Promise<void> {
    if (this.closing) return this.closing;
    this.stopLocally();
    this.closing = this.send({ method: 'DELETE', path: this.path() }).then(
      () => {
        this.settings.onClose(this);
      },
      (error: unknown) => {
        if (error instanceof AcklineClientError && error.statusCode === 404) {
          this.settings.onClose(this);
          return;
        }
        this.closing = undefined;
        throw error;
      },
    );
    return this.closing;
  }

  /** Stops the heartbeat, the polls and the listener; waiting receives reject as closed. */
  private stopLocally(): void {
    this.closeCalled = true;
    this.heartbeat.stop();
    if (!this.closed.signal.aborted) {
      this.closed.abort();
      const error = new AcklineClientClosedError(`Consumer ${this.describe()} was closed`);
      for (const waiter of this.waiters.splice(0)) settle(waiter, () => waiter.reject(error));
      this.incoming.length = 0;
    }
  }

  /** A message kept from an earlier poll, or the next one a poll brings. */
  private take(wanted: number, timeoutMs: number | undefined): Promise<Message | undefined> {
    const kept = this.incoming.shift();
    if (kept !== undefined) return Promise.resolve(kept);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        wanted,
        deadlineMs: timeoutMs === undefined ? undefined : Date.now() + timeoutMs,
        resolve,
        reject,
        timer: undefined,
      };
      if (timeoutMs !== undefined) {
        waiter.timer = setTimeout(() => this.expire(waiter), timeoutMs);
      }
      this.waiters.push(waiter);
      void this.pollWhileWaited();
    });
  }

  /**
   * The poll loop: one poll at a time, while a receive waits. A poll in flight is never abandoned
   * (the server has delivered what it answers), only aborted by close.
   */
  private async pollWhileWaited(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      while (this.waiters.length > 0 && !this.closed.signal.aborted) {
        // Awaited only when needed: the first poll starts in the receive's own tick, as before.
        if (this.rewindNeeded) {
          await this.rewindIfNeeded();
          if (this.closed.signal.aborted) return;
        }
        const startedMs = Date.now();
        const waitMs = this.pollWaitMs(startedMs);
        const messages = await this.poll(waitMs);
        if (this.closed.signal.aborted) return;
        for (const message of messages) this.dispatch(message);
        // Expire here too, not only by timer: a fast answer must not start another poll for them.
        const nowMs = Date.now();
        for (const waiter of this.waiters.filter(
          (w) => w.deadlineMs !== undefined && w.deadlineMs <= nowMs,
        )) {
          this.expire(waiter);
        }
        const earlyMs = waitMs - (nowMs - startedMs);
        if (messages.length === 0 && earlyMs > 0 && this.waiters.length > 0) {
          await sleep(Math.min(earlyMs, EARLY_EMPTY_ANSWER_PAUSE_MS), undefined, {
            signal: this.closed.signal,
          });
        }
      }
    } catch (error) {
      if (!this.closed.signal.aborted) {
        // The server no longer knows this consumer (404) or replaced it (409): as a heartbeat's
        // answer, every waiting and later call rejects as closed, so a retry loop stops.
        if (error instanceof AcklineClientError && (error.statusCode === 404 || error.statusCode === 409)) {
          this.markLost(error, 'receive');
          return;
        }
        if (answerMayBeLost(error) && isCumulativeAckType(this.settings.subscriptionType)) {
          this.rewindNeeded = true;
        }
        for (const waiter of this.waiters.splice(0)) settle(waiter, () => waiter.reject(error));
      }
    } finally {
      this.polling = false;
    }
  }

  /** Until the latest deadline of the waiting receives, or the longest wait when one has none. */
  private pollWaitMs(nowMs: number): number {
    let waitMs = 0;
    for (const { deadlineMs } of this.waiters) {
      waitMs = Math.max(waitMs, deadlineMs === undefined ? MAX_RECEIVE_WAIT_MS : deadlineMs - nowMs);
    }
    return Math.min(Math.ceil(waitMs), MAX_RECEIVE_WAIT_MS);
  }

  /**
   * What one poll asks for: what the waiting receives want, or more to fill the receiver queue
   * (up to `receiverQueueSize` kept messages, while they hold less than `receiverQueueMaxBytes`),
   * at most what one receive answers.
   */
  private pollSize(): number {
    const wanted = this.waiters.reduce((sum, waiter) => sum + waiter.wanted, 0);
    const keptBytes = this.incoming.reduce((sum, message) => sum + message.getPayloadSize(), 0);
    const bytesLeft = this.settings.receiverQueueMaxBytes - keptBytes;
    // The server answers by count: the bytes bound becomes a count from the payloads seen lately.
    const roomByBytes = bytesLeft <= 0 ? 0 : Math.floor(bytesLeft / Math.max(1, this.averagePayloadBytes));
    const room = Math.min(this.settings.receiverQueueSize - this.incoming.length, roomByBytes);
    return Math.min(Math.max(wanted, room, 1), MAX_MESSAGES_PER_RECEIVE);
  }

  private async poll(waitMs: number): Promise<Message[]> {
    const maxMessages = this.pollSize();
    const generation = this.seekGeneration;
    const body = await this.send({
      method: 'POST',
      path: this.path('receive'),
      query: [
        ['maxMessages', String(maxMessages)],
        ['waitMs', String(waitMs)],
      ],
      timeoutMs: this.settings.requestTimeoutMs + waitMs,
      signal: this.closed.signal,
    });
    const messages = parseReceivedMessages(body, this.settings.topic);
    if (messages.length > 0) {
      const bytes = messages.reduce((sum, message) => sum + message.getPayloadSize(), 0);
      this.averagePayloadBytes = bytes / messages.length;
    }
    if (generation === this.seekGeneration) return messages;
    // A seek ran while this poll waited: what it brings may be of before the seek. Handed back at once.
    await this.handBack(messages);
    return [];
  }

  /** Gives deliveries this consumer will not hand out back to the subscription, at once. */
  private async handBack(messages: readonly Message[]): Promise<void> {
    const deliveryHandles = messages.flatMap((message) =>
      message.deliveryHandle === undefined ? [] : [message.deliveryHandle],
    );
    if (deliveryHandles.length === 0) return;
    await this.send({
      method: 'POST',
      path: this.path('redeliver-unacknowledged'),
      body: { deliveryHandles },
    });
  }

  /** To the longest-waiting receive, else kept for the next one. */
  private dispatch(message: Message): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) this.incoming.push(message);
    else settle(waiter, () => waiter.resolve(message));
  }

  private expire(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index < 0) return;
    this.waiters.splice(index, 1);
    settle(waiter, () => waiter.resolve(undefined));
  }

  /**
   * Exclusive/Failover, after a poll whose answer may have been lost: redeliver-unacknowledged, so
   * the server replays from the mark-delete position in order. Concurrent callers share one
   * request; if it fails, the next call tries again.
   */
  private rewindIfNeeded(): Promise<void> {
    if (!this.rewindNeeded) return Promise.resolve();
    this.rewinding ??= this.send({ method: 'POST', path: this.path('redeliver-unacknowledged') })
      .then(() => {
        this.rewindNeeded = false;
        // What was kept comes back with the replay, in order.
        this.incoming.length = 0;
      })
      .finally(() => {
        this.rewinding = undefined;
      });
    return this.rewinding;
  }

  /** The reset itself, then the kept messages go (they are of before it) and so do those of polls in flight. */
  private async resetCursor(request: HttpRequest): Promise<void> {
    await this.settings.http.send(request);
    this.seekGeneration += 1;
    // The reset dropped what the subscription had handed out, the kept messages too.
    this.incoming.length = 0;
    this.rewindNeeded = false;
  }

  private resetCursorPath(): string {
    const subscription = encodeURIComponent(this.settings.subscription);
    return `/admin/v2/${this.settings.topic.pathSegments}/subscription/${subscription}/resetcursor`;
  }

  private refuseWithListener(call: string): void {
    if (this.settings.listener) {
      throw new AcklineClientArgumentError(
        `Cannot call ${call}() on consumer ${this.describe()}: it has a message listener (as Pulsar refuses)`,
      );
    }
  }

  /** A call of this consumer: it renews the lease on the server, so the heartbeat waits longer. */
  private send(request: HttpRequest): ReturnType<DataHttp['send']> {
    this.heartbeat.touch();
    return this.settings.http.send(request);
  }

  /** A heartbeat or receive answered 404 or 409: every waiting and later call rejects, kept messages go. */
  private markLost(answer: AcklineClientError, call: 'heartbeat' | 'receive' = 'heartbeat'): void {
    if (this.closeCalled) return;
    const what =
      answer.statusCode === 409
        ? `was replaced as the active consumer of its ${this.settings.subscriptionType} subscription`
        : `is gone: the server dropped it (its lease of ${this.settings.leaseMs} ms lapsed, or it was closed)`;
    this.lost = new AcklineClientClosedError(
      `Consumer ${this.describe()} ${what}; subscribe again (${call} answered ${answer.message})`,
      { cause: answer },
    );
    this.closed.abort();
    for (const waiter of this.waiters.splice(0)) settle(waiter, () => waiter.reject(this.lost));
    this.incoming.length = 0;
  }

  private checkOpen(): void {
    if (this.lost && !this.closeCalled) throw this.lost;
    if (this.closed.signal.aborted) {
      throw new AcklineClientClosedError(`Consumer ${this.describe()} is closed`);
    }
  }

  private describe(): string {
    return `${this.settings.consumerId} of subscription '${this.getSubscription()}' on ${this.getTopic()}`;
  }

  private path(action?: string): string {
    return consumerPath(this.settings.consumerId, action);
  }
}

/**
 * Whether a failed poll may have been answered with messages this client never read: anything but
 * a 4xx answer (a network error, a timeout, a 5xx, an answer it could not parse).
 */
function answerMayBeLost(error: unknown): boolean {
  return !(error instanceof AcklineClientError && error.statusCode >= 400 && error.statusCode < 500);
}

function settle(waiter: Waiter, outcome: () => void): void {
  clearTimeout(waiter.timer);
  outcome();
}

/** Splits messages (by delivery handle, else id) and ids, refusing anything else. */
function identify(
  target: AcknowledgeTarget,
  operation: string,
): { messageIds: string[]; deliveryHandles: string[] } {
  const messageIds: string[] = [];
  const deliveryHandles: string[] = [];
  const targets: readonly unknown[] = Array.isArray(target) ? target : [target];
  for (const item of targets) {
    if (item instanceof Message) {
      if (item.deliveryHandle !== undefined) deliveryHandles.push(item.deliveryHandle);
      else messageIds.push(item.getMessageId().toString());
    } else if (item instanceof MessageId) {
      messageIds.push(item.toString());
    } else {
      throw new AcklineClientArgumentError(`${operation} takes Messages or MessageIds, not ${String(item)}`);
    }
  }
  return { messageIds, deliveryHandles };
}
