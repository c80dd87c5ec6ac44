import { describe, expect, it } from 'vitest';
import { fanOut, queueOf } from '../../../shared/application/delivery.ts';
import {
  FEED_BATCH,
  FEED_HIGH_WATER,
  FEED_RETRY_MS,
  FEED_TIME_BUDGET_MS,
  INLINE_BACKFILL,
  runFeedJob,
  UNWRITTEN_GRACE_MS,
  UNWRITTEN_RETRY_MS,
} from '../../../shared/application/feed-backlog.ts';
import { rebuildSubscriptionQueues } from '../../../shared/application/rebuild-subscription-queues.ts';
import { runScheduledJob } from '../../../shared/application/run-scheduled-job.ts';
import { ensureSubscription, ensureSubscriptions } from '../../../shared/application/subscribe-consumer.ts';
import { ConflictError } from '../../../shared/domain/errors.ts';
import type { Position } from '../../../shared/domain/position.ts';
import type { SubscriptionType } from '../../../shared/domain/subscription-type.ts';
import { TopicName } from '../../../shared/domain/topic-name.ts';
import type { StoredCursor } from '../../../shared/ports/cursor-store.ts';
import type { FeedJob, ScheduledJob } from '../../../shared/ports/scheduler.ts';
import type { SubscriptionRecord } from '../../../shared/ports/topic-catalog.ts';
import { InMemoryCursorStore } from '../../support/in-memory-cursor-store.ts';
import { InMemoryDeliveryQueue } from '../../support/in-memory-delivery-queue.ts';
import { InMemoryLedger } from '../../support/in-memory-ledger.ts';
import { inMemoryPorts } from '../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../support/in-memory-scheduler.ts';
import { InMemoryTopicCatalog } from '../../support/in-memory-topic-catalog.ts';
import { ManualClock } from '../../support/manual-clock.ts';

const START_MS = 1_700_000_000_000;
const ORDERS = TopicName.parse('persistent://public/default/orders');

/** The cursor store, counting loads (flow control must not read the cursor), with a hook per slice. */
class CountingCursorStore extends InMemoryCursorStore {
  loads = 0;
  /** Run at each delivery-state read (once per slice of 100 entries a backfill enqueues). */
  onDeliveryState: (() => void) | undefined;

  override async deliveryState(cursorId: string, positions: readonly Position[]) {
    this.onDeliveryState?.();
    return super.deliveryState(cursorId, positions);
  }

  override async load(cursorId: string): Promise<StoredCursor | undefined> {
    this.loads += 1;
    return super.load(cursorId);
  }
}

/**
 * The catalog, with hooks: after getSubscription answered (a delete landing
 * meanwhile), before recordFeedProgress writes (another job running first).
 */
class HookedTopicCatalog extends InMemoryTopicCatalog {
  afterGetSubscription: (() => Promise<void>) | undefined;
  beforeRecordFeedProgress: (() => Promise<void>) | undefined;

  override async recordFeedProgress(
    ...args: Parameters<InMemoryTopicCatalog['recordFeedProgress']>
  ): Promise<boolean> {
    await this.beforeRecordFeedProgress?.();
    return super.recordFeedProgress(...args);
  }

  override async getSubscription(
    partition: TopicName,
    name: string,
  ): Promise<SubscriptionRecord | undefined> {
    const record = await super.getSubscription(partition, name);
    await this.afterGetSubscription?.();
    return record;
  }
}

/** One deployment in memory: ledgers of `maxEntriesPerLedger` entries, time at START_MS. */
function deployment(maxEntriesPerLedger = 1_500) {
  const clock = new ManualClock(START_MS);
  const catalog = new HookedTopicCatalog();
  const ledger = new InMemoryLedger(maxEntriesPerLedger);
  const cursors = new CountingCursorStore();
  const deliveryQueue = new InMemoryDeliveryQueue();
  const scheduler = new InMemoryScheduler();
  const { ports, counted } = inMemoryPorts({ catalog, ledger, cursors, deliveryQueue, scheduler, clock });

  async function topic(): Promise<TopicName> {
    await catalog.createTopic({ topic: ORDERS, partitions: 0, createdAtMs: clock.nowMs() });
    await ledger.initialize(ORDERS);
    return ORDERS;
  }

  /** Appends `count` messages in publishes of at most 1,000 (one chunk each in DynamoDB). */
  async function publish(count: number, from = 0): Promise<Position[]> {
    const positions: Position[] = [];
    for (let i = 0; i < count; i += 1_000) {
      const entries = Array.from({ length: Math.min(1_000, count - i) }, (_, j) => ({
        payload: `m${from + i + j}`,
        properties: {},
      }));
      positions.push(...(await ledger.append(ORDERS, entries, clock.nowMs())).positions);
    }
    return positions;
  }

  function subscribe(name = 'billing', type: SubscriptionType = 'Shared'): Promise<SubscriptionRecord> {
    return ensureSubscription(ports, ORDERS, name, type, 'Earliest');
  }

  /** The positions of the tokens on a subscription's queue, in the order they were sent. */
  function queued(subscription: SubscriptionRecord): string[] {
    return (deliveryQueue.sent.get(subscription.cursorId) ?? []).map(
      ({ token }) => `${token.ledgerId}:${token.entryId}`,
    );
  }

  /** Runs every scheduled job, and the jobs they schedule, until none is left (at most `rounds`). */
  async function drain(rounds = 100): Promise<ScheduledJob[]> {
    const ran: ScheduledJob[] = [];
    for (let round = 0; round < rounds && scheduler.jobs.length > 0; round++) {
      for (const job of scheduler.take()) {
        ran.push(job);
        await runScheduledJob(ports, job);
      }
    }
    return ran;
  }

  return {
    ports,
    clock,
    catalog,
    ledger,
    cursors,
    deliveryQueue,
    scheduler,
    counted,
    topic,
    publish,
    subscribe,
    queued,
    drain,
  };
}

const texts = (positions: readonly Position[]): string[] => positions.map(String);

function feedJobs(jobs: readonly ScheduledJob[]): FeedJob[] {
  return jobs.filter((job): job is FeedJob => job.kind === 'feed');
}

describe('feedBacklog: a subscribe at Earliest', () => {
  it('enqueues a backlog of at most INLINE_BACKFILL entries itself and schedules nothing', async () => {
    const d = deployment();
    await d.topic();
    const positions = await d.publish(INLINE_BACKFILL);

    const billing = await d.subscribe();

    expect(d.queued(billing)).toEqual(texts(positions));
    expect(d.scheduler.jobs).toEqual([]);
  });

  it('enqueues the first INLINE_BACKFILL entries and schedules a feed job, due now, for the rest', async () => {
    const d = deployment();
    await d.topic();
    const positions = await d.publish(INLINE_BACKFILL + 1);

    const billing = await d.subscribe();

    expect(d.queued(billing)).toEqual(texts(positions.slice(0, INLINE_BACKFILL)));
    const last = positions[positions.length - 1]!;
    const after = positions[INLINE_BACKFILL - 1]!;
    expect(d.scheduler.jobs).toEqual([
      {
        kind: 'feed',
        partition: ORDERS.toString(),
        subscription: 'billing',
        queue: queueOf(billing),
        jobId: 'id-2',
        after: { ledgerId: after.ledgerId.toString(), entryId: after.entryId.toString() },
        until: { ledgerId: last.ledgerId.toString(), entryId: last.entryId.toString() },
        dueAtMs: START_MS,
        awaitUnwrittenUntilMs: START_MS + UNWRITTEN_GRACE_MS,
      } satisfies FeedJob,
    ]);
  });

  it('feeds a backlog spread over several ledgers exactly once, in log order, FEED_BATCH per job', async () => {
    const d = deployment(1_500);
    await d.topic();
    const total = INLINE_BACKFILL + 2 * FEED_BATCH + 345;
    const positions = await d.publish(total);
    expect((await d.ledger.state(ORDERS))?.ledgers.length).toBeGreaterThan(3);

    const billing = await d.subscribe();
    const ran = await d.drain();

    expect(d.queued(billing)).toEqual(texts(positions));
    expect(feedJobs(ran)).toHaveLength(3);
    expect(d.counted.get('backlogFed')).toBe(total - INLINE_BACKFILL);
    const tokens = d.deliveryQueue.sent.get(billing.cursorId) ?? [];
    expect(tokens.every(({ token, delaySeconds }) => token.redeliveryCount === 0 && delaySeconds === 0)).toBe(
      true,
    );
    expect(tokens[0]?.token.message?.payload).toBe('m0');
  });

  it('keeps log order on an ordered (Exclusive) subscription queue', async () => {
    const d = deployment(700);
    await d.topic();
    const positions = await d.publish(INLINE_BACKFILL + FEED_BATCH + 10);

    const owner = await d.subscribe('owner', 'Exclusive');
    await d.drain();

    expect(queueOf(owner).ordered).toBe(true);
    expect(d.queued(owner)).toEqual(texts(positions));
  });

  it('stops at the last entry written when the subscription was created: later ones are fan-out’s', async () => {
    const d = deployment();
    await d.topic();
    const backlog = await d.publish(INLINE_BACKFILL + 500);
    const billing = await d.subscribe();

    // Published after the subscription existed: publish's fan-out sends these tokens.
    const later = await d.publish(300, INLINE_BACKFILL + 500);
    await d.drain();

    expect(d.queued(billing)).toEqual(texts(backlog));
    expect(d.queued(billing)).not.toContain(later[0]!.toString());
  });

  it('skips what was acknowledged after the feed started, and an acknowledged `after` itself', async () => {
    const d = deployment();
    await d.topic();
    const positions = await d.publish(INLINE_BACKFILL + 100);
    const billing = await d.subscribe();
    // A consumer acknowledges the inline part (mark-delete moves past `after`) and a few later ones.
    const acked = [
      ...positions.slice(0, INLINE_BACKFILL),
      ...positions.slice(INLINE_BACKFILL + 10, INLINE_BACKFILL + 20),
    ];
    await d.cursors.acknowledge(billing.cursorId, acked);

    await d.drain();

    const fed = d.queued(billing).slice(INLINE_BACKFILL);
    expect(fed).toEqual(
      texts([
        ...positions.slice(INLINE_BACKFILL, INLINE_BACKFILL + 10),
        ...positions.slice(INLINE_BACKFILL + 20),
      ]),
    );
  });

  it('carries the redelivery counts the cursor recorded', async () => {
    const d = deployment();
    await d.topic();
    const positions = await d.publish(INLINE_BACKFILL + 5);
    const billing = await d.subscribe();
    const redelivered = positions[INLINE_BACKFILL + 2]!;
    await d.cursors.recordRedelivery(billing.cursorId, [{ position: redelivered, count: 3 }]);

    await d.drain();

    const token = (d.deliveryQueue.sent.get(billing.cursorId) ?? []).find(
      ({ token }) => `${token.ledgerId}:${token.entryId}` === redelivered.toString(),
    );
    expect(token?.token.redeliveryCount).toBe(3);
  });

  it('waits for ids allocated before the announcement and still being written, then feeds them once', async () => {
    const d = deployment();
    await d.topic();
    await d.publish(INLINE_BACKFILL + 10);
    // A publisher with the subscriptions of the version before the announcement in its memo
    // (its last publish listed them), that allocates two ids and is still writing them.
    const before = (await d.ledger.state(ORDERS))!.subscriptionsVersion;
    await fanOut(d.ports, ORDERS, [], before);
    await fanOut(
      d.ports,
      ORDERS,
      (await d.ledger.append(ORDERS, [{ payload: 'warm', properties: {} }], START_MS)).positions.map(
        (position) => ({ position, payload: 'warm', properties: {}, publishTimeMs: START_MS }),
      ),
      before,
    );
    const unwritten = d.ledger.allocateUnwritten(ORDERS, 2);
    const billing = await d.subscribe();
    expect((await d.ledger.state(ORDERS))!.subscriptionsVersion).not.toBe(before);

    await d.drain(1);
    // The feed stopped before the first unwritten id and waits UNWRITTEN_RETRY_MS.
    expect(d.queued(billing)).toHaveLength(INLINE_BACKFILL + 11);
    expect(feedJobs(d.scheduler.jobs).map((job) => job.dueAtMs)).toEqual([START_MS + UNWRITTEN_RETRY_MS]);

    // The publisher finishes: its fan-out uses the version it allocated with, which has no billing.
    const written = unwritten.map((position, i) =>
      d.ledger.writeAllocated(position, { payload: `late ${i}`, properties: {} }, START_MS),
    );
    await fanOut(d.ports, ORDERS, written, before);
    d.clock.advance(UNWRITTEN_RETRY_MS);
    await d.drain();

    const queued = d.queued(billing);
    expect(queued.slice(-2)).toEqual(texts(unwritten));
    expect(new Set(queued).size).toBe(queued.length);
    expect(queued).toHaveLength(INLINE_BACKFILL + 13);
  });

  it('acknowledges ids still unwritten UNWRITTEN_GRACE_MS after the announcement (their publisher died)', async () => {
    const d = deployment();
    await d.topic();
    const backlog = await d.publish(10);
    const unwritten = d.ledger.allocateUnwritten(ORDERS, 2);
    const after = await d.publish(5, 10);
    const billing = await d.subscribe();
    expect(d.queued(billing)).toEqual(texts(backlog));

    for (let waited = 0; waited <= UNWRITTEN_GRACE_MS; waited += UNWRITTEN_RETRY_MS) {
      d.clock.advance(UNWRITTEN_RETRY_MS);
      await d.drain(1);
    }
    await d.drain();

    expect(d.queued(billing)).toEqual(texts([...backlog, ...after]));
    expect(await d.cursors.isAcknowledged(billing.cursorId, unwritten)).toEqual([true, true]);
    expect(d.scheduler.jobs).toEqual([]);
  });

  it('publishers list the subscriptions once per version; one allocating after the announcement sends its own token', async () => {
    const d = deployment();
    await d.topic();
    let listed = 0;
    const list = d.catalog.listSubscriptions.bind(d.catalog);
    d.catalog.listSubscriptions = (partition) => {
      listed += 1;
      return list(partition);
    };
    const publishAndFanOut = async (payload: string) => {
      const { positions, subscriptionsVersion } = await d.ledger.append(
        ORDERS,
        [{ payload, properties: {} }],
        START_MS,
      );
      const entries = positions.map((position) => ({
        position,
        payload,
        properties: {},
        publishTimeMs: START_MS,
      }));
      await fanOut(d.ports, ORDERS, entries, subscriptionsVersion);
      return positions;
    };
    await d.publish(INLINE_BACKFILL);
    await publishAndFanOut('a');
    await publishAndFanOut('b');
    expect(listed).toBe(1);

    const billing = await d.subscribe();
    const later = [...(await publishAndFanOut('c')), ...(await publishAndFanOut('d'))];
    await d.drain();

    expect(listed).toBe(2);
    const queued = d.queued(billing);
    expect(queued).toEqual(expect.arrayContaining(texts(later)));
    expect(new Set(queued).size).toBe(queued.length);
    expect(queued).toHaveLength(INLINE_BACKFILL + 4);
  });

  it('withdraws a subscription whose announcement failed; the retry creates it whole and feeds everything', async () => {
    const d = deployment();
    await d.topic();
    const backlog = await d.publish(10);
    d.ledger.failNext('announceSubscriptions', new Error('throttled'));

    await expect(d.subscribe()).rejects.toThrow('throttled');
    expect(await d.catalog.getSubscription(ORDERS, 'billing')).toBeUndefined();
    expect(d.deliveryQueue.sent.size).toBe(0);

    const billing = await d.subscribe();
    expect(d.queued(billing)).toEqual(texts(backlog));
  });

  it('schedules nothing at Latest: there is no backlog to feed', async () => {
    const d = deployment();
    await d.topic();
    await d.publish(INLINE_BACKFILL + 10);

    const billing = await ensureSubscription(d.ports, ORDERS, 'billing', 'Shared', 'Latest');

    expect(d.queued(billing)).toEqual([]);
    expect(d.scheduler.jobs).toEqual([]);
  });
});

describe('runFeedJob', () => {
  /** A subscription whose backlog needs the feeder, and its first feed job (taken off the scheduler). */
  async function feeding(d: ReturnType<typeof deployment>, backlog = INLINE_BACKFILL + FEED_BATCH + 10) {
    await d.topic();
    const positions = await d.publish(backlog);
    const billing = await d.subscribe();
    const [job] = feedJobs(d.scheduler.take());
    if (!job) throw new Error('no feed job was scheduled');
    return { positions, billing, job };
  }

  it('enqueues FEED_BATCH entries after `after` and schedules the job for the rest, due now', async () => {
    const d = deployment();
    const { positions, billing, job } = await feeding(d);
    d.clock.advance(5_000);

    const outcome = await runFeedJob(d.ports, job);

    expect(outcome).toBe('fed');
    expect(d.queued(billing)).toEqual(texts(positions.slice(0, INLINE_BACKFILL + FEED_BATCH)));
    const next = positions[INLINE_BACKFILL + FEED_BATCH - 1]!;
    expect(d.scheduler.jobs).toEqual([
      {
        ...job,
        jobId: 'id-3',
        previousJobId: job.jobId,
        after: { ledgerId: next.ledgerId.toString(), entryId: next.entryId.toString() },
        dueAtMs: START_MS + 5_000,
      },
    ]);
  });

  it(`starts no new slice after FEED_TIME_BUDGET_MS: the next job goes on from the last entry covered`, async () => {
    const d = deployment();
    const { positions, billing, job } = await feeding(d);
    // Every slice of 100 entries takes a second.
    d.cursors.onDeliveryState = () => d.clock.advance(1_000);

    await runFeedJob(d.ports, job);
    const [next] = feedJobs(d.scheduler.jobs);
    d.cursors.onDeliveryState = undefined;
    await d.drain();

    const slices = Math.ceil(FEED_TIME_BUDGET_MS / 1_000);
    const last = positions[INLINE_BACKFILL + slices * 100 - 1]!;
    expect(next?.after).toEqual({ ledgerId: last.ledgerId.toString(), entryId: last.entryId.toString() });
    expect(d.queued(billing)).toEqual(texts(positions));
  });

  it('schedules nothing after the last part', async () => {
    const d = deployment();
    const { positions, billing, job } = await feeding(d, INLINE_BACKFILL + FEED_BATCH);

    await runFeedJob(d.ports, job);

    expect(d.queued(billing)).toEqual(texts(positions));
    expect(d.scheduler.jobs).toEqual([]);
  });

  it(`waits ${FEED_RETRY_MS} ms without reading the cursor while the queue holds more than FEED_HIGH_WATER tokens`, async () => {
    const d = deployment();
    const { billing, job } = await feeding(d);
    const tokens = d.deliveryQueue.sent.get(billing.cursorId)!;
    const filler = tokens[0]!;
    while (tokens.length <= FEED_HIGH_WATER) tokens.push(filler);
    const loads = d.cursors.loads;

    const outcome = await runFeedJob(d.ports, job);

    expect(outcome).toBe('waiting');
    expect(d.cursors.loads).toBe(loads);
    expect(tokens).toHaveLength(FEED_HIGH_WATER + 1);
    expect(d.scheduler.jobs).toEqual([{ ...job, dueAtMs: START_MS + FEED_RETRY_MS }]);
  });

  it('feeds again once consumers took the queue down to FEED_HIGH_WATER', async () => {
    const d = deployment();
    const { billing, job } = await feeding(d);
    const tokens = d.deliveryQueue.sent.get(billing.cursorId)!;
    tokens.splice(0);
    const filler = {
      token: { topic: ORDERS.toString(), ledgerId: '1', entryId: '0', redeliveryCount: 0 },
      delaySeconds: 0,
    };
    while (tokens.length < FEED_HIGH_WATER) tokens.push(filler);

    const outcome = await runFeedJob(d.ports, job);

    expect(outcome).toBe('fed');
    expect(tokens).toHaveLength(FEED_HIGH_WATER + FEED_BATCH);
  });

  it('a waiting job hops on the scheduler until due, then feeds', async () => {
    const d = deployment();
    const { billing, job } = await feeding(d);
    const tokens = d.deliveryQueue.sent.get(billing.cursorId)!;
    const filler = tokens[0]!;
    while (tokens.length <= FEED_HIGH_WATER) tokens.push(filler);
    await runFeedJob(d.ports, job);
    const [waiting] = d.scheduler.take();
    tokens.splice(0);

    expect(await runScheduledJob(d.ports, waiting!)).toBe('hopped');
    d.clock.advance(FEED_RETRY_MS);
    const [hopped] = d.scheduler.take();
    expect(await runScheduledJob(d.ports, hopped!)).toBe('done');

    expect(tokens).toHaveLength(FEED_BATCH);
  });

  it('drops the job of a deleted subscription', async () => {
    const d = deployment();
    const { billing, job } = await feeding(d);
    await d.catalog.deleteSubscription(ORDERS, 'billing');
    await d.cursors.delete(billing.cursorId);
    await d.deliveryQueue.delete(queueOf(billing));

    expect(await runFeedJob(d.ports, job)).toBe('dropped');
    expect(d.scheduler.jobs).toEqual([]);
  });

  it('drops the job of a subscription deleted and created again (another cursor, another queue)', async () => {
    const d = deployment();
    const { billing, job } = await feeding(d);
    await d.catalog.deleteSubscription(ORDERS, 'billing');
    await d.deliveryQueue.delete(queueOf(billing));
    const again = await d.subscribe();
    d.scheduler.take();
    const queuedAgain = d.queued(again);

    expect(await runFeedJob(d.ports, job)).toBe('dropped');
    expect(d.queued(again)).toEqual(queuedAgain);
    expect(d.scheduler.jobs).toEqual([]);
  });

  it('drops the job when the subscription is deleted while it runs', async () => {
    const d = deployment();
    const { billing, job } = await feeding(d);
    // Deleted right after the job found it: the record, then its cursor and queue go.
    d.catalog.afterGetSubscription = async () => {
      d.catalog.afterGetSubscription = undefined;
      await d.catalog.deleteSubscription(ORDERS, 'billing');
      await d.cursors.delete(billing.cursorId);
      await d.deliveryQueue.delete(queueOf(billing));
    };

    expect(await runFeedJob(d.ports, job)).toBe('dropped');
    expect(d.scheduler.jobs).toEqual([]);
  });

  it('a copy of a job that already ran (SQS delivered it twice) feeds nothing and schedules nothing', async () => {
    const d = deployment();
    const { billing, job } = await feeding(d);
    await runFeedJob(d.ports, job);
    d.scheduler.take();
    const queued = d.queued(billing);

    expect(await runFeedJob(d.ports, job)).toBe('dropped');
    expect(d.queued(billing)).toEqual(queued);
    expect(d.scheduler.jobs).toEqual([]);
  });

  it('two copies running at once feed their part twice at most, and the feed goes on once', async () => {
    const d = deployment();
    const { positions, billing, job } = await feeding(d, INLINE_BACKFILL + 3 * FEED_BATCH);

    const outcomes = await Promise.all([runFeedJob(d.ports, job), runFeedJob(d.ports, job)]);
    // Each copy scheduled a next job; the one whose claim lost is dropped when it runs.
    await d.drain();

    expect([...outcomes].sort()).toEqual(['dropped', 'fed']);
    const queued = d.queued(billing);
    expect(new Set(queued)).toEqual(new Set(texts(positions)));
    expect(queued.length - positions.length).toBeLessThanOrEqual(FEED_BATCH);
  });

  it('a job that failed to schedule the next job feeds its part again when SQS retries it (at least once)', async () => {
    const d = deployment();
    const { positions, billing, job } = await feeding(d);
    d.scheduler.failNext('schedule', new Error('SQS unavailable'));
    await expect(runFeedJob(d.ports, job)).rejects.toThrow('SQS unavailable');

    expect(await runFeedJob(d.ports, job)).toBe('fed');
    await d.drain();

    const queued = d.queued(billing);
    expect(new Set(queued)).toEqual(new Set(texts(positions)));
    expect(queued).toHaveLength(positions.length + FEED_BATCH);
  });

  it('a job whose claim failed after it scheduled the next job: the next job takes over, the retry feeds nothing', async () => {
    const d = deployment();
    const { positions, billing, job } = await feeding(d, INLINE_BACKFILL + 2 * FEED_BATCH + 10);
    d.catalog.failNext('recordFeedProgress', new Error('throttled'));
    await expect(runFeedJob(d.ports, job)).rejects.toThrow('throttled');

    const [next] = d.scheduler.take();
    const nextOutcome = await runFeedJob(d.ports, next as FeedJob);
    const retryOutcome = await runFeedJob(d.ports, job);
    await d.drain();

    expect([nextOutcome, retryOutcome]).toEqual(['fed', 'dropped']);
    expect(d.queued(billing)).toEqual(texts(positions));
  });

  it('a next job that runs before its predecessor recorded its claim takes over; the late claim loses', async () => {
    const d = deployment();
    const { positions, billing, job } = await feeding(d, INLINE_BACKFILL + 2 * FEED_BATCH + 10);
    let early: Promise<string> | undefined;
    d.catalog.beforeRecordFeedProgress = async () => {
      d.catalog.beforeRecordFeedProgress = undefined;
      const [next] = d.scheduler.take();
      early = runFeedJob(d.ports, next as FeedJob);
      await early;
    };

    const outcome = await runFeedJob(d.ports, job);
    await d.drain();

    expect([await early, outcome]).toEqual(['fed', 'dropped']);
    expect(d.queued(billing)).toEqual(texts(positions));
  });

  it('the last job run again feeds nothing and schedules nothing', async () => {
    const d = deployment();
    const { positions, billing, job } = await feeding(d, INLINE_BACKFILL + FEED_BATCH);
    await runFeedJob(d.ports, job);

    expect(await runFeedJob(d.ports, job)).toBe('dropped');
    expect(d.queued(billing)).toEqual(texts(positions));
    expect(d.scheduler.jobs).toEqual([]);
  });

  it('a feed started over (a queue rebuild) stops the older feed at its next job', async () => {
    const d = deployment();
    const { billing, job } = await feeding(d);
    d.deliveryQueue.sent.set(billing.cursorId, []);
    await rebuildSubscriptionQueues(d.ports);
    const [rebuilt] = feedJobs(d.scheduler.take());

    expect(await runFeedJob(d.ports, job)).toBe('dropped');
    expect(d.queued(billing)).toHaveLength(INLINE_BACKFILL);
    expect(rebuilt?.jobId).not.toBe(job.jobId);
    expect(await runFeedJob(d.ports, rebuilt!)).toBe('fed');
  });

  it('fails (and SQS retries it) when storage fails, without scheduling the next part', async () => {
    const d = deployment();
    const { job } = await feeding(d);
    d.ledger.failNext('readEntries', new Error('throttled'));

    await expect(runFeedJob(d.ports, job)).rejects.toThrow('throttled');
    expect(d.scheduler.jobs).toEqual([]);
  });
});

describe('rebuildSubscriptionQueues', () => {
  it('enqueues the first part of each backlog, reports it, and feeds the rest acknowledging unwritten ids', async () => {
    const d = deployment();
    await d.topic();
    const first = await d.publish(INLINE_BACKFILL + 5);
    const billing = await d.subscribe();
    const small = await ensureSubscription(d.ports, ORDERS, 'small', 'Shared', 'Latest');
    const tail = await d.publish(3, INLINE_BACKFILL + 5);
    // A publisher died between allocating and writing: holes in the inline part and in the fed part.
    const [early] = d.ledger.allocateUnwritten(ORDERS, 1);
    const more = await d.publish(INLINE_BACKFILL, 5_000);
    const [late] = d.ledger.allocateUnwritten(ORDERS, 1);
    const last = await d.publish(2, 9_000);
    // The embedded stack restarted: local SQS lost every queue and job.
    d.scheduler.take();
    for (const cursorId of [billing.cursorId, small.cursorId]) d.deliveryQueue.sent.set(cursorId, []);

    const counts = await rebuildSubscriptionQueues(d.ports, { acknowledgeUnwritten: true });
    const jobs = feedJobs(d.scheduler.jobs);
    await d.drain();

    expect(counts).toEqual({
      [`${ORDERS.toString()}|billing`]: INLINE_BACKFILL,
      // 1,000 positions: 3, a hole, 996: 999 tokens.
      [`${ORDERS.toString()}|small`]: INLINE_BACKFILL - 1,
    });
    expect(jobs.map((job) => [job.subscription, job.acknowledgeUnwritten])).toEqual([
      ['billing', true],
      ['small', true],
    ]);
    expect(d.queued(billing)).toEqual(texts([...first, ...tail, ...more, ...last]));
    expect(d.queued(small)).toEqual(texts([...tail, ...more, ...last]));
    for (const subscription of [billing, small]) {
      expect(await d.cursors.isAcknowledged(subscription.cursorId, [early!, late!])).toEqual([true, true]);
    }
  });
});

describe('ensureSubscriptions: a partitioned topic', () => {
  const partitioned = TopicName.parse('persistent://public/default/payments');
  const partitions = Array.from({ length: 20 }, (_, index) => partitioned.partition(index));

  it("creates every partition's subscription; the partitions share the first part, the feeder does the rest", async () => {
    const d = deployment();
    for (const partition of partitions) {
      await d.ledger.initialize(partition);
      await d.ledger.append(
        partition,
        Array.from({ length: 300 }, (_, i) => ({
          payload: `${partition.partitionIndex}-${i}`,
          properties: {},
        })),
        START_MS,
      );
    }

    const subscriptions = await ensureSubscriptions(d.ports, partitions, 'billing', 'Shared', 'Earliest');
    const inline = subscriptions.map((subscription) => d.queued(subscription).length);
    await d.drain();

    expect(inline).toEqual(partitions.map(() => INLINE_BACKFILL / partitions.length));
    for (const [index, partition] of partitions.entries()) {
      expect(subscriptions[index]).toEqual(await d.catalog.getSubscription(partition, 'billing'));
      expect(d.queued(subscriptions[index]!)).toHaveLength(300);
    }
    expect(new Set(subscriptions.map((s) => s.cursorId)).size).toBe(partitions.length);
  });

  it('throws the first failure: a partition whose subscription has another type', async () => {
    const d = deployment();
    for (const partition of partitions) await d.ledger.initialize(partition);
    await ensureSubscription(d.ports, partitions[13]!, 'billing', 'Exclusive', 'Earliest');

    await expect(
      ensureSubscriptions(d.ports, partitions, 'billing', 'Shared', 'Earliest'),
    ).rejects.toBeInstanceOf(ConflictError);
  });
});
