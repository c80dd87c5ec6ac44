import { SubscriptionNotFoundError } from '../../domain/catalog-errors.ts';
import { MAX_CONSUMER_LEASE_MS } from '../../domain/consumer-lease.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { ActiveSubscription } from '../../ports/activity-index.ts';
import type { ManagedLedgerState } from '../../ports/ledger.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import { releaseConsumer, scheduleSecondPass, subscriptionKey } from '../consumers/consumer-session.ts';
import { doorbellOf } from '../consumers/doorbells.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { foldStep } from '../engine/fold.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { expandPartitionMarks, MARK_EVERY_MS } from './activity.ts';
import { resumeStaleDeletions } from './deletion-jobs.ts';

/** A due backlog entry waiting this long gets the subscription's doorbell rung by maintenance. */
const STALE_BACKLOG_MS = 30_000;
/** Storage calls maintenance keeps in flight at once (catalog lists, queue attributes, cursors). */
const CONCURRENCY = 8;
/**
 * A subscription with only a backlog nobody consumes (no HTTP consumer, nothing due) is visited
 * again after this long; its backlog's age is reported from the index meanwhile.
 */
export const BACKLOG_REVISIT_MS = 30 * 60_000;
/** One subscription of one topic partition, keyed for a stable order across runs. */
interface SubscriptionAt {
  readonly partition: TopicName;
  readonly subscription: SubscriptionRecord;
  /** `["<partition>","<name>"]`: unique, and the order maintenance walks in. */
  readonly key: string;
  /** Its activity index entry (absent while seeding). */
  readonly entry?: ActiveSubscription;
}

/** A subscription as maintenance reports it. */
export interface SubscriptionRef {
  readonly partition: string;
  readonly subscription: string;
  readonly cursorId: string;
}

/** A step that failed for one topic partition or subscription; the run went on without it. */
export interface MaintenanceFailure {
  readonly step: 'listSubscriptions' | 'deadLetters' | 'fold' | 'deletion' | 'audit';
  /** The partition (listSubscriptions), the job id (deletion), or JSON `[partition, subscription]`. */
  readonly target: string;
  readonly error: unknown;
}

export interface MaintenanceOptions {
  /**
   * Epoch ms (of `ports.clock`) from which no further deletion step, partition or subscription is
   * started (the ones started finish). Whatever is left waits for the next run. The handler takes
   * it from the Lambda context's remaining time.
   */
  readonly deadlineMs: number;
  /** `resumeAfter` of the previous run's summary: the fold starts after that subscription. */
  readonly resumeAfter?: string;
  /**
   * Without `resumeAfter`: where the fold starts, as a fraction (0 <= f < 1) of
   * the subscriptions in their order. A caller that loses `resumeAfter` (a cold
   * start) passes a random one, so even runs that never finish reach every
   * subscription in the long run. Default 0.
   */
  readonly startAt?: number;
  /** Hears each isolated failure when it happens (the handler logs it). */
  readonly onFailure?: (failure: MaintenanceFailure) => void;
}

export interface MaintenanceSummary {
  /** Subscriptions in the activity index (active, or with a backlog nobody consumes). */
  readonly subscriptions: number;
  /** Of those, the ones due for a visit this run (the others wait for their revisit time). */
  readonly due: number;
  /** Visited subscriptions found settled and taken out of the index. */
  readonly settled: number;
  /** Audit records past their retention deleted (the embedded stack has no DynamoDB TTL). */
  readonly expiredAuditRecords: number;
  /** Subscriptions whose dead-letter queue was inspected (all of them unless the deadline came first). */
  readonly deadLetterQueuesChecked: number;
  /** Tokens in the inspected dead-letter queues, in total. */
  readonly deadLetterMessages: number;
  /** The subscriptions whose dead-letter queue holds tokens, most first. */
  readonly deadLetterQueues: readonly (SubscriptionRef & { readonly messages: number })[];
  /** Subscriptions whose cursor was loaded (and folded where it could be) in this run. */
  readonly visited: number;
  /** Cursors whose mark-delete position moved. */
  readonly foldedCursors: number;
  /** Individually acknowledged entries the moves absorbed into mark-delete positions. */
  readonly foldedEntries: number;
  /**
   * The visited subscription whose oldest due unacknowledged message has waited
   * longest, and for how long (since it was published, or since it fell due
   * for a delayed message). Undefined when no visited subscription has one.
   */
  readonly oldestBacklog?: SubscriptionRef & { readonly ageMs: number };
  /** Topic and subscription deletions under way, and how many of them this run resumed (stale). */
  readonly deletions: { readonly pending: number; readonly resumed: number };
  /** Steps that failed (each also given to `onFailure`). */
  readonly failures: number;
  /**
   * Due subscriptions this run did not start before its deadline: the next run takes them first
   * (from `resumeAfter`). 0 when the run reached every one.
   */
  readonly left: number;
  /** Where the next run's fold starts; undefined when this run visited every subscription. */
  readonly resumeAfter?: string;
  /**
   * The topic partitions of the due subscriptions (each once): where acknowledgements or
   * publishes happened since their last visit, so where retention may have something to delete.
   */
  readonly activePartitions: readonly string[];
}

/**
 * Scheduled maintenance of every subscription of the deployment. Bounded (it
 * starts nothing after `deadlineMs`, and carries on next run from
 * `resumeAfter`), idempotent (a repeated or overlapping run finds less to do,
 * never something to undo), and one partition or subscription that fails does
 * not stop the others.
 *
 * 0. Resume the deletion jobs no step touched for a while (a crash mid-delete, a
 *    scheduler message lost): one step each.
 * 1. List every subscription: topics (a catalog scan), their partitions, the
 *    subscriptions of each partition.
 * 2. Inspect each subscription queue's dead-letter queue: tokens SQS moved
 *    there after maxReceiveCount receives are messages nothing delivers any
 *    more. All subscriptions, every run, before the fold spends the budget.
 * 3. Fold, starting after `resumeAfter`: load the cursor; when the
 *    individually acknowledged entries right after the mark-delete position
 *    form a contiguous run (following the partition's ledgers, across ledger
 *    boundaries and empty ledgers: `Cursor` decides), move the mark-delete
 *    position to its end. Ids at the head of the backlog whose publisher died
 *    before writing them are acknowledged first (see abandonedIds), so they do
 *    not stop the fold for good. The cursor store then turns the ack pages it covers
 *    into tombstones (their acks are dropped), so loads stay small.
 * 4. Measure how late each visited subscription is: its oldest due
 *    unacknowledged message (at most AGE_PROBES entry reads, backlogs only).
 *
 * The fold never loses an acknowledgement and never moves mark-delete over an
 * unacknowledged entry: the cursor is read before the ledger layout (every
 * stored ack names an entry of it, and the layout is a prefix of the log, so
 * an entry before an acked one is in it too); mark-delete only moves to the
 * end of a run with no written entry missing from it; the store's markDelete
 * never moves backwards (a consumer's cumulative ack that got further first
 * wins) and tombstones only pages wholly at or before the new position, so an
 * ack that lands during the fold is either covered by it or kept.
 *
 * Cost per run: the catalog scan and one Query per partition; one queue
 * attribute read per subscription; per visited subscription the cursor load
 * (its head and ack pages), the partition state, when it folds one conditional
 * write plus one per ack page it passes, and up to AGE_PROBES entry reads when it has a backlog.
 */
export async function maintainSubscriptions(
  ports: UseCasePorts,
  options: MaintenanceOptions,
): Promise<MaintenanceSummary> {
  let failures = 0;
  const fail = (failure: MaintenanceFailure) => {
    failures++;
    options.onFailure?.(failure);
  };
  const before = () => ports.clock.nowMs() < options.deadlineMs;

  const deletions = await resumeStaleDeletions(ports, {
    before,
    onFailure: (jobId, error) => fail({ step: 'deletion', target: jobId, error }),
  });
  const expiredAuditRecords = await ports.audit.purgeExpired(ports.clock.nowMs(), before).catch((error) => {
    fail({ step: 'audit', target: 'audit log', error });
    return 0;
  });
  const index = await indexedSubscriptions(ports, before, fail);
  const all = index.due;
  const deadLetters = await inspectDeadLetters(ports, all, before, fail);

  const order = rotate(all, options);
  let visited = 0;
  let foldedCursors = 0;
  let foldedEntries = 0;
  let oldestBacklog: (SubscriptionRef & { ageMs: number }) | undefined;
  // Subscriptions not due for a visit report the age their last visit recorded.
  for (const entry of index.deferred) {
    if (entry.backlogDueSinceMs === undefined) continue;
    const ageMs = ports.clock.nowMs() - entry.backlogDueSinceMs;
    if (ageMs > (oldestBacklog?.ageMs ?? -1)) {
      oldestBacklog = {
        partition: entry.partition,
        subscription: entry.subscription,
        cursorId: entry.cursorId,
        ageMs,
      };
    }
  }
  let settled = 0;
  const released = new Set<string>();
  await forEachUntil(order, before, async (at) => {
    visited++;
    try {
      const ctx = engineOf(ports);
      const cursor = {
        partition: at.partition,
        cursorId: at.subscription.cursorId,
        type: at.subscription.type,
      };
      const folded = await foldStep(ctx, cursor);
      if (folded.markDelete) {
        foldedCursors++;
        foldedEntries += folded.entries;
      }
      await releaseLapsedConsumers(ports, at, released);
      const record = await ports.dispatch.readHead(at.subscription.cursorId);
      if (record?.head.trackerDueAtMs !== undefined && record.head.trackerDueAtMs <= ports.clock.nowMs()) {
        // Due redeliveries nobody took: wake whoever waits (a Lambda consumer's event source too).
        await ports.deliveryQueue.ring(doorbellOf(at.subscription.cursorId), 0);
      }
      const ageMs = record ? await backlogAgeMs(ports, nextInLedger(record.head.markDelete)) : undefined;
      if (ageMs !== undefined && ageMs > STALE_BACKLOG_MS) {
        // A backlog nobody took for a while (a ring lost, an event-driven consumer that stopped
        // short): ring, so a waiting receiver or a Lambda consumer comes for it.
        await ports.deliveryQueue.ring(doorbellOf(at.subscription.cursorId), 0);
      }
      if (ageMs !== undefined && ageMs > (oldestBacklog?.ageMs ?? -1)) {
        oldestBacklog = { ...refOf(at), ageMs };
      }
      if ((await settle(ports, at, record?.head.markDelete, ageMs)) === 'settled') settled++;
    } catch (error) {
      // Deleted between the listing and now: nothing left to maintain.
      if (error instanceof SubscriptionNotFoundError) {
        if (at.entry)
          await ports.activity.remove(at.entry.cursorId, at.entry.markedAtMs).catch(() => undefined);
      } else {
        fail({ step: 'fold', target: targetOf(at), error });
      }
    }
  });

  // Every subscription visited: the next run starts from the first. Otherwise
  // it starts after the last one visited (after the end of the rotation when
  // none was: where this run meant to start).
  const resumeAfter =
    visited < order.length ? (order[visited - 1] ?? order[order.length - 1])?.key : undefined;
  return {
    subscriptions: index.indexed,
    due: all.length,
    settled,
    expiredAuditRecords,
    deadLetterQueuesChecked: deadLetters.checked,
    deadLetterMessages: deadLetters.messages,
    deadLetterQueues: deadLetters.queues,
    visited,
    foldedCursors,
    foldedEntries,
    ...(oldestBacklog === undefined ? {} : { oldestBacklog }),
    deletions,
    failures,
    left: order.length - visited,
    ...(resumeAfter === undefined ? {} : { resumeAfter }),
    activePartitions: [...new Set(all.map((at) => at.partition.toString()))],
  };
}

/**
 * Step 1: the subscriptions of the activity index, those due for a visit in key order. The first
 * run on a deployment older than the index enters every subscription of the catalog once (a
 * scan); later runs read the index only, after entering the subscriptions of the partitions a
 * publish marked as a whole (expandPartitionMarks).
 */
async function indexedSubscriptions(
  ports: UseCasePorts,
  before: () => boolean,
  fail: (failure: MaintenanceFailure) => void,
): Promise<{ due: SubscriptionAt[]; deferred: ActiveSubscription[]; indexed: number }> {
  if (!(await ports.activity.seeded())) {
    let failed = false;
    const all = await listSubscriptions(ports, before, (failure) => {
      failed = true;
      fail(failure);
    });
    const now = ports.clock.nowMs();
    for (const at of all) {
      await ports.activity.mark(
        {
          cursorId: at.subscription.cursorId,
          partition: at.partition.toString(),
          subscription: at.subscription.name,
          type: at.subscription.type,
        },
        now,
      );
    }
    if (!failed && before()) await ports.activity.markSeeded();
  }
  await expandPartitionMarks(ports, {
    before,
    onFailure: (partition, error) => fail({ step: 'listSubscriptions', target: partition, error }),
  });
  const entries = await ports.activity.list();
  const now = ports.clock.nowMs();
  const due: SubscriptionAt[] = [];
  const deferred: ActiveSubscription[] = [];
  for (const entry of entries) {
    if (entry.revisitAtMs !== undefined && entry.revisitAtMs > now) {
      deferred.push(entry);
      continue;
    }
    due.push({
      partition: TopicName.parse(entry.partition),
      subscription: {
        name: entry.subscription,
        type: entry.type,
        cursorId: entry.cursorId,
        createdAtMs: 0,
      },
      key: JSON.stringify([entry.partition, entry.subscription]),
      entry,
    });
  }
  due.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { due, deferred, indexed: entries.length };
}

/**
 * After a visit: a subscription with nothing left for maintenance (every entry acknowledged and
 * folded, no HTTP consumer to watch) leaves the index, and one with only a backlog nobody
 * consumes is visited again after BACKLOG_REVISIT_MS, each once its last mark is MARK_EVERY_MS old
 * (a mark some process left out within that time is then impossible); anything else stays. Each change is
 * conditional on the entry's mark, so activity since the visit keeps it.
 */
async function settle(
  ports: UseCasePorts,
  at: SubscriptionAt,
  markDelete: Position | undefined,
  ageMs: number | undefined,
): Promise<'settled' | 'deferred' | 'kept'> {
  const entry = at.entry;
  if (!entry) return 'kept';
  const now = ports.clock.nowMs();
  if (markDelete === undefined) {
    // No cursor: the subscription was deleted.
    await ports.activity.remove(entry.cursorId, entry.markedAtMs);
    return 'settled';
  }
  const key = subscriptionKey(at.partition.partitionedTopicName.toString(), at.subscription.name);
  // Lambda consumers are durable (no lease to watch); an HTTP consumer's lease is at most an hour.
  const watched = (await ports.consumers.leases(key)).some(
    ({ untilMs }) => untilMs <= now + 2 * MAX_CONSUMER_LEASE_MS,
  );
  if (watched) return 'kept';
  // Marked less than MARK_EVERY_MS ago: a process may have left out a mark since (a consumer
  // that subscribed and acknowledged in the process that marked it), so the entry is neither
  // removed nor deferred until its mark is that old; any activity after that marks it again.
  if (now - entry.markedAtMs < MARK_EVERY_MS) return 'kept';
  const end = lastAllocated(await ports.ledger.state(at.partition));
  if (end === undefined || markDelete.compareTo(end) >= 0) {
    await ports.activity.remove(entry.cursorId, entry.markedAtMs);
    return 'settled';
  }
  await ports.activity.defer(entry.cursorId, entry.markedAtMs, {
    revisitAtMs: now + backlogRevisitMs(ports),
    ...(ageMs === undefined ? {} : { backlogDueSinceMs: now - ageMs }),
  });
  return 'deferred';
}

/**
 * How long a backlog nobody consumes waits for its next visit: BACKLOG_REVISIT_MS, or an eighth of
 * the entry expiry when that is shorter, so the expiry renewal (a quarter of it before the earliest
 * expiry) is never missed.
 */
function backlogRevisitMs(ports: UseCasePorts): number {
  return Math.min(BACKLOG_REVISIT_MS, (ports.settings.entryExpiryMs ?? Number.POSITIVE_INFINITY) / 8);
}

/** The last entry id the partition allocated, if any (its log's end). */
function lastAllocated(state: ManagedLedgerState | undefined): Position | undefined {
  const ledgers = state?.ledgers ?? [];
  for (let i = ledgers.length - 1; i >= 0; i--) {
    const ledger = ledgers[i] as (typeof ledgers)[number];
    if (ledger.entries > 0n) return Position.of(ledger.ledgerId, ledger.entries - 1n);
  }
  return undefined;
}

/** Every subscription of the catalog, in key order (seeding). A partition that cannot be listed is reported and left out. */
async function listSubscriptions(
  ports: UseCasePorts,
  before: () => boolean,
  fail: (failure: MaintenanceFailure) => void,
): Promise<SubscriptionAt[]> {
  const partitions = (await ports.catalog.listAllTopics()).flatMap((record) =>
    record.partitions === 0
      ? [record.topic]
      : Array.from({ length: record.partitions }, (_, index) => record.topic.partition(index)),
  );
  const all: SubscriptionAt[] = [];
  await forEachUntil(partitions, before, async (partition) => {
    try {
      for (const subscription of await ports.catalog.listSubscriptions(partition)) {
        all.push({
          partition,
          subscription,
          key: JSON.stringify([partition.toString(), subscription.name]),
        });
      }
    } catch (error) {
      fail({ step: 'listSubscriptions', target: partition.toString(), error });
    }
  });
  return all.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Step 2: the tokens in each subscription's dead-letter queue. */
async function inspectDeadLetters(
  ports: UseCasePorts,
  all: readonly SubscriptionAt[],
  before: () => boolean,
  fail: (failure: MaintenanceFailure) => void,
): Promise<{ checked: number; messages: number; queues: (SubscriptionRef & { messages: number })[] }> {
  let checked = 0;
  let messages = 0;
  const queues: (SubscriptionRef & { messages: number })[] = [];
  await forEachUntil(all, before, async (at) => {
    try {
      const count = await ports.deliveryQueue.deadLetterCount(doorbellOf(at.subscription.cursorId));
      checked++;
      messages += count;
      if (count > 0) queues.push({ ...refOf(at), messages: count });
    } catch (error) {
      fail({ step: 'deadLetters', target: targetOf(at), error });
    }
  });
  queues.sort((a, b) => b.messages - a.messages);
  return { checked, messages, queues };
}

/**
 * HTTP consumers that made no call for their lease are gone (Pulsar: their connection dropped):
 * what they held comes back (releaseConsumer), and their record and membership go. Once per
 * subscription and run (a partitioned topic lists it once per partition). Lambda consumers are
 * not leased.
 */
async function releaseLapsedConsumers(
  ports: UseCasePorts,
  at: SubscriptionAt,
  done: Set<string>,
): Promise<void> {
  const key = subscriptionKey(at.partition.partitionedTopicName.toString(), at.subscription.name);
  if (done.has(key)) return;
  done.add(key);
  for (const consumerId of await ports.consumers.expired(key, ports.clock.nowMs())) {
    const consumer = await ports.consumers.get(consumerId);
    if (consumer && consumer.kind !== 'lambda') {
      await scheduleSecondPass(ports, consumer);
      await ports.consumers.delete(consumerId);
      await releaseConsumer(ports, consumer, { close: true });
    }
    await ports.consumers.leave(key, consumerId);
  }
}

/**
 * How long the first backlog entry (the one after mark-delete) has waited since it was published,
 * or since its deliverAt for a delayed message; undefined when it is not written or not due.
 * One entry read.
 */
async function backlogAgeMs(ports: UseCasePorts, first: Position): Promise<number | undefined> {
  const entry = await ports.ledger.readEntry(first);
  if (!entry) return undefined;
  const dueAtMs = Math.max(entry.publishTimeMs, entry.deliverAtMs ?? 0);
  const nowMs = ports.clock.nowMs();
  return dueAtMs <= nowMs ? nowMs - dueAtMs : undefined;
}

/** The subscriptions from where the previous run stopped (or from `startAt`), wrapping around. */
function rotate(all: readonly SubscriptionAt[], options: MaintenanceOptions): SubscriptionAt[] {
  let start: number;
  if (options.resumeAfter !== undefined) {
    const after = options.resumeAfter;
    start = all.findIndex((at) => at.key > after);
    if (start < 0) start = 0;
  } else {
    const fraction = options.startAt ?? 0;
    start = fraction > 0 && fraction < 1 ? Math.floor(fraction * all.length) : 0;
  }
  return [...all.slice(start), ...all.slice(0, start)];
}

/**
 * Runs `task` over `items` in order, CONCURRENCY at a time, starting each only
 * while `before()` holds: the items started are always a prefix of `items`,
 * and every one started is awaited.
 */
async function forEachUntil<T>(
  items: readonly T[],
  before: () => boolean,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && before()) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
}

function refOf(at: SubscriptionAt): SubscriptionRef {
  return {
    partition: at.partition.toString(),
    subscription: at.subscription.name,
    cursorId: at.subscription.cursorId,
  };
}

function targetOf(at: SubscriptionAt): string {
  return at.key;
}
