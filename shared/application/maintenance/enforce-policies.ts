import { DEFAULT_RETENTION, keepsEverything, setsRetentionOrTTL } from '../../domain/policies.ts';
import type { Position } from '../../domain/position.ts';
import { positionBefore } from '../../domain/position.ts';
import { TopicName } from '../../domain/topic-name.ts';
import { DISPATCH_PAGE_SIZE, type PageRef } from '../../ports/dispatch-store.ts';
import type { LedgerInfo } from '../../ports/ledger.ts';
import type { TopicRecord } from '../../ports/topic-catalog.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { markDeleteForward } from '../engine/reset-cursor.ts';
import { policiesInForce } from '../tenancy/manage-policies.ts';
import { endOfLog, firstPublishedAtOrAfter } from '../topics/find-by-publish-time.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

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
  readonly failures: number;
}

/**
 * Maintenance's policy step (every run, after the fold): Pulsar's message TTL and retention on
 * every persistent partition. Under the default retention (Pulsar's 0/0: what every subscription
 * acknowledged goes, everything on a topic with no subscription) that is every persistent topic
 * (one scan of the catalog); only a deployment whose default keeps everything (-1/-1) lists the
 * policies instead (one Query), then the topics of each namespace and topic that sets one, so its
 * work follows the policies, not everything ever created.
 * 1. Message TTL (Pulsar's PersistentMessageExpiryMonitor): the first entry published within the
 *    TTL is found once per partition (a binary search on publish times); every subscription's
 *    mark-delete moves forward to just before it (one head read, and a write when it moves).
 * 2. Retention (Pulsar's trimConsumedLedgers): the slowest subscription's mark-delete (the end
 *    of the log when there is none) bounds what may go; the ledger deletes what the policy lets
 *    go, oldest first (Ledger.trim), and every subscription's cursor pages wholly before the new
 *    first kept position are deleted with it.
 * Starts nothing after `deadlineMs`; a failing partition is reported and the others go on.
 */
export async function enforcePolicies(
  ports: UseCasePorts,
  options: { readonly deadlineMs: number; readonly onFailure?: (target: string, error: unknown) => void },
): Promise<PolicyRunSummary> {
  let partitions = 0;
  let expiredCursors = 0;
  let trimmedEntries = 0;
  let trimmedBytes = 0;
  let deletedPages = 0;
  let failures = 0;
  for (const record of await topicsWithPolicies(ports)) {
    if (ports.clock.nowMs() >= options.deadlineMs) break;
    if (!record.topic.isPersistent) continue;
    try {
      const policies = await policiesInForce(ports, record.topic);
      const ttlSeconds = policies.messageTTLInSeconds;
      if (ttlSeconds <= 0 && keepsEverything(policies.retention)) continue;
      const names =
        record.partitions === 0
          ? [record.topic]
          : Array.from({ length: record.partitions }, (_, index) => record.topic.partition(index));
      for (const partition of names) {
        partitions++;
        // Nothing stored and no TTL: nothing to do (the common idle topic under the 0/0 default).
        if (ttlSeconds <= 0 && !(await storesEntries(ports, partition))) continue;
        const subscriptions = await ports.catalog.listSubscriptions(partition);
        if (ttlSeconds > 0 && subscriptions.length > 0) {
          const nowMs = ports.clock.nowMs();
          const firstKept = await firstPublishedAtOrAfter(
            ports.ledger,
            partition,
            nowMs - ttlSeconds * 1_000,
          );
          for (const subscription of subscriptions) {
            const move = await markDeleteForward(
              engineOf(ports),
              { partition, cursorId: subscription.cursorId, type: subscription.type },
              positionBefore(firstKept),
            );
            if (move.newMarkDeletePosition.compareTo(move.markDeletePosition) > 0) expiredCursors++;
          }
        }
        if (keepsEverything(policies.retention)) continue;
        const trimmed = await trimPartition(ports, partition, subscriptions, policies.retention);
        trimmedEntries += trimmed.entries;
        trimmedBytes += trimmed.bytes;
        deletedPages += trimmed.pages;
      }
    } catch (error) {
      failures++;
      options.onFailure?.(record.topic.toString(), error);
    }
  }
  return { partitions, expiredCursors, trimmedEntries, trimmedBytes, deletedPages, failures };
}

/**
 * The persistent topics a policy may apply to (each once): all of them unless the default
 * retention keeps everything, else those a namespace or topic policy covers.
 */
async function topicsWithPolicies(ports: UseCasePorts): Promise<TopicRecord[]> {
  if (!keepsEverything(ports.settings.defaultRetention ?? DEFAULT_RETENTION)) {
    return (await ports.catalog.listAllTopics()).filter((record) => record.topic.isPersistent);
  }
  const topics = new Map<string, TopicRecord>();
  for (const { scope, policies } of await ports.policies.list()) {
    if (!setsRetentionOrTTL(policies)) continue; // limits only: nothing for maintenance
    if ('namespace' in scope) {
      for (const record of await ports.catalog.listTopics('persistent', scope.namespace)) {
        topics.set(record.topic.toString(), record);
      }
    } else {
      let name: TopicName;
      try {
        name = TopicName.parse(scope.topic);
      } catch {
        continue; // not a topic name any more: nothing to enforce
      }
      const record = await ports.catalog.getTopic(name);
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
