import { describe, expect, it } from 'vitest';
import {
  type BatchHandler,
  processQueueRecords,
  type QueueRecord,
} from '../../../../shared/application/consumers/process-queue-records.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { NotFoundError, ValidationError } from '../../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// The event-driven (Lambda) consumer's step: its checks of the records, its deadline, its
// failures and what it counts (mutation testing, issue 21 criterion 5).

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/queue-records');

async function world(options: { partitions?: number; counters?: boolean } = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const { ports, counted } = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
    ...(options.counters === false ? { counters: undefined } : {}),
  });
  if (options.partitions) await createTopic(ports, admin, topic, options.partitions);
  const { consumerId } = await subscribeConsumer(ports, admin, {
    topic,
    subscription: 'fn',
    subscriptionType: 'Shared',
    initialPosition: 'Earliest',
    policy: {},
    lambda: { functionTimeoutMs: 2_000 },
  });
  const cursorIds = (await ports.consumers.get(consumerId))?.partitions.map((p) => p.cursorId) ?? [];
  const publish = (count: number) =>
    publishMessages(ports, admin, topic, {
      messages: Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      router: new RoundRobinRouter(0),
    });
  const records = (...ids: string[]): QueueRecord[] =>
    ids.map((cursorId, i) => ({ recordId: `r${i}`, cursorId, body: '' }));
  return { ports, clock, counted, consumerId, cursorIds, publish, records };
}

/** A function that fails the messages named, with no retry choice, and takes the others. */
const failing =
  (...payloads: string[]): BatchHandler =>
  async (batch) => ({
    failed: new Map(
      batch.messages.filter((m) => payloads.includes(m.payload)).map((m) => [m.messageId, 'refused']),
    ),
    unfinished: new Map(),
  });

describe('processQueueRecords', () => {
  it('refuses a consumer that does not exist (404), naming it', async () => {
    const w = await world();
    await expect(
      processQueueRecords(w.ports, { consumerId: 'nobody', records: [], handleBatch: failing() }),
    ).rejects.toThrow(
      new NotFoundError('Consumer nobody not found: subscribe it first, and do not close it'),
    );
  });

  it('takes the records of any of its partitions’ queues, and refuses another queue’s, naming it', async () => {
    const w = await world({ partitions: 2 });
    await w.publish(2);
    const result = await processQueueRecords(w.ports, {
      consumerId: w.consumerId,
      records: w.records(w.cursorIds[1] as string),
      handleBatch: failing(),
    });
    expect(result.outcomes.map((o) => o.kind)).toEqual(['acknowledged', 'acknowledged']);
    await expect(
      processQueueRecords(w.ports, {
        consumerId: w.consumerId,
        records: w.records('elsewhere'),
        handleBatch: failing(),
      }),
    ).rejects.toThrow(
      new ValidationError(
        `Records of cursor elsewhere do not come from a queue of consumer ${w.consumerId} (subscription fn on ${topic.toString()}): wire the function to its own subscription's queues`,
      ),
    );
  });

  it('still hands a batch over with exactly the reserve left before its deadline', async () => {
    const w = await world();
    await w.publish(1);
    const result = await processQueueRecords(w.ports, {
      consumerId: w.consumerId,
      records: w.records(w.cursorIds[0] as string),
      handleBatch: failing(),
      deadlineMs: w.clock.nowMs() + 3_000,
    });
    expect(result.outcomes.map((o) => o.kind)).toEqual(['acknowledged']);
  });

  it('reports every record failed, with the error, when the step fails', async () => {
    const w = await world();
    await w.publish(1);
    const error = new Error('the function could not be reached');
    const result = await processQueueRecords(w.ports, {
      consumerId: w.consumerId,
      records: w.records(w.cursorIds[0] as string, w.cursorIds[0] as string),
      handleBatch: async () => {
        throw error;
      },
    });
    expect(result).toEqual({ outcomes: [], failedRecords: ['r0', 'r1'], error });
  });

  it('acknowledges and nacks, counting each', async () => {
    const w = await world();
    await w.publish(3);
    const result = await processQueueRecords(w.ports, {
      consumerId: w.consumerId,
      records: w.records(w.cursorIds[0] as string),
      handleBatch: failing('m1'),
    });
    expect(result.outcomes.map((o) => [o.message.payload, o.kind])).toEqual([
      ['m0', 'acknowledged'],
      ['m1', 'negativelyAcknowledged'],
      ['m2', 'acknowledged'],
    ]);
    expect(w.counted.get('acked')).toBe(2);
    expect(w.counted.get('nacked')).toBe(1);
  });

  it('works without counters', async () => {
    const w = await world({ counters: false });
    await w.publish(2);
    const result = await processQueueRecords(w.ports, {
      consumerId: w.consumerId,
      records: w.records(w.cursorIds[0] as string),
      handleBatch: failing('m1'),
    });
    expect(result.error).toBeUndefined();
    expect(result.outcomes.map((o) => o.kind)).toEqual(['acknowledged', 'negativelyAcknowledged']);
  });
});
