import { describe, expect, it } from 'vitest';
import {
  acknowledgeMessages,
  redeliverUnacknowledged,
} from '../../../../shared/application/consumers/consumer-acks.ts';
import { receiveMessages } from '../../../../shared/application/consumers/receive-messages.ts';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { runScheduledJob } from '../../../../shared/application/maintenance/run-scheduled-job.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { DeadLetterJob } from '../../../../shared/ports/scheduler.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// Issue 21, criterion 6, defect 2 (Pulsar's DeadLetterTopicTest.testDeadLetterTopic): a consumer
// got a message with counts 0, 1 and 2 (maxRedeliverCount 2, ack timeout 1 s) and stopped polling;
// nothing dead-lettered it, and a new consumer got it with count 3. Pulsar dead-letters on its
// timer: so does the server, with a scheduler job at the last delivery's ack timeout.

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://public/default/timers');
const deadLetterTopic = TopicName.parse('persistent://public/default/timers-sub-DLQ');
const ACK_TIMEOUT_MS = 1_000;

function world() {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new InMemoryScheduler();
  const { ports, counted } = inMemoryPorts({ clock, scheduler, consumers: new InMemoryConsumerRegistry() });
  const subscribe = async (name: string, maxRedeliverCount?: number) =>
    (
      await subscribeConsumer(ports, admin, {
        topic: name === 'reader' ? deadLetterTopic : topic,
        subscription: name === 'reader' ? 'reader' : 'sub',
        subscriptionType: 'Shared',
        initialPosition: 'Earliest',
        policy: {
          ackTimeoutMs: ACK_TIMEOUT_MS,
          ...(maxRedeliverCount ? { deadLetterPolicy: { maxRedeliverCount } } : {}),
        },
      })
    ).consumerId;
  const receive = (consumerId: string) => receiveMessages(ports, admin, consumerId, { maxMessages: 10 });
  /** The dead-letter jobs scheduled so far (the others, rings and releases, are dropped). */
  const deadLetterJobs = () =>
    scheduler.take().filter((job): job is DeadLetterJob => job.kind === 'deadLetter');
  return { clock, ports, counted, subscribe, receive, deadLetterJobs };
}

async function publishOne(ports: UseCasePorts): Promise<void> {
  await publishMessages(ports, admin, topic, {
    messages: [{ payload: 'poison', properties: {} }],
    router: new RoundRobinRouter(0),
  });
}

describe('dead letters on the server’s timer', () => {
  it('counts 0, 1, 2, the consumer stops polling: its last ack timeout dead-letters the message, no count 3', async () => {
    const w = world();
    const consumer = await w.subscribe('worker', 2);
    await publishOne(w.ports);
    const counts: number[] = [];
    for (let i = 0; i < 3; i++) {
      counts.push(...(await w.receive(consumer)).map((m) => m.redeliveryCount));
      if (i < 2) w.clock.advance(ACK_TIMEOUT_MS);
    }
    const jobs = w.deadLetterJobs();

    w.clock.advance(ACK_TIMEOUT_MS);
    for (const job of jobs) await runScheduledJob(w.ports, job);
    const late = await w.subscribe('late');
    const reader = await w.subscribe('reader');

    expect(counts).toEqual([0, 1, 2]);
    expect(jobs.map((job) => job.dueAtMs)).toEqual([w.clock.nowMs()]);
    expect(w.counted.get('deadLettered')).toBe(1);
    expect((await w.receive(late)).map((m) => m.redeliveryCount)).toEqual([]);
    expect((await w.receive(reader)).map((m) => [m.payload, m.properties.REAL_SUBSCRIPTION])).toEqual([
      ['poison', 'sub'],
    ]);
  });

  it('a job that runs before the ack timeout is over (another clock) looks again then, and publishes nothing before', async () => {
    const w = world();
    const consumer = await w.subscribe('worker', 1);
    await publishOne(w.ports);
    await w.receive(consumer);
    w.clock.advance(ACK_TIMEOUT_MS);
    await w.receive(consumer);
    const [job] = w.deadLetterJobs();

    w.clock.advance(ACK_TIMEOUT_MS - 30);
    await runScheduledJob(w.ports, job as DeadLetterJob);
    const again = w.deadLetterJobs();
    w.clock.advance(30);
    for (const next of again) await runScheduledJob(w.ports, next);

    expect(again.map((next) => next.dueAtMs)).toEqual([(job as DeadLetterJob).dueAtMs]);
    expect(w.counted.get('deadLettered')).toBe(1);
  });

  it('a message acknowledged before its timer is left alone by it', async () => {
    const w = world();
    const consumer = await w.subscribe('worker', 1);
    await publishOne(w.ports);
    await w.receive(consumer);
    w.clock.advance(ACK_TIMEOUT_MS);
    const [last] = await w.receive(consumer);
    const [job] = w.deadLetterJobs();
    await acknowledgeMessages(w.ports, admin, consumer, {
      messageIds: [],
      deliveryHandles: [last?.deliveryHandle as string],
    });

    w.clock.advance(ACK_TIMEOUT_MS);
    await runScheduledJob(w.ports, job as DeadLetterJob);

    expect(last?.redeliveryCount).toBe(1);
    expect(w.counted.get('deadLettered')).toBeUndefined();
    expect(w.deadLetterJobs()).toEqual([]);
  });
});

describe('dead letters on the server’s timer: Exclusive and Failover rewinds', () => {
  it.each([
    'Exclusive',
    'Failover',
  ] as const)('%s: a delivery with the last allowed count from a rewind’s replay is dead-lettered at its ack timeout, with nobody polling', async (subscriptionType) => {
    const w = world();
    const { consumerId } = await subscribeConsumer(w.ports, admin, {
      topic,
      subscription: 'sub',
      subscriptionType,
      initialPosition: 'Earliest',
      policy: { ackTimeoutMs: ACK_TIMEOUT_MS, deadLetterPolicy: { maxRedeliverCount: 1 } },
    });
    await publishOne(w.ports);
    const first = await w.receive(consumerId);
    // redeliverUnacknowledged rewinds: the replay hands the message out again, count 1.
    await redeliverUnacknowledged(w.ports, admin, consumerId, []);
    const replayed = await w.receive(consumerId);
    const jobs = w.deadLetterJobs();

    w.clock.advance(ACK_TIMEOUT_MS);
    for (const job of jobs) await runScheduledJob(w.ports, job);

    expect([...first, ...replayed].map((m) => m.redeliveryCount)).toEqual([0, 1]);
    expect(jobs.map((job) => job.dueAtMs)).toEqual([w.clock.nowMs()]);
    expect(w.counted.get('deadLettered')).toBe(1);
  });
});
