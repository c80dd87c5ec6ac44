import {
  type DeliveryToken,
  type InlineMessage,
  MAX_INLINE_BYTES,
  withoutInlineMessage,
} from '../domain/delivery-token.ts';
import { LedgerIndex } from '../domain/ledger-layout.ts';
import { Position } from '../domain/position.ts';
import { isCumulativeAckType, type SubscriptionType } from '../domain/subscription-type.ts';
import type { TopicName } from '../domain/topic-name.ts';
import type { SubscriptionQueue } from '../ports/delivery-queue.ts';
import type { StoredEntry } from '../ports/ledger.ts';
import type { SubscriptionRecord } from '../ports/topic-catalog.ts';
import type { UseCasePorts } from './ports.ts';
import { subscriptionsAt } from './process-memo.ts';
import { loadCursor } from './topic-lookup.ts';

/** The queue of a subscription on one partition: FIFO for the types that keep order. */
export function queueOf(subscription: Pick<SubscriptionRecord, 'cursorId' | 'type'>): SubscriptionQueue {
  return { cursorId: subscription.cursorId, ordered: isCumulativeAckType(subscription.type) };
}

/** A token for `entry`, carrying the message itself when it is small enough. */
export function tokenFor(partition: TopicName, entry: StoredEntry, redeliveryCount: number): DeliveryToken {
  const size =
    Buffer.byteLength(entry.payload) +
    Buffer.byteLength(entry.key ?? '') +
    Object.entries(entry.properties).reduce(
      (sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(v),
      0,
    );
  const token = {
    topic: partition.toString(),
    ledgerId: entry.position.ledgerId.toString(),
    entryId: entry.position.entryId.toString(),
    redeliveryCount,
  };
  const message: { -readonly [K in keyof InlineMessage]: InlineMessage[K] } = {
    payload: entry.payload,
    publishTimeMs: entry.publishTimeMs,
  };
  if (entry.key !== undefined) message.key = entry.key;
  if (Object.keys(entry.properties).length > 0) message.properties = entry.properties;
  if (entry.eventTimeMs !== undefined) message.eventTimeMs = entry.eventTimeMs;
  if (entry.deliverAtMs !== undefined) message.deliverAtMs = entry.deliverAtMs;
  // Too large to ride along: by reference, keeping the key and deliverAt that routing needs.
  return size > MAX_INLINE_BYTES ? withoutInlineMessage({ ...token, message }) : { ...token, message };
}

export function positionOf(token: Pick<DeliveryToken, 'ledgerId' | 'entryId'>): Position {
  return Position.of(token.ledgerId, token.entryId);
}

/**
 * Puts tokens on a subscription queue, each visible at its due time: at once,
 * after an SQS delay (up to the queue's maximum), or through the scheduler for
 * longer waits and for ordered queues, which take no per-message delay.
 * Delays round up to whole seconds: never early.
 */
export async function enqueue(
  ports: UseCasePorts,
  queue: SubscriptionQueue,
  items: readonly { token: DeliveryToken; dueAtMs: number }[],
): Promise<void> {
  const now = ports.clock.nowMs();
  const direct: { token: DeliveryToken; delaySeconds: number }[] = [];
  const later: { token: DeliveryToken; dueAtMs: number }[] = [];
  for (const item of items) {
    const delaySeconds = Math.max(0, Math.ceil((item.dueAtMs - now) / 1000));
    if (delaySeconds === 0 || (!queue.ordered && delaySeconds <= ports.deliveryQueue.maxDelaySeconds)) {
      direct.push({ token: item.token, delaySeconds });
    } else {
      later.push(item);
    }
  }
  await ports.deliveryQueue.send(queue, direct);
  if (later.length > 0) {
    await ports.scheduler.schedule(
      later.map((item) => ({ kind: 'deliver', queue, token: item.token, dueAtMs: item.dueAtMs })),
    );
  }
}

/**
 * When a message is first due on a subscription: delayed delivery (deliverAt)
 * applies to Shared and Key_Shared only; Exclusive and Failover deliver at once,
 * as in Pulsar.
 */
export function firstDueAtMs(type: SubscriptionType, entry: { deliverAtMs?: number }, nowMs: number): number {
  if (isCumulativeAckType(type) || entry.deliverAtMs === undefined) return nowMs;
  return Math.max(nowMs, entry.deliverAtMs);
}

/**
 * Publishing's second half: one token per subscription the entries are owed
 * to, those announced at or before `subscriptionsVersion` (read with the ids:
 * see Appended). The list is read only when that version is new to this
 * process (subscriptionsAt); a subscription announced after the allocation
 * feeds these entries itself.
 */
export async function fanOut(
  ports: UseCasePorts,
  partition: TopicName,
  entries: readonly StoredEntry[],
  subscriptionsVersion: string,
): Promise<void> {
  if (entries.length === 0) return;
  const subscriptions = await subscriptionsAt(ports, partition, subscriptionsVersion);
  const now = ports.clock.nowMs();
  await Promise.all(
    subscriptions.map((subscription) =>
      enqueue(
        ports,
        queueOf(subscription),
        entries.map((entry) => ({
          token: tokenFor(partition, entry, 0),
          dueAtMs: firstDueAtMs(subscription.type, entry, now),
        })),
      ),
    ),
  );
}

/** Positions whose entry ids are at most this far apart in one ledger are read by one range read. */
const MAX_READ_GAP = 16n;
/** Positions per cursor check, range read and enqueue. */
const BACKFILL_SLICE = 100;

export interface BackfillOptions {
  /** Only entries strictly after it (default: the mark-delete position). */
  readonly after?: Position;
  /**
   * The last entry owed, included (default: the last entry of the ledgers as
   * read now: queue rebuilds, rewinds).
   */
  readonly until?: Position;
  /** At most this many backlog entries are read and enqueued (>= 1). */
  readonly limit: number;
  /**
   * Entries allocated but not written are acknowledged: only when no publish
   * can be in flight (recovery at start). Without it (and without
   * awaitUnwrittenUntilMs) they are skipped, for their publisher to send.
   */
  readonly acknowledgeUnwritten?: boolean;
  /**
   * Bounded time: no new slice of 100 entries starts once the clock is past
   * it (epoch ms); `next` is then the last position covered.
   */
  readonly deadlineMs?: number;
  /**
   * Entries allocated but not written yet are waited for until this time
   * (epoch ms): the call stops before the first one (`waiting`), to be called
   * again a moment later; from this time on they are acknowledged as never
   * written. For a new subscription's backlog (`until` read by its
   * announcement): the publishers of those entries read an older subscriptions
   * version, so they do not send this subscription their tokens. Without it,
   * such entries are skipped: their publisher sends the tokens.
   */
  readonly awaitUnwrittenUntilMs?: number;
}

export interface BackfillResult {
  /** Tokens enqueued. */
  readonly enqueued: number;
  /** The last position this call covered, when backlog up to `until` remains after it. */
  readonly next?: Position;
  /** The last entry owed (the option, or the last entry read now); undefined when there is none. */
  readonly until?: Position;
  /** Stopped before an entry still being written (awaitUnwrittenUntilMs): call again shortly, after `next`. */
  readonly waiting?: boolean;
}

/**
 * Puts a token on the subscription's queue for the unacknowledged entries
 * after `after` (and after the mark-delete position) up to `until`, at most
 * `limit` of them, in log order: a new subscription at Earliest gets the
 * existing backlog, and a queue lost with the embedded stack's in-memory SQS
 * is rebuilt from the cursor. Larger backlogs are fed on in bounded steps (see
 * feed-backlog.ts). Redelivery counts restart from what the cursor recorded.
 *
 * Why `until`: an entry allocated after the subscription's announcement gets
 * its token from publish's fan-out (its allocation read the new subscriptions
 * version); a token from here too would deliver it twice. A new subscription
 * passes the last entry allocated before its announcement. Only an entry whose
 * publisher allocated it before the announcement but listed the subscriptions
 * after the record existed (a cold list, in a window of one chunk write) gets
 * both.
 *
 * Cost: the cursor load, then per 100 positions one delivery-state read, one
 * range read per run of nearby entries of one ledger, and one batch send per
 * 10 tokens.
 */
export async function backfill(
  ports: UseCasePorts,
  partition: TopicName,
  subscription: SubscriptionRecord,
  options: BackfillOptions,
): Promise<BackfillResult> {
  if (!Number.isSafeInteger(options.limit) || options.limit < 1) {
    throw new RangeError(`backfill limit ${options.limit} is not a positive integer`);
  }
  // The layout must be read from storage now, never from a memo: an entry missing from a stale
  // layout may be one whose publisher listed the subscriptions before the record existed, and then
  // nothing would ever enqueue it.
  const { cursor, state } = await loadCursor(ports, partition, subscription);
  const until = options.until ?? new LedgerIndex(state.ledgers).lastEntry();
  if (until === undefined) return { enqueued: 0 };
  const candidates = cursor
    .backlogPositionsAfter(options.after ?? cursor.markDeletePosition, options.limit + 1)
    .filter((position) => position.compareTo(until) <= 0);
  const positions = candidates.slice(0, options.limit);
  const now = ports.clock.nowMs();
  const awaiting = options.awaitUnwrittenUntilMs !== undefined && now < options.awaitUnwrittenUntilMs;
  // After a crash (acknowledgeUnwritten), or once a new subscription has waited long enough, no one
  // will write an entry still missing: it was never a message.
  const acknowledgeUnwritten =
    options.acknowledgeUnwritten === true || (options.awaitUnwrittenUntilMs !== undefined && !awaiting);
  let enqueued = 0;
  let covered = 0;
  let waiting = false;
  for (let i = 0; i < positions.length && !waiting; i += BACKFILL_SLICE) {
    if (i > 0 && options.deadlineMs !== undefined && ports.clock.nowMs() >= options.deadlineMs) break;
    const slice = positions.slice(i, i + BACKFILL_SLICE);
    const [states, entries] = await Promise.all([
      ports.cursors.deliveryState(subscription.cursorId, slice),
      readBacklogEntries(ports, slice),
    ]);
    const items: { token: DeliveryToken; dueAtMs: number }[] = [];
    const unwritten: Position[] = [];
    let done = slice.length;
    for (const [index, entry] of entries.entries()) {
      if (!entry) {
        // Allocated but not written: its publisher is still writing (or died).
        if (awaiting) {
          done = index;
          waiting = true;
          break;
        }
        unwritten.push(slice[index] as Position);
        continue;
      }
      items.push({
        token: tokenFor(partition, entry, states[index]?.redeliveryCount ?? 0),
        dueAtMs: firstDueAtMs(subscription.type, entry, now),
      });
    }
    await enqueue(ports, queueOf(subscription), items);
    if (acknowledgeUnwritten && unwritten.length > 0) {
      await ports.cursors.acknowledge(subscription.cursorId, unwritten);
    }
    enqueued += items.length;
    covered = i + done;
  }
  const start = options.after ?? cursor.markDeletePosition;
  const last = covered > 0 ? (positions[covered - 1] as Position) : start;
  if (waiting) return { enqueued, next: last, until, waiting };
  const more = candidates.length > covered;
  return more ? { enqueued, next: last, until } : { enqueued, until };
}

/**
 * The entries at `positions` (undefined where none was written), read as
 * ranges: positions of one ledger at most MAX_READ_GAP apart share one range
 * read, so a run of the backlog costs one read, not one per entry. In order.
 */
export async function readBacklogEntries(
  ports: UseCasePorts,
  positions: readonly Position[],
): Promise<(StoredEntry | undefined)[]> {
  const runs: { ledgerId: bigint; first: bigint; last: bigint }[] = [];
  for (const position of positions) {
    const run = runs[runs.length - 1];
    if (run && run.ledgerId === position.ledgerId && position.entryId - run.last <= MAX_READ_GAP) {
      run.last = position.entryId;
    } else {
      runs.push({ ledgerId: position.ledgerId, first: position.entryId, last: position.entryId });
    }
  }
  const read = await Promise.all(
    runs.map((run) => ports.ledger.readEntries(run.ledgerId, run.first, run.last)),
  );
  const byPosition = new Map(read.flat().map((entry) => [entry.position.toString(), entry]));
  return positions.map((position) => byPosition.get(position.toString()));
}
