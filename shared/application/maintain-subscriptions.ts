import { SubscriptionNotFoundError } from '../domain/catalog-errors.ts';
import type { Cursor } from '../domain/cursor.ts';
import { LedgerIndex } from '../domain/ledger-layout.ts';
import type { Position } from '../domain/position.ts';
import type { TopicName } from '../domain/topic-name.ts';
import type { StoredEntry } from '../ports/ledger.ts';
import type { SubscriptionRecord } from '../ports/topic-catalog.ts';
import { queueOf } from './delivery.ts';
import { UNWRITTEN_GRACE_MS } from './feed-backlog.ts';
import type { UseCasePorts } from './ports.ts';
import { foldCursor, type LoadedCursor, loadCursor } from './topic-lookup.ts';

/** Storage calls maintenance keeps in flight at once (catalog lists, queue attributes, cursors). */
const CONCURRENCY = 8;
/**
 * Backlog entries read at most to find how late a subscription is: enough to
 * look past a few delayed messages at the head of the backlog, bounded so that
 * an idle subscription costs a few reads per run.
 */
const AGE_PROBES = 4;
/**
 * Ids allocated but never written (their publisher died between the two) are
 * acknowledged once an entry allocated after them was published this long
 * ago: its publisher read the clock before allocating, and no publish runs
 * longer than UNWRITTEN_GRACE_MS, so theirs is over too.
 */
export const ABANDONED_AFTER_MS = 2 * UNWRITTEN_GRACE_MS;
/** Abandoned ids acknowledged at most per subscription and run (the next run goes on). */
const ABANDONED_BATCH = 10_000;

/** One subscription of one topic partition, keyed for a stable order across runs. */
interface SubscriptionAt {
  readonly partition: TopicName;
  readonly subscription: SubscriptionRecord;
  /** `["<partition>","<name>"]`: unique, and the order maintenance walks in. */
  readonly key: string;
}

/** A subscription as maintenance reports it. */
export interface SubscriptionRef {
  readonly partition: string;
  readonly subscription: string;
  readonly cursorId: string;
}

/** A step that failed for one topic partition or subscription; the run went on without it. */
export interface MaintenanceFailure {
  readonly step: 'listSubscriptions' | 'deadLetters' | 'fold';
  /** The partition (listSubscriptions) or `partition|subscription`. */
  readonly target: string;
  readonly error: unknown;
}

export interface MaintenanceOptions {
  /**
   * Epoch ms after which no further partition or subscription is started (the
   * ones started finish). Whatever is left waits for the next run.
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
  /** Subscriptions in the catalog (of the partitions whose subscriptions could be listed). */
  readonly subscriptions: number;
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
  /** Steps that failed (each also given to `onFailure`). */
  readonly failures: number;
  /** Where the next run's fold starts; undefined when this run visited every subscription. */
  readonly resumeAfter?: string;
}

/**
 * Scheduled maintenance of every subscription of the deployment. Bounded (it
 * starts nothing after `deadlineMs`, and carries on next run from
 * `resumeAfter`), idempotent (a repeated or overlapping run finds less to do,
 * never something to undo), and one partition or subscription that fails does
 * not stop the others.
 *
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

  const all = await listSubscriptions(ports, before, fail);
  const deadLetters = await inspectDeadLetters(ports, all, before, fail);

  const order = rotate(all, options);
  let visited = 0;
  let foldedCursors = 0;
  let foldedEntries = 0;
  let oldestBacklog: (SubscriptionRef & { ageMs: number }) | undefined;
  await forEachUntil(order, before, async (at) => {
    visited++;
    try {
      const loaded = await loadCursor(ports, at.partition, at.subscription);
      // One read per backlog entry for this subscription's steps (both look at its first entry).
      const readEntry = entryReader(ports);
      const abandoned = await abandonedIds(ports, loaded, readEntry);
      if (abandoned.length > 0) {
        await ports.cursors.acknowledge(at.subscription.cursorId, abandoned);
        for (const position of abandoned) loaded.cursor.acknowledge(position);
        ports.counters?.add('abandonedIdsAcknowledged', abandoned.length);
      }
      const entries = foldedBy(loaded);
      if (entries > 0) {
        await foldCursor(ports, at.subscription, loaded);
        foldedCursors++;
        foldedEntries += entries;
      }
      const ageMs = await backlogAgeMs(ports, loaded.cursor, readEntry);
      if (ageMs !== undefined && ageMs > (oldestBacklog?.ageMs ?? -1)) {
        oldestBacklog = { ...refOf(at), ageMs };
      }
    } catch (error) {
      // Deleted between the listing and now: nothing left to maintain.
      if (!(error instanceof SubscriptionNotFoundError)) fail({ step: 'fold', target: targetOf(at), error });
    }
  });

  // Every subscription visited: the next run starts from the first. Otherwise
  // it starts after the last one visited (after the end of the rotation when
  // none was: where this run meant to start).
  const resumeAfter =
    visited < order.length ? (order[visited - 1] ?? order[order.length - 1])?.key : undefined;
  return {
    subscriptions: all.length,
    deadLetterQueuesChecked: deadLetters.checked,
    deadLetterMessages: deadLetters.messages,
    deadLetterQueues: deadLetters.queues,
    visited,
    foldedCursors,
    foldedEntries,
    ...(oldestBacklog === undefined ? {} : { oldestBacklog }),
    failures,
    ...(resumeAfter === undefined ? {} : { resumeAfter }),
  };
}

/** Step 1: every subscription, in key order. A partition that cannot be listed is reported and left out. */
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
      const count = await ports.deliveryQueue.deadLetterCount(queueOf(at.subscription));
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
 * How many entries the cursor's advancement over its acknowledged ranges
 * absorbed: the written entries after the stored mark-delete position up to
 * the advanced one, counted along the partition's ledgers.
 */
function foldedBy(loaded: LoadedCursor): number {
  const ledgers = new LedgerIndex(loaded.state.ledgers);
  return Number(ledgers.ordinal(loaded.cursor.markDeletePosition) - ledgers.ordinal(loaded.storedMarkDelete));
}

/**
 * The ids at the head of the backlog that were allocated but will never be
 * written: a publisher died between allocating and writing them. They are
 * no message, but the fold cannot pass them and the backlog counts them. Read
 * only when the first backlog entry is missing (one entry read otherwise):
 * then the first entry written after it (keys only, in its ledger or the
 * next ones of the layout). The backlog ids before that entry are abandoned
 * once it was published ABANDONED_AFTER_MS ago or longer (ids are allocated
 * in log order, so theirs came first); at most ABANDONED_BATCH per run.
 */
async function abandonedIds(
  ports: UseCasePorts,
  loaded: LoadedCursor,
  readEntry: EntryReader,
): Promise<Position[]> {
  const { cursor } = loaded;
  const [first] = cursor.firstBacklogPositions(1);
  if (!first || (await readEntry(first))) return [];
  let next: { position: Position; publishTimeMs: number } | undefined;
  for (const ledger of loaded.state.ledgers) {
    if (ledger.ledgerId < first.ledgerId) continue;
    next = await ports.ledger.firstWrittenAfter(
      ledger.ledgerId,
      ledger.ledgerId === first.ledgerId ? first.entryId : -1n,
    );
    if (next) break;
  }
  if (!next || next.publishTimeMs > ports.clock.nowMs() - ABANDONED_AFTER_MS) return [];
  const before = (next as { position: Position }).position;
  return cursor.firstBacklogPositions(ABANDONED_BATCH).filter((position) => position.compareTo(before) < 0);
}

/**
 * How long the oldest due unacknowledged message among the first AGE_PROBES
 * of the backlog has waited: since its publish time, or since its deliverAt
 * for a delayed message that fell due. Messages not yet due are not late, and
 * entries allocated but never written (a publisher that died) deliver nothing.
 * The walk stops at the first due message without a delay: messages after it
 * were published no earlier, so none of them has waited longer.
 */
async function backlogAgeMs(
  ports: UseCasePorts,
  cursor: Cursor,
  readEntry: EntryReader,
): Promise<number | undefined> {
  const nowMs = ports.clock.nowMs();
  let oldest: number | undefined;
  for (const position of cursor.firstBacklogPositions(AGE_PROBES)) {
    const entry = await readEntry(position);
    if (entry === undefined) continue;
    const delayed = entry.deliverAtMs !== undefined && entry.deliverAtMs > entry.publishTimeMs;
    const dueAtMs = delayed ? (entry.deliverAtMs as number) : entry.publishTimeMs;
    if (dueAtMs <= nowMs) oldest = Math.max(oldest ?? 0, nowMs - dueAtMs);
    if (!delayed) break;
  }
  return oldest;
}

type EntryReader = (position: Position) => Promise<StoredEntry | undefined>;

/** Ledger.readEntry, each position read once for the steps of one subscription. */
function entryReader(ports: UseCasePorts): EntryReader {
  const read = new Map<string, Promise<StoredEntry | undefined>>();
  return (position) => {
    const key = position.toString();
    let entry = read.get(key);
    if (!entry) {
      entry = ports.ledger.readEntry(position);
      read.set(key, entry);
    }
    return entry;
  };
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
  return `${at.partition.toString()}|${at.subscription.name}`;
}
