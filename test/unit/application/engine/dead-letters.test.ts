import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_CLAIM_MS } from '../../../../shared/application/engine/dead-letter-claim.ts';
import { dispatch } from '../../../../shared/application/engine/dispatcher.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type DeadLetterProducer,
  type Delivery,
  type DispatchConsumer,
  type EngineContext,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import { negativeAcknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { createSubscriptionCursor } from '../../../../shared/application/engine/subscription-cursor.ts';
import { DeadLetterRefusedError } from '../../../../shared/domain/errors.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { StoredEntry } from '../../../../shared/ports/ledger.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// Issue 21, criterion 6, defect 1 (Pulsar's DeadLetterTopicTest.testDuplicatedMessageSendToDeadLetterTopic):
// consumers racing on one tracker entry (or a nack racing the ack timeout) publish one dead letter
// per message, not one each.

const partition = TopicName.parse('persistent://public/default/dead-letters');
const ACK_TIMEOUT_MS = 1_000;

/** A dead-letter producer that counts what it published, by position; optionally refusing. */
function countingProducer(maxRedeliverCount: number, refuse = () => false) {
  const published: string[] = [];
  const producer: DeadLetterProducer = {
    maxRedeliverCount,
    publish: async (entries: readonly StoredEntry[]) => {
      await Promise.resolve();
      if (refuse()) throw new DeadLetterRefusedError('refused');
      published.push(...entries.map((entry) => entry.position.toString()));
    },
  };
  return { producer, published };
}

function world(maxRedeliverCount: number, refuse?: () => boolean) {
  const clock = new ManualClock(1_000_000);
  const ledger = new InMemoryLedger(1000);
  const store = new InMemoryDispatchStore();
  const ctx: EngineContext = { store, ledger, clock, limits: DEFAULT_ENGINE_LIMITS };
  const cursor: PartitionCursor = { partition, cursorId: 'c1', type: 'Shared' };
  const { producer, published } = countingProducer(maxRedeliverCount, refuse);
  const consumer = (consumerId: string): DispatchConsumer => ({
    consumerId,
    ackTimeoutMs: () => ACK_TIMEOUT_MS,
    leaseMs: 60_000,
    deadLetter: producer,
  });
  const receive = async (consumerId: string): Promise<Delivery[]> => {
    const result = await dispatch(ctx, { cursor, consumer: consumer(consumerId), max: 10 });
    return result.kind === 'delivered' ? [...result.deliveries] : [];
  };
  const start = async (count: number) => {
    await ledger.initialize(partition);
    const { positions } = await ledger.append(
      partition,
      Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      clock.nowMs(),
    );
    await createSubscriptionCursor(ctx, cursor, 'Earliest');
    return positions.map(String);
  };
  return { clock, ctx, cursor, published, receive, start };
}

describe('dead letters are published once per message', () => {
  it('three Shared consumers polling at once past maxRedeliverCount 1: one dead letter each, none handed out', async () => {
    const w = world(1);
    const published = await w.start(2);
    expect((await w.receive('a')).map((d) => d.redeliveryCount)).toEqual([0, 0]);
    w.clock.advance(ACK_TIMEOUT_MS);
    expect((await w.receive('b')).map((d) => d.redeliveryCount)).toEqual([1, 1]);
    w.clock.advance(ACK_TIMEOUT_MS);

    const racing = await Promise.all(['a', 'b', 'c'].map((id) => w.receive(id)));

    expect(racing.flat()).toEqual([]);
    expect([...w.published].sort()).toEqual(published);
    w.clock.advance(DEAD_LETTER_CLAIM_MS + ACK_TIMEOUT_MS);
    expect(await Promise.all(['a', 'b', 'c'].map((id) => w.receive(id)))).toEqual([[], [], []]);
    expect(w.published).toHaveLength(2);
  });

  it('a nack past maxRedeliverCount racing the ack timeout’s pickup and a second nack: one dead letter', async () => {
    const w = world(1);
    const [position] = await w.start(1);
    await w.receive('a');
    w.clock.advance(ACK_TIMEOUT_MS);
    const [last] = await w.receive('a');
    w.clock.advance(ACK_TIMEOUT_MS);
    const nack = () =>
      negativeAcknowledge(w.ctx, {
        cursor: w.cursor,
        consumerId: 'a',
        items: [{ position: (last as Delivery).position, redeliveryCount: 1 }],
        delayMs: () => 0,
        deadLetter: countingProducerOf(w),
      });

    const [first, second, picked] = await Promise.all([nack(), nack(), w.receive('b')]);

    expect(last?.redeliveryCount).toBe(1);
    expect(picked).toEqual([]);
    expect(w.published).toEqual([position]);
    expect([...first.deadLettered, ...second.deadLettered].map(String).length).toBeLessThanOrEqual(1);
  });

  it('a refused dead letter leaves the entry as it was: due again, refused again, then published once allowed', async () => {
    let refusing = true;
    const w = world(1, () => refusing);
    const [position] = await w.start(1);
    await w.receive('a');
    w.clock.advance(ACK_TIMEOUT_MS);
    await w.receive('a');
    w.clock.advance(ACK_TIMEOUT_MS);

    await expect(w.receive('b')).rejects.toThrow(DeadLetterRefusedError);
    await expect(w.receive('b')).rejects.toThrow(DeadLetterRefusedError);
    refusing = false;
    const after = await w.receive('b');

    expect(after).toEqual([]);
    expect(w.published).toEqual([position]);
  });
});

/** The world's producer (the nack takes it as the consumer layer passes it). */
function countingProducerOf(w: ReturnType<typeof world>): DeadLetterProducer {
  return {
    maxRedeliverCount: 1,
    publish: async (entries) => {
      await Promise.resolve();
      w.published.push(...entries.map((entry) => entry.position.toString()));
    },
  };
}
