import {
  type AppliedPolicies,
  DEFAULT_RETENTION,
  keepsEverything,
  setsRetentionOrTTL,
} from '../../domain/policies.ts';
import type { Position } from '../../domain/position.ts';
import { positionBefore } from '../../domain/position.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { ActivePartition } from '../../ports/activity-index.ts';
import { DISPATCH_PAGE_SIZE, type PageRef } from '../../ports/dispatch-store.ts';
import type { LedgerInfo } from '../../ports/ledger.ts';
import type { TopicRecord } from '../../ports/topic-catalog.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { markDeleteForward } from '../engine/reset-cursor.ts';
import { policiesInForce } from '../tenancy/manage-policies.ts';
import { endOfLog, firstPublishedAtOrAfter } from '../topics/find-by-publish-time.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { MARK_EVERY_MS } from './activity.ts';

/** Batches one retention run deletes at most per partition (the next run goes on). */
export const TRIM_BATCHES_PER_RUN = 2_000;

export interface PolicyRunSummary {
  /** Partitions with a message TTL or a retention that does not keep everything. */
  readonly partitions: number;
  /** Subscriptions whose mark-delete the message TTL moved. */
  readonly expiredCursors: number;
  readonly trimmedEntries: number;
  readonly trimmedBytes: number;
  /** Cursor pages deleted with the entries they described. */
  readonly deletedPages: number;
  /** Stored batches whose expiry was renewed (docs/design/storage.md#entry-expiry). */
  readonly renewedBatches: number;
  /** Kept batches found already expired: lost (0 unless maintenance stopped for a quarter of the expiry). */
  readonly expiredBatches: number;
  readonly failures: number;
}

export interface PolicyRunOptions {
  /** Epoch ms (of `ports.clock`) from which no further partition is started. */
  readonly deadlineMs: number;
  /**
   * Partitions with acknowledgements or publishes since their last visit (maintainSubscriptions'
   * `activePartitions`): under a default retention that deletes, these and the partitions marked
   * for publishes with no subscription are where the default has something to delete.
   */
  readonly activePartitions?: readonly string[];
  readonly onFailure?: (target: string, error: unknown) => void;
}

/** One partition to enforce on, and its publish mark when it has no subscription. */
interface PolicyTarget {
  readonly partition: TopicName;
  readonly mark?: ActivePartition;
}

type Totals = { -readonly [K in keyof PolicyRunSummary]: PolicyRunSummary[K] };

/**
 * Maintenance's policy step (every run, after the fold): Pulsar's message TTL and retention on the
 * persistent partitions where they can have something to do, so its work follows the policies and
 * the activity, never every topic ever created:
 * - every partition of each namespace and topic whose policy sets a retention or TTL (the
 *   policies are one Query; a time window needs visits with no activity);
 * - under a default retention that deletes (Pulsar's 0/0 when configured), the partitions whose
 *   subscriptions had activity since their last visit (`activePartitions`) and those a publish
 *   marked for having no subscription (with 0/0, everything goes); a mark is removed once the
 *   partition stores nothing, or has subscriptions (their marks take over), and is a minute old.
 * 1. Message TTL (Pulsar's PersistentMessageExpiryMonitor): the first entry published within the
 *    TTL is found once per partition (a binary search on publish times); every subscription's
 *    mark-delete moves forward to just before it (one head read, and a write when it moves).
 * 2. Retention (Pulsar's trimConsumedLedgers): the slowest subscription's mark-delete (the end
 *    of the log when there is none) bounds what may go; the ledger lets go what the policy lets
 *    go, oldest first (Ledger.trim: with entry expiry it moves the first kept position and
 *    DynamoDB's TTL deletes), and every subscription's cursor pages wholly before the new first
 *    kept position are deleted with it.
 * 3. Expiry renewal (Ledger.renewExpiry): what the partition keeps from its first kept position on
 *    has its expiry renewed when due, whatever the retention (so also on the active partitions
 *    under a default that keeps everything).
 * Starts nothing after `deadlineMs`; a failing partition is reported and the others go on.
 */
export async function enforcePolicies(
  ports: UseCasePorts,
  options: PolicyRunOptions,
): Promise<PolicyRunSummary> {
  const totals: Totals = {
    partitions: 0,
    expiredCursors: 0,
    trimmedEntries: 0,
    trimmedBytes: 0,
    deletedPages: 0,
    renewedBatches: 0,
    expiredBatches: 0,
    failures: 0,
  };
  const inForce = new Map<string, ReturnType<typeof policiesInForce>>();
  for (const target of await policyTargets(ports, options.activePartitions ?? [])) {
    if (ports.clock.nowMs() >= options.deadlineMs) break;
    try {
      const topicName = target.partition.partitionedTopicName.toString();
      const policies = inForce.get(topicName) ?? policiesInForce(ports, target.partition);
      inForce.set(topicName, policies);
      const subscriptions = await enforceOn(ports, {
        partition: target.partition,
        policies: await policies,
        totals,
      });
      if (target.mark) await settleMark(ports, target.mark, subscriptions);
    } catch (error) {
      totals.failures++;
      options.onFailure?.(target.partition.toString(), error);
    }
  }
  return totals;
}

/** TTL and retention on one partition; answers how many subscriptions it has (-1: not read). */
async function enforceOn(
  ports: UseCasePorts,
  run: { readonly partition: TopicName; readonly policies: AppliedPolicies; readonly totals: Totals },
): Promise<number> {
  const { partition, policies, totals } = run;
  const ttlSeconds = policies.messageTTLInSeconds;
  if (ttlSeconds <= 0 && keepsEverything(policies.retention)) {
    await renewExpiry(ports, partition, totals);
    return -1;
  }
  totals.partitions++;
  // Nothing stored and no TTL: nothing to do (the common idle topic under a 0/0 default).
  if (ttlSeconds <= 0 && !(await storesEntries(ports, partition))) return -1;
  const subscriptions = await ports.catalog.listSubscriptions(partition);
  if (ttlSeconds > 0 && subscriptions.length > 0) {
    const firstKept = await firstPublishedAtOrAfter(
      ports.ledger,
      partition,
      ports.clock.nowMs() - ttlSeconds * 1_000,
    );
    for (const subscription of subscriptions) {
      const move = await markDeleteForward(
        engineOf(ports),
        { partition, cursorId: subscription.cursorId, type: subscription.type },
        positionBefore(firstKept),
      );
      if (move.newMarkDeletePosition.compareTo(move.markDeletePosition) > 0) totals.expiredCursors++;
    }
  }
  if (!keepsEverything(policies.retention)) {
    const trimmed = await trimPartition(ports, partition, subscriptions, policies.retention);
    totals.trimmedEntries += trimmed.entries;
    totals.trimmedBytes += trimmed.bytes;
    totals.deletedPages += trimmed.pages;
  }
  await renewExpiry(ports, partition, totals);
  return subscriptions.length;
}

/**
 * After retention: what the partition still holds from its first kept position on (a backlog,
 * what retention keeps) has its expiry renewed when a walk is due, so DynamoDB's TTL never deletes
 * it (Ledger.renewExpiry; docs/design/storage.md#entry-expiry). Cost when not due: one state read.
 */
async function renewExpiry(ports: UseCasePorts, partition: TopicName, totals: Totals): Promise<void> {
  const renewed = await ports.ledger.renewExpiry(partition, {
    nowMs: ports.clock.nowMs(),
    maxBatches: TRIM_BATCHES_PER_RUN,
  });
  totals.renewedBatches += renewed?.renewed ?? 0;
  totals.expiredBatches += renewed?.expired ?? 0;
}

/**
 * A publish mark goes once it is MARK_EVERY_MS old (a process skips marks for that long after
 * its own) and the partition has subscriptions (their marks take over) or stores nothing.
 */
async function settleMark(ports: UseCasePorts, mark: ActivePartition, subscriptions: number): Promise<void> {
  if (ports.clock.nowMs() - mark.markedAtMs < MARK_EVERY_MS) return;
  const partition = TopicName.parse(mark.partition);
  if (subscriptions > 0 || !(await storesEntries(ports, partition))) {
    await ports.activity.removePartition(mark.partition, mark.markedAtMs);
  }
}

/**
 * The persistent partitions to enforce on (each once): those a namespace or topic policy that sets
 * a retention or TTL covers; and, under a default retention that deletes, the active ones.
 */
async function policyTargets(
  ports: UseCasePorts,
  activePartitions: readonly string[],
): Promise<PolicyTarget[]> {
  const targets = new Map<string, PolicyTarget>();
  const add = (target: PolicyTarget) => {
    if (target.partition.isPersistent) targets.set(target.partition.toString(), target);
  };
  for (const record of await topicsWithPolicies(ports)) {
    const names =
      record.partitions === 0
        ? [record.topic]
        : Array.from({ length: record.partitions }, (_, index) => record.topic.partition(index));
    for (const partition of names) add({ partition });
  }
  // Active partitions always: a backlog's expiry is renewed whatever the retention (batches written
  // while the default let entries expire carry one, even after the default changed to keep them).
  for (const name of activePartitions) {
    const partition = parseOrUndefined(name);
    if (partition) add({ partition });
  }
  if (keepsEverything(ports.settings.defaultRetention ?? DEFAULT_RETENTION)) return [...targets.values()];
  for (const mark of await ports.activity.listPartitions()) {
    const partition = parseOrUndefined(mark.partition);
    if (partition) add({ partition, mark });
  }
  return [...targets.values()];
}

function parseOrUndefined(name: string): TopicName | undefined {
  try {
    return TopicName.parse(name);
  } catch {
    return undefined; // not a topic name any more: nothing to enforce
  }
}

/** The persistent topics a namespace or topic policy setting a retention or TTL covers (each once). */
async function topicsWithPolicies(ports: UseCasePorts): Promise<TopicRecord[]> {
  const topics = new Map<string, TopicRecord>();
  for (const { scope, policies } of await ports.policies.list()) {
    if (!setsRetentionOrTTL(policies)) continue; // limits only: nothing for maintenance
    if ('namespace' in scope) {
      for (const record of await ports.catalog.listTopics('persistent', scope.namespace)) {
        topics.set(record.topic.toString(), record);
      }
    } else {
      const name = parseOrUndefined(scope.topic);
      const record = name ? await ports.catalog.getTopic(name) : undefined;
      if (record) topics.set(record.topic.toString(), record);
    }
  }
  return [...topics.values()];
}

/** Whether the partition holds an entry retention has not deleted (one read of its state). */
async function storesEntries(ports: UseCasePorts, partition: TopicName): Promise<boolean> {
  const state = await ports.ledger.state(partition);
  return state !== undefined && state.msgInCounter - (state.entriesDeleted ?? 0) > 0;
}

async function trimPartition(
  ports: UseCasePorts,
  partition: TopicName,
  subscriptions: Awaited<ReturnType<UseCasePorts['catalog']['listSubscriptions']>>,
  retention: { readonly retentionTimeInMinutes: number; readonly retentionSizeInMB: number },
): Promise<{ entries: number; bytes: number; pages: number }> {
  const state = await ports.ledger.state(partition);
  if (!state) return { entries: 0, bytes: 0, pages: 0 };
  // What every subscription consumed: the slowest mark-delete (no subscription: everything).
  let consumedUpTo = positionBefore(endOfLog(state));
  for (const subscription of subscriptions) {
    const head = (await ports.dispatch.readHead(subscription.cursorId))?.head;
    if (!head) continue;
    if (head.markDelete.compareTo(consumedUpTo) < 0) consumedUpTo = head.markDelete;
  }
  const trimmed = await ports.ledger.trim(partition, {
    consumedUpTo,
    retentionTimeMs: retention.retentionTimeInMinutes < 0 ? -1 : retention.retentionTimeInMinutes * 60_000,
    retentionSizeBytes: retention.retentionSizeInMB < 0 ? -1 : retention.retentionSizeInMB * 1024 * 1024,
    nowMs: ports.clock.nowMs(),
    maxBatches: TRIM_BATCHES_PER_RUN,
  });
  if (!trimmed || trimmed.entries === 0) return { entries: 0, bytes: 0, pages: 0 };
  // The cursors' pages of what went (their tombstones): every subscription is past it.
  const pages = pagesBetween(state.ledgers, trimmed.from, trimmed.to);
  for (const subscription of subscriptions) await ports.dispatch.deletePages(subscription.cursorId, pages);
  // A reset (or a subscription created at Earliest) that moved a cursor back after the mark-deletes
  // were read above may point at what was just deleted: what retention deleted counts as consumed
  // (the reset checks the first kept position again after it wrote, covering the other order).
  const consumed = positionBefore(trimmed.to);
  for (const subscription of await ports.catalog.listSubscriptions(partition)) {
    const head = (await ports.dispatch.readHead(subscription.cursorId))?.head;
    if (!head || head.markDelete.compareTo(consumed) >= 0) continue;
    await markDeleteForward(
      engineOf(ports),
      { partition, cursorId: subscription.cursorId, type: subscription.type },
      consumed,
    );
  }
  return { entries: trimmed.entries, bytes: trimmed.bytes, pages: pages.length * subscriptions.length };
}

/** The cursor pages wholly in [from, to): every entry they describe is deleted. */
export function pagesBetween(ledgers: readonly LedgerInfo[], from: Position, to: Position): PageRef[] {
  const pages: PageRef[] = [];
  for (const ledger of ledgers) {
    if (ledger.ledgerId < from.ledgerId || ledger.ledgerId > to.ledgerId) continue;
    const start = ledger.ledgerId === from.ledgerId ? from.entryId : 0n;
    const end = ledger.ledgerId === to.ledgerId ? to.entryId : ledger.entries;
    // Everything before `from` went earlier: a page that ends by `to` is wholly gone.
    const firstPage = start / DISPATCH_PAGE_SIZE;
    // A ledger before `to`'s is gone to its end (its last page may be short).
    const whole = ledger.ledgerId < to.ledgerId;
    for (
      let page = firstPage;
      whole ? page * DISPATCH_PAGE_SIZE < end : (page + 1n) * DISPATCH_PAGE_SIZE <= end;
      page++
    ) {
      pages.push({ ledgerId: ledger.ledgerId, page });
    }
  }
  return pages;
}
