import type { Position } from '../domain/position.ts';
import type { TopicName } from '../domain/topic-name.ts';
import type { ConsumerRecord } from '../ports/consumer-registry.ts';
import type { ManagedLedgerState } from '../ports/ledger.ts';
import type { SubscriptionRecord, TopicRecord } from '../ports/topic-catalog.ts';
import type { UseCasePorts } from './use-case-ports.ts';

/**
 * How long this process trusts a consumer or topic record it read: a consumer
 * closed, or a topic deleted or repartitioned, through another process (Lambda
 * container) is noticed here within this long. The process that made the
 * change forgets its copy at once. Pulsar clients cache topic metadata in the
 * same way (and for longer: partitions are re-read every 60 s).
 */
export const RECORD_TTL_MS = 5_000;
/** Entries kept per map; the oldest go first. */
const MAX_ENTRIES = 10_000;

/**
 * What one process (a Lambda container, the embedded stack) remembers between
 * calls, per composition root. Only what cannot make a call wrong: records
 * that change rarely, for a few seconds; ledger states, which only grow, so a
 * remembered one is a lower bound of what is written; and which partition a
 * ledger belongs to, which never changes.
 */
interface Memo {
  readonly consumers: Map<string, { record: ConsumerRecord; untilMs: number }>;
  readonly topics: Map<string, { record: TopicRecord; untilMs: number }>;
  readonly ledgerStates: Map<string, ManagedLedgerState>;
  readonly ledgerOwners: Map<string, TopicName>;
  /** Each partition's subscriptions as listed for one subscriptions version. */
  readonly subscriptions: Map<
    string,
    { version: string; records: readonly SubscriptionRecord[]; untilMs: number }
  >;
  /** When this process last renewed each consumer's ownership lease or Key_Shared membership. */
  readonly renewals: Map<string, number>;
  /** Cursors whose last dispatch here found nothing more, until when that is trusted (ms). */
  readonly caughtUp: Map<string, number>;
  /** When this process last marked each cursor's subscription in the activity index. */
  readonly activityMarks: Map<string, number>;
  /** Each cursor's unacknowledged entries per consumer, as counted at `atMs` (see consumerRoom). */
  readonly unacked: Map<string, { counts: Map<string, number>; atMs: number }>;
}

const memos = new WeakMap<UseCasePorts, Memo>();

function memoOf(ports: UseCasePorts): Memo {
  let memo = memos.get(ports);
  if (!memo) {
    memo = {
      consumers: new Map(),
      topics: new Map(),
      ledgerStates: new Map(),
      ledgerOwners: new Map(),
      subscriptions: new Map(),
      renewals: new Map(),
      caughtUp: new Map(),
      activityMarks: new Map(),
      unacked: new Map(),
    };
    memos.set(ports, memo);
  }
  return memo;
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as string);
}

/** What `map` holds for `key` if read within RECORD_TTL_MS, else `read()`, remembered when found. */
async function readThrough<R>(
  ports: UseCasePorts,
  map: Map<string, { record: R; untilMs: number }>,
  key: string,
  read: () => Promise<R | undefined>,
): Promise<R | undefined> {
  const now = ports.clock.nowMs();
  const known = map.get(key);
  if (known && known.untilMs > now) return known.record;
  const record = await read();
  if (record) remember(map, key, { record, untilMs: now + RECORD_TTL_MS });
  else map.delete(key);
  return record;
}

/** The consumer's record, read at most once per RECORD_TTL_MS by this process. */
export function consumerRecord(ports: UseCasePorts, consumerId: string): Promise<ConsumerRecord | undefined> {
  return readThrough(ports, memoOf(ports).consumers, consumerId, () => ports.consumers.get(consumerId));
}

/**
 * This process forgets the consumer: its record and when it last renewed its lease or membership
 * (`recordOnly`: its record only, so that it is read again, as a receive does after each wait).
 */
export function forgetConsumer(
  ports: UseCasePorts,
  consumerId: string,
  options: { readonly recordOnly?: boolean } = {},
): void {
  const memo = memoOf(ports);
  memo.consumers.delete(consumerId);
  if (!options.recordOnly) memo.renewals.delete(consumerId);
}

/** The topic's record, read at most once per RECORD_TTL_MS by this process. */
export function topicRecord(ports: UseCasePorts, topic: TopicName): Promise<TopicRecord | undefined> {
  return readThrough(ports, memoOf(ports).topics, topic.toString(), () => ports.catalog.getTopic(topic));
}

export function forgetTopic(ports: UseCasePorts, topic: TopicName): void {
  memoOf(ports).topics.delete(topic.toString());
}

/** How old a remembered ledger state an idle dispatcher may use (see recentLedgerState). */
export const LEDGER_STATE_TTL_MS = 1_000;
const stateReadAt = new WeakMap<ManagedLedgerState, number>();

/**
 * The partition's ledger state, read again only when the remembered one is older than
 * LEDGER_STATE_TTL_MS. For the dispatcher's idle path (nothing visible at the read position: is
 * it caught up, or does a new ledger follow?): a stale answer only delays that decision by the
 * TTL, since entries are read from the ledger itself whatever the state says.
 */
export async function recentLedgerState(
  ports: UseCasePorts,
  partition: TopicName,
): Promise<ManagedLedgerState | undefined> {
  const { ledgerStates } = memoOf(ports);
  const key = partition.toString();
  const known = ledgerStates.get(key);
  if (known && ports.clock.nowMs() - (stateReadAt.get(known) ?? 0) < LEDGER_STATE_TTL_MS) return known;
  const state = await ports.ledger.state(partition);
  if (!state) {
    ledgerStates.delete(key);
    return undefined;
  }
  stateReadAt.set(state, ports.clock.nowMs());
  remember(ledgerStates, key, state);
  return state;
}

/**
 * The first position that names no entry of the partition's ledgers (none:
 * undefined). Answered from the remembered ledger state when it already holds
 * them all (ledgers only grow), else from a fresh read, which is remembered.
 */
export async function firstUnwritten(
  ports: UseCasePorts,
  partition: TopicName,
  positions: readonly Position[],
): Promise<Position | undefined> {
  const { ledgerStates } = memoOf(ports);
  const key = partition.toString();
  const known = ledgerStates.get(key);
  if (known && firstMissing(known, positions) === undefined) return undefined;
  const state = await ports.ledger.state(partition);
  if (!state) {
    ledgerStates.delete(key);
    return positions[0];
  }
  remember(ledgerStates, key, state);
  return firstMissing(state, positions);
}

function firstMissing(state: ManagedLedgerState, positions: readonly Position[]): Position | undefined {
  return positions.find((position) => {
    const ledger = state.ledgers.find((info) => info.ledgerId === position.ledgerId);
    return ledger === undefined || position.entryId >= ledger.entries;
  });
}

/** The partition a ledger belongs to (a ledger never changes hands), read once by this process. */
export async function ledgerOwner(ports: UseCasePorts, ledgerId: bigint): Promise<TopicName | undefined> {
  const { ledgerOwners } = memoOf(ports);
  const key = ledgerId.toString();
  const known = ledgerOwners.get(key);
  if (known) return known;
  const owner = await ports.ledger.ownerOf(ledgerId);
  if (owner) remember(ledgerOwners, key, owner);
  return owner;
}

/** When this process last renewed each consumer's lease or membership (consumer id -> ms). */
export function renewals(ports: UseCasePorts): Map<string, number> {
  return memoOf(ports).renewals;
}

/** When this process last marked each cursor active (see activity.ts). */
export function activityMarks(ports: UseCasePorts): Map<string, number> {
  return memoOf(ports).activityMarks;
}

/**
 * Cursors whose last dispatch in this process found the subscription caught up (nothing written
 * past the read position, nothing due in the tracker, no replay). A receive on such a cursor with a
 * second or more to wait long-polls its doorbell (at least a second: an SQS short poll may miss a
 * ring that is there) before it reads the cursor: every publish and timer rings. A receive with
 * less to wait reads the cursor. A ring wakes one receiver, which may be in another process
 * (Lambda container) and may take only part of what is there, or nothing (a Key_Shared member
 * whose keys it is not), so the mark is trusted for RECORD_TTL_MS at most: a long-polling consumer
 * finds its messages within that long.
 */
export const caughtUpMarks = {
  has(ports: UseCasePorts, cursorId: string): boolean {
    return caughtUpMarks.remainingMs(ports, cursorId) > 0;
  },
  /** How much longer the mark is trusted (0: no mark, or expired). */
  remainingMs(ports: UseCasePorts, cursorId: string): number {
    const untilMs = memoOf(ports).caughtUp.get(cursorId);
    return untilMs === undefined ? 0 : Math.max(0, untilMs - ports.clock.nowMs());
  },
  mark(ports: UseCasePorts, cursorId: string): void {
    remember(memoOf(ports).caughtUp, cursorId, ports.clock.nowMs() + RECORD_TTL_MS);
  },
  forget(ports: UseCasePorts, cursorId: string): void {
    memoOf(ports).caughtUp.delete(cursorId);
  },
};

/**
 * The subscriptions a publish owes its entries to, given the subscriptions
 * version its append read with the ids (Appended.subscriptionsVersion). Listed
 * again only when the version changed: a subscription announced before the
 * allocation was created before it, so a list made after the allocation holds
 * it; one announced after owes itself the entry (it feeds its backlog up to
 * the state of its announcement). A list is also kept no longer than
 * RECORD_TTL_MS, so a subscription whose creator was killed between creating
 * it and announcing it is still found within that time (what was published
 * meanwhile is not fed to it: see ensureSubscription).
 */
/**
 * The partition's subscriptions as this process last listed them (whatever the version and age;
 * publishing keeps the list fresh through subscriptionsAt), listed only when it never did. For
 * marking activity before a publish writes: a subscription newer than the list marked itself when
 * it was created, one deleted since costs maintenance one look.
 */
export async function knownSubscriptions(
  ports: UseCasePorts,
  partition: TopicName,
): Promise<readonly SubscriptionRecord[]> {
  const { subscriptions } = memoOf(ports);
  const key = partition.toString();
  const known = subscriptions.get(key);
  if (known) return known.records;
  const records = await ports.catalog.listSubscriptions(partition);
  // Under no version: the publish's own subscriptionsAt lists again, after its ids are allocated.
  remember(subscriptions, key, { version: '', records, untilMs: ports.clock.nowMs() + RECORD_TTL_MS });
  return records;
}

export async function subscriptionsAt(
  ports: UseCasePorts,
  partition: TopicName,
  version: string,
): Promise<readonly SubscriptionRecord[]> {
  const { subscriptions } = memoOf(ports);
  const key = partition.toString();
  const now = ports.clock.nowMs();
  const known = subscriptions.get(key);
  if (known && known.version === version && known.untilMs > now) return known.records;
  const records = await ports.catalog.listSubscriptions(partition);
  remember(subscriptions, key, { version, records, untilMs: now + RECORD_TTL_MS });
  return records;
}

/**
 * A cursor's unacknowledged entries per consumer, counted again only when the remembered count is
 * older than `maxAgeMs` (the dispatcher's per-consumer cap, engine/consumer-cap.ts; counting reads
 * the window's pages, so it is done only past a window of the cap, and remembered).
 */
export async function recentUnackedByConsumer(
  ports: UseCasePorts,
  cursorId: string,
  maxAgeMs: number,
  count: () => Promise<ReadonlyMap<string, number>>,
): Promise<ReadonlyMap<string, number>> {
  const { unacked } = memoOf(ports);
  const known = unacked.get(cursorId);
  const now = ports.clock.nowMs();
  if (known && now - known.atMs < maxAgeMs) return known.counts;
  const counts = new Map(await count());
  remember(unacked, cursorId, { counts, atMs: now });
  return counts;
}

/**
 * What this process handed out since it counted (recentUnackedByConsumer) adds to the count; what
 * it saw settled (acknowledged or negatively acknowledged, a negative `count`) takes from it, never
 * below 0.
 */
export function addHandedOut(ports: UseCasePorts, cursorId: string, consumerId: string, count: number): void {
  const known = memoOf(ports).unacked.get(cursorId);
  if (known && count !== 0) {
    known.counts.set(consumerId, Math.max(0, (known.counts.get(consumerId) ?? 0) + count));
  }
}
