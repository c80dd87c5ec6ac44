import type { ReleaseCause } from '../../domain/delivery-run.ts';
import type { Position } from '../../domain/position.ts';
import {
  compareScheduled,
  decodePageToken,
  encodePageToken,
  histogram,
  minBound,
  NO_END_MS,
  pageTokenScope,
  type ScheduledBucket,
  type ScheduledCursor,
} from '../../domain/scheduled-order.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import { engineOf } from '../engine/engine-ports.ts';
import {
  type WaitingBound,
  type WaitingEntry,
  type WaitingRead,
  waitingOnCursor,
} from '../engine/scheduled-view.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { requireSubscription, resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/** Why an entry waits. */
export type ScheduledReason =
  /** Its message's deliverAt (whether or not the dispatcher reached it). */
  | 'delayed'
  /** A negative acknowledgement's backoff. */
  | 'nack'
  /** Held by a consumer that has not acknowledged it: its ack timeout. */
  | 'ackTimeout'
  /** Its consumer went (closed, lease lapsed, redeliverUnacknowledged): due again at once. */
  | 'consumerGone'
  /** An operator moved its due time (topics reschedule). */
  | 'rescheduled'
  /** Key_Shared: routed to another member, due when that member may take it. */
  | 'routed';

/** One entry of a scheduled view, as the admin API answers it. */
export interface ScheduledMessage {
  /** `ledgerId:entryId:partitionIndex`, as the data API gives MessageIds. */
  readonly messageId: string;
  /** Epoch ms. */
  readonly dueAt: number;
  readonly reason: ScheduledReason;
  /** The redeliveryCount its next delivery carries. */
  readonly redeliveryCount: number;
  /**
   * The consumer it last went to: its holder (ackTimeout), or the consumer that nacked it or went
   * (nack, consumerGone, rescheduled); null when it was never handed out.
   */
  readonly consumer: string | null;
  /** Payload bytes. */
  readonly size: number;
}

export interface ScheduledPage {
  readonly messages: ScheduledMessage[];
  /** Present when more may follow: pass it as pageToken. */
  readonly nextPageToken?: string;
}

export interface ScheduledHistogram {
  readonly bucketSeconds: number;
  /** Buckets with at least one entry, by start time (epoch ms). */
  readonly buckets: ScheduledBucket[];
  /** Entries counted. */
  readonly total: number;
  /** Present when more may follow: pass it as pageToken to count on. */
  readonly nextPageToken?: string;
}

export interface ScheduledRequest {
  readonly principal: Principal | undefined;
  readonly topic: TopicName;
  readonly subscription: string;
  /** Epoch ms; default 0: everything waiting, overdue redeliveries first. */
  readonly fromMs?: number;
  /** Epoch ms, included; default: no end. */
  readonly untilMs?: number;
  readonly limit: number;
  readonly pageToken?: string;
}

/**
 * What waits on a subscription (every partition of a partitioned topic), in due-time order.
 *
 * 1. The caller needs `consume` or `acknowledge_message` on the topic (403); the subscription must
 *    exist on every partition addressed (404).
 * 2. Each partition's cursor answers its waiting entries from the page's start (engine/scheduled-view).
 * 3. The partitions' answers merge in due order, up to `limit`, never past what a partition did
 *    not look at; each entry's message is read for its size and, for a first delivery, whether
 *    its deliverAt or a Key_Shared routing holds it.
 * Cost: per partition, what waitingOnCursor states, and one entry read per message listed (chunks
 * cached): in proportion to the page, whatever the number of entries waiting.
 */
export async function listScheduled(ports: UseCasePorts, request: ScheduledRequest): Promise<ScheduledPage> {
  const { entries, next } = await collectWaiting(ports, request);
  const messages: ScheduledMessage[] = [];
  const found = await readListed(
    ports,
    entries.map(({ entry }) => entry.position),
  );
  for (const { entry, partitionIndex } of entries) {
    const stored = found.get(entry.position.toString());
    // An id allocated and never written (its publisher died), or trimmed: no message.
    if (!stored) continue;
    messages.push(scheduledMessage(entry, partitionIndex, stored));
  }
  return { messages, ...(next ? { nextPageToken: encodePageToken(next, scopeOf(request)) } : {}) };
}

/** The same entries counted per bucket of `bucketSeconds` (no message is read). */
export async function scheduledHistogram(
  ports: UseCasePorts,
  request: ScheduledRequest & { readonly bucketSeconds: number },
): Promise<ScheduledHistogram> {
  const { entries, next } = await collectWaiting(ports, request);
  return {
    bucketSeconds: request.bucketSeconds,
    buckets: histogram(
      entries.map(({ entry }) => entry.dueAtMs),
      request.bucketSeconds * 1000,
    ),
    total: entries.length,
    ...(next ? { nextPageToken: encodePageToken(next, scopeOf(request)) } : {}),
  };
}

/** A scheduled page token goes on only on its topic and subscription. */
function scopeOf(request: ScheduledRequest): string {
  return pageTokenScope('scheduled', request.topic.partitionedTopicName.toString(), request.subscription);
}

interface Located {
  readonly entry: WaitingEntry;
  readonly partitionIndex: number;
}

async function collectWaiting(
  ports: UseCasePorts,
  request: ScheduledRequest,
): Promise<{ entries: Located[]; next?: ScheduledCursor }> {
  await requireAction(ports.permissions, request.principal, request.topic, [
    'consume',
    'acknowledge_message',
  ]);
  const resolved = await resolveTopic(ports, request.topic);
  const subscriptions = await Promise.all(
    resolved.partitions.map(async (partition) => ({
      partition,
      record: await requireSubscription(ports, partition, request.subscription),
    })),
  );
  const cursor = request.pageToken ? decodePageToken(request.pageToken, scopeOf(request)) : undefined;
  const read: WaitingRead = {
    from: cursor?.from ?? { dueAtMs: request.fromMs ?? 0, ledgerId: 0n, entryId: 0n },
    ...(cursor ? { after: cursor.after } : {}),
    untilMs: request.untilMs ?? NO_END_MS,
    limit: request.limit,
  };
  const ctx = engineOf(ports);
  const now = ports.clock.nowMs();
  let bound: WaitingBound | undefined;
  const all: Located[] = [];
  for (const { partition, record } of subscriptions) {
    const slices = await waitingOnCursor(
      ctx,
      { partition, cursorId: record.cursorId, type: record.type },
      { read, ...(ports.delayedIndex ? { delayedIndex: ports.delayedIndex } : {}), nowMs: now },
    );
    for (const slice of slices) {
      bound = minBound(bound, slice.lookedUpTo);
      all.push(...slice.entries.map((entry) => ({ entry, partitionIndex: partition.partitionIndex })));
    }
  }
  const entries = all
    .filter(({ entry }) => !bound || compareScheduled(entry, bound) <= 0)
    .sort((a, b) => compareScheduled(a.entry, b.entry))
    .slice(0, request.limit);
  // A full page goes on after its last entry; a short one after the bound (everything before it listed).
  const end: WaitingBound | undefined =
    entries.length >= request.limit ? entries[entries.length - 1]?.entry : bound;
  if (!end) return { entries };
  return { entries, next: { from: { ...end, entryId: end.itemStart }, after: end } };
}

/** Entries further apart than this in a ledger are read by separate range reads. */
const READ_GAP_ENTRIES = 1_000n;

/**
 * The stored entries at `positions`: one range read per cluster of a ledger's positions (a gap of
 * at most READ_GAP_ENTRIES), so a page of entries published together costs one or a few reads
 * and a page of scattered ones at most one per entry, never more.
 */
async function readListed(
  ports: UseCasePorts,
  positions: readonly Position[],
): Promise<Map<string, StoredEntry>> {
  const sorted = [...positions].sort((a, b) => a.compareTo(b));
  const clusters: Position[][] = [];
  for (const position of sorted) {
    const cluster = clusters[clusters.length - 1];
    const last = cluster?.[cluster.length - 1];
    if (
      cluster &&
      last &&
      last.ledgerId === position.ledgerId &&
      position.entryId - last.entryId <= READ_GAP_ENTRIES
    ) {
      cluster.push(position);
    } else {
      clusters.push([position]);
    }
  }
  const found = new Map<string, StoredEntry>();
  for (const cluster of clusters) {
    const first = cluster[0] as Position;
    const last = cluster[cluster.length - 1] as Position;
    for (const entry of await ports.ledger.readEntries(first.ledgerId, first.entryId, last.entryId)) {
      found.set(entry.position.toString(), entry);
    }
  }
  return found;
}

function scheduledMessage(
  entry: WaitingEntry,
  partitionIndex: number,
  stored: StoredEntry,
): ScheduledMessage {
  return {
    messageId: messageIdOf(entry.position, partitionIndex),
    dueAt: entry.dueAtMs,
    reason: reasonOf(entry, stored),
    redeliveryCount: entry.deliveries,
    consumer: lastConsumerOf(entry),
    size: Buffer.byteLength(stored.payload),
  };
}

function lastConsumerOf(entry: WaitingEntry): string | null {
  const { state } = entry;
  if (state.kind === 'held') return state.consumerId;
  return state.kind === 'released' ? (state.lastConsumerId ?? null) : null;
}

function reasonOf(entry: WaitingEntry, stored: StoredEntry): ScheduledReason {
  const { state } = entry;
  if (state.kind === 'undispatched') return state.rescheduled ? 'rescheduled' : 'delayed';
  if (state.kind === 'held') return 'ackTimeout';
  return releasedReason({ ...entry, ...(state.cause ? { cause: state.cause } : {}) }, stored.deliverAtMs);
}

/** Why a released entry waits, from its run: its cause, its count, its due time and deliverAt. */
export function releasedReason(
  run: { readonly cause?: ReleaseCause; readonly deliveries: number; readonly dueAtMs: number },
  deliverAtMs: number | undefined,
): ScheduledReason {
  if (run.cause === 'gone') return 'consumerGone';
  if (run.cause === 'rescheduled') return 'rescheduled';
  if (run.deliveries > 0) return 'nack';
  return deliverAtMs === run.dueAtMs ? 'delayed' : 'routed';
}

export function messageIdOf(position: Position, partitionIndex: number): string {
  return `${position.toString()}:${partitionIndex}`;
}
