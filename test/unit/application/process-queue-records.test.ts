import { beforeEach, describe, expect, it } from 'vitest';
import type { ConsumerMessage } from '../../../shared/application/consume-messages.ts';
import type { UseCasePorts } from '../../../shared/application/ports.ts';
import {
  type MessageProcessor,
  processQueueRecords,
  type QueueRecord,
} from '../../../shared/application/process-queue-records.ts';
import { publishMessages } from '../../../shared/application/publish-messages.ts';
import { subscribeConsumer } from '../../../shared/application/subscribe-consumer.ts';
import { type DeliveryToken, encodeDeliveryToken } from '../../../shared/domain/delivery-token.ts';
import { NotFoundError, ValidationError } from '../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../shared/domain/message-router.ts';
import { Position } from '../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { ConsumerRecord, ConsumerRegistry } from '../../../shared/ports/consumer-registry.ts';
import type { CounterName } from '../../../shared/ports/counters.ts';
import type {
  DeliveryQueue,
  ReceivedToken,
  SubscriptionQueue,
  TokenToSend,
} from '../../../shared/ports/delivery-queue.ts';
import type { ScheduledJob, Scheduler } from '../../../shared/ports/scheduler.ts';
import { InMemoryCursorStore } from '../../support/in-memory-cursor-store.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { ManualClock } from '../../support/manual-clock.ts';

/** Subscription queues in memory: what was sent, by cursor id (receive is the test's job here). */
class RecordingDeliveryQueue implements DeliveryQueue {
  readonly maxDelaySeconds = 900;
  readonly sent = new Map<string, TokenToSend[]>();
  readonly removed: string[] = [];

  async create(queue: SubscriptionQueue): Promise<void> {
    if (!this.sent.has(queue.cursorId)) this.sent.set(queue.cursorId, []);
  }
  async delete(queue: SubscriptionQueue): Promise<void> {
    this.sent.delete(queue.cursorId);
  }
  async send(queue: SubscriptionQueue, tokens: readonly TokenToSend[]): Promise<void> {
    this.sent.get(queue.cursorId)?.push(...tokens);
  }
  async receive(): Promise<ReceivedToken[]> {
    return [];
  }
  async remove(_queue: SubscriptionQueue, receipts: readonly string[]): Promise<void> {
    this.removed.push(...receipts);
  }
  async release(): Promise<void> {}
  async deadLetterCount(): Promise<number> {
    return 0;
  }
  async depth(queue: SubscriptionQueue): Promise<number> {
    return this.sent.get(queue.cursorId)?.length ?? 0;
  }

  /** Takes every token sent to the queue so far. */
  take(cursorId: string): TokenToSend[] {
    const tokens = this.sent.get(cursorId) ?? [];
    this.sent.set(cursorId, []);
    return tokens;
  }
}

class RecordingScheduler implements Scheduler {
  readonly maxDelaySeconds = 900;
  readonly jobs: ScheduledJob[] = [];
  async schedule(jobs: readonly ScheduledJob[]): Promise<void> {
    this.jobs.push(...jobs);
  }
}

/** Consumer records in memory; the ownership and membership leases are not exercised here. */
class InMemoryConsumerRegistry implements ConsumerRegistry {
  private readonly records = new Map<string, ConsumerRecord>();
  async register(record: ConsumerRecord): Promise<void> {
    this.records.set(record.consumerId, record);
  }
  async get(consumerId: string): Promise<ConsumerRecord | undefined> {
    return this.records.get(consumerId);
  }
  async delete(consumerId: string): Promise<void> {
    this.records.delete(consumerId);
  }
  async claimOwnership(): Promise<boolean> {
    return true;
  }
  async releaseOwnership(): Promise<void> {}
  async owner(): Promise<string | undefined> {
    return undefined;
  }
  async heartbeat(): Promise<void> {}
  async leave(): Promise<void> {}
  async members(): Promise<string[]> {
    return [];
  }
}

const ADMIN = { role: 'admin', superuser: true };
const TOPIC = TopicName.parse('persistent://public/default/orders');
const NACK_BACKOFF = { minDelayMs: 1000, maxDelayMs: 8000, multiplier: 2 };

let clock: ManualClock;
let cursors: InMemoryCursorStore;
let queue: RecordingDeliveryQueue;
let scheduler: RecordingScheduler;
let counted: Map<CounterName, number>;
let ports: UseCasePorts;

beforeEach(() => {
  clock = new ManualClock(1_700_000_000_000);
  cursors = new InMemoryCursorStore();
  queue = new RecordingDeliveryQueue();
  scheduler = new RecordingScheduler();
  ({ ports, counted } = inMemoryPorts({
    cursors,
    deliveryQueue: queue,
    scheduler,
    consumers: new InMemoryConsumerRegistry(),
    clock,
  }));
});

/** A consumer on `TOPIC`, its subscription's cursor id, and the queue records of `payloads` published to it. */
async function arrange(
  payloads: readonly string[],
  options: { type?: SubscriptionType; policy?: Record<string, unknown>; keys?: readonly string[] } = {},
) {
  const { consumerId } = await subscribeConsumer(ports, ADMIN, {
    topic: TOPIC,
    subscription: 'fn',
    subscriptionType: options.type ?? 'Shared',
    initialPosition: 'Earliest',
    policy: { negativeAckRedeliveryBackoff: NACK_BACKOFF, ...options.policy },
  });
  const cursorId = ((await ports.consumers.get(consumerId)) as ConsumerRecord).partitions[0]
    ?.cursorId as string;
  const ids = await publishMessages(
    ports,
    ADMIN,
    TOPIC,
    payloads.map((payload, i) => ({
      payload,
      properties: {},
      ...(options.keys?.[i] === undefined ? {} : { key: options.keys[i] }),
    })),
    new RoundRobinRouter(0),
  );
  return { consumerId, cursorId, ids: ids.map((id) => id.messageId), records: recordsOf(cursorId) };
}

let nextRecord = 0;
/** The queue's tokens as an event's records (what the event source would hand over). */
function recordsOf(cursorId: string): QueueRecord[] {
  return queue.take(cursorId).map(({ token }) => recordOf(cursorId, token));
}

function recordOf(cursorId: string, token: DeliveryToken): QueueRecord {
  return { recordId: `r${nextRecord++}`, cursorId, body: encodeDeliveryToken(token) };
}

/** A processor that records what it got and throws for the payloads `fails` names. */
function recorder(fails: (message: ConsumerMessage) => boolean = () => false) {
  const seen: ConsumerMessage[] = [];
  const processor: MessageProcessor = async (message) => {
    seen.push(message);
    if (fails(message)) throw new Error(`refused ${message.payload}`);
  };
  return { seen, processor };
}

const positionOf = (messageId: string) => Position.parse(messageId.split(':').slice(0, 2).join(':'));

describe('processQueueRecords', () => {
  it('acknowledges on the cursor what the processor resolves, with the message an HTTP consumer gets', async () => {
    const { consumerId, cursorId, ids, records } = await arrange(['a', 'b']);
    const { seen, processor } = recorder();

    const outcomes = await processQueueRecords(ports, consumerId, records, processor);

    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['acknowledged', 'acknowledged']);
    expect(seen).toEqual([
      {
        messageId: ids[0],
        payload: 'a',
        key: null,
        properties: {},
        redeliveryCount: 0,
        publishTime: clock.nowMs(),
        eventTime: null,
      },
      expect.objectContaining({ messageId: ids[1], payload: 'b' }),
    ]);
    expect(await cursors.isAcknowledged(cursorId, ids.map(positionOf))).toEqual([true, true]);
    expect([counted.get('delivered'), counted.get('acked')]).toEqual([2, 2]);
  });

  it("negatively acknowledges what the processor throws: a new token, count + 1, after the consumer's backoff", async () => {
    const { consumerId, cursorId, ids, records } = await arrange(['a', 'b']);
    const { processor } = recorder((message) => message.payload === 'b');

    const outcomes = await processQueueRecords(ports, consumerId, records, processor);

    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['acknowledged', 'negativelyAcknowledged']);
    expect(outcomes[1]).toMatchObject({ error: new Error('refused b') });
    const [redelivery, ...others] = queue.take(cursorId);
    expect(others).toEqual([]);
    expect(redelivery).toMatchObject({ token: { redeliveryCount: 1 }, delaySeconds: 1 });
    expect(await cursors.deliveryState(cursorId, [positionOf(ids[1] as string)])).toEqual([
      { acknowledged: false, redeliveryCount: 1 },
    ]);
    // The old token is superseded: were the event source to hand it over again, it would be dropped.
    const replay = await processQueueRecords(ports, consumerId, [records[1] as QueueRecord], processor);
    expect(replay.map((outcome) => outcome.kind)).toEqual(['dropped']);
    expect(counted.get('nacked')).toBe(1);
  });

  it('dead-letters past maxRedeliverCount and acknowledges the original', async () => {
    const { consumerId, cursorId, ids, records } = await arrange(['poison'], {
      policy: { deadLetterPolicy: { maxRedeliverCount: 1, initialSubscriptionName: 'dead' } },
    });
    const { seen, processor } = recorder(() => true);

    await processQueueRecords(ports, consumerId, records, processor);
    const outcomes = await processQueueRecords(ports, consumerId, recordsOf(cursorId), processor);

    expect(seen.map((message) => message.redeliveryCount)).toEqual([0, 1]);
    expect(outcomes[0]?.kind).toBe('negativelyAcknowledged');
    expect(queue.take(cursorId)).toEqual([]);
    expect(await cursors.isAcknowledged(cursorId, [positionOf(ids[0] as string)])).toEqual([true]);
    const deadLetterTopic = TopicName.parse(`${TOPIC.toString()}-fn-DLQ`);
    const dead = await ports.catalog.getSubscription(deadLetterTopic, 'dead');
    const [deadLetter] = queue.take(dead?.cursorId as string);
    expect(deadLetter?.token.message).toMatchObject({
      payload: 'poison',
      properties: { REAL_TOPIC: TOPIC.toString(), ORIGIN_MESSAGE_ID: ids[0], REAL_SUBSCRIPTION: 'fn' },
    });
    expect(counted.get('deadLettered')).toBe(1);
  });

  it('drops what the cursor says is acknowledged and defers what is not yet due, without the processor', async () => {
    const { consumerId, cursorId, ids, records } = await arrange(['acked', 'kept']);
    await cursors.acknowledge(cursorId, [positionOf(ids[0] as string)]);
    const [delayed] = await publishMessages(
      ports,
      ADMIN,
      TOPIC,
      [{ payload: 'later', properties: {}, deliverAtMs: clock.nowMs() + 5_000 }],
      new RoundRobinRouter(0),
    );
    const delayedRecord = recordsOf(cursorId);
    const { seen, processor } = recorder();

    const outcomes = await processQueueRecords(ports, consumerId, [...records, ...delayedRecord], processor);

    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['dropped', 'acknowledged', 'deferred']);
    expect(seen.map((message) => message.payload)).toEqual(['kept']);
    expect(queue.take(cursorId)).toEqual([
      expect.objectContaining({
        token: expect.objectContaining({ entryId: delayed?.messageId.split(':')[1] }),
        delaySeconds: 5,
      }),
    ]);
  });

  it('leaves malformed tokens and storage failures to SQS, and processes the rest', async () => {
    const { consumerId, records } = await arrange(['a', 'b']);
    cursors.failNext('acknowledge', new Error('throttled'));
    const malformed = { recordId: 'bad', cursorId: records[0]?.cursorId as string, body: '{"v":9}' };

    const outcomes = await processQueueRecords(
      ports,
      consumerId,
      [malformed, ...records],
      recorder().processor,
    );

    expect(outcomes.map((outcome) => [outcome.recordId, outcome.kind])).toEqual([
      ['bad', 'failed'],
      [records[0]?.recordId, 'failed'],
      [records[1]?.recordId, 'acknowledged'],
    ]);
  });

  it('fails the whole queue batch, unprocessed, when the delivery check cannot read the cursor', async () => {
    const { consumerId, records } = await arrange(['a', 'b']);
    cursors.failNext('deliveryState', new Error('unavailable'));
    const { seen, processor } = recorder();

    const outcomes = await processQueueRecords(ports, consumerId, records, processor);

    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['failed', 'failed']);
    expect(seen).toEqual([]);
  });

  it('processes an Exclusive queue in order and leaves every record after a failure untouched', async () => {
    const { consumerId, records } = await arrange(['m0', 'm1', 'm2'], { type: 'Exclusive' });
    const { seen, processor } = recorder();
    cursors.failNext('acknowledge', new Error('throttled'));

    const outcomes = await processQueueRecords(ports, consumerId, records, processor);

    // m0 could not be acknowledged: it comes back, and m1 and m2 must not overtake it.
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['failed', 'failed', 'failed']);
    expect(seen.map((message) => message.payload)).toEqual(['m0']);
  });

  it.each([
    { type: 'Shared' as const, sequentialPerKey: false },
    { type: 'Key_Shared' as const, sequentialPerKey: true },
  ])('runs a $type batch at once, one message after another per key: $sequentialPerKey', async ({
    type,
    sequentialPerKey,
  }) => {
    const { consumerId, records } = await arrange(['a1', 'a2', 'b1'], { type, keys: ['a', 'a', 'b'] });
    const events: string[] = [];
    const processor: MessageProcessor = async (message) => {
      events.push(`start ${message.payload}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      events.push(`end ${message.payload}`);
    };

    await processQueueRecords(ports, consumerId, records, processor);

    // Different keys always overlap; the same key overlaps on Shared only.
    expect(events.indexOf('start b1')).toBeLessThan(events.indexOf('end a1'));
    expect(events.indexOf('start a2') > events.indexOf('end a1')).toBe(sequentialPerKey);
  });

  it('refuses a consumer that does not exist, and records from a queue that is not its subscription’s', async () => {
    const { consumerId, records } = await arrange(['a']);
    const { processor } = recorder();

    await expect(processQueueRecords(ports, 'nobody', records, processor)).rejects.toThrow(NotFoundError);
    const foreign = records.map((record) => ({ ...record, cursorId: 'another-cursor' }));
    await expect(processQueueRecords(ports, consumerId, foreign, processor)).rejects.toThrow(ValidationError);
  });
});
