import type { RetentionPolicies } from './policies.ts';

/**
 * Entry expiry (docs/design/storage.md#entry-expiry): every stored publish batch carries an expiry
 * (DynamoDB's Time to Live attribute), `expiryMs` after its publish time, so that what retention
 * lets go is deleted by DynamoDB for no write unit, and retention itself only moves the partition's
 * first kept position. Whatever must stay (a backlog some subscription has not acknowledged, what
 * a retention policy keeps) is at or after that position, and maintenance renews its expiry long
 * before it comes:
 * - a renewal walk of a partition is due a quarter of `expiryMs` before the earliest expiry it
 *   left behind ({@link renewalDueAtMs});
 * - it renews every kept batch expiring within half of `expiryMs` to `now + expiryMs`
 *   ({@link needsRenewal}), so the earliest expiry after it is at least half of `expiryMs` away,
 *   and the next walk comes at least a quarter of `expiryMs` before anything expires: maintenance
 *   may stop for that long (3.5 days at the default 14) and nothing kept is lost;
 * - it walks batches in position order and stops at the first published late enough that every
 *   later one expires after the renewal horizon ({@link walkMayStopAt}); publish times are not
 *   strictly in position order (concurrent publishers, each container's clock), hence the slack.
 * Pure: times are given.
 */

/** The default: 14 days (DynamoDB deletes expired items within a few days of their expiry). */
export const DEFAULT_ENTRY_EXPIRY_MS = 14 * 24 * 60 * 60_000;

/**
 * How far out of position order two batches' publish times can be: a publish runs at most 29 s
 * (API Gateway), and containers' clocks agree to well under a second; a minute covers both.
 */
export const PUBLISH_ORDER_SLACK_MS = 60_000;

/** DynamoDB's TTL attribute of a batch published (or renewed) at `fromMs`: epoch seconds, rounded up. */
export function expiresAtSeconds(fromMs: number, expiryMs: number): number {
  return Math.ceil((fromMs + expiryMs) / 1_000);
}

/** Whether a kept batch expiring at `expiresAtMs` is renewed by a walk at `nowMs`: within half the expiry. */
export function needsRenewal(expiresAtMs: number, nowMs: number, expiryMs: number): boolean {
  return expiresAtMs < nowMs + expiryMs / 2;
}

/**
 * Whether a walk at `nowMs` may stop at a batch published at `publishTimeMs`: this batch and every
 * later one (published at least the slack before it) expire after `nowMs` plus half the expiry,
 * beyond what this walk renews.
 */
export function walkMayStopAt(publishTimeMs: number, nowMs: number, expiryMs: number): boolean {
  return publishTimeMs - PUBLISH_ORDER_SLACK_MS + expiryMs >= nowMs + expiryMs / 2;
}

/**
 * The earliest expiry of what a walk at `nowMs` did not reach: batches published from the stop
 * batch on (`stopPublishTimeMs`), or, when the walk reached the log's end, batches published after
 * the walk started.
 */
export function expiryBeyondWalkMs(
  stopPublishTimeMs: number | undefined,
  nowMs: number,
  expiryMs: number,
): number {
  return (stopPublishTimeMs ?? nowMs) - PUBLISH_ORDER_SLACK_MS + expiryMs;
}

/** When the next walk is due, given the earliest expiry of everything kept after this one. */
export function renewalDueAtMs(earliestExpiryMs: number, expiryMs: number): number {
  return earliestExpiryMs - expiryMs / 4;
}

/**
 * Whether batches may carry an expiry under the deployment's default retention: only when that
 * default lets a consumed entry go within a quarter of the expiry (a time limit, 0/0 included).
 * A partition under the default is visited by maintenance only while it has activity or a backlog
 * (the activity index), so a longer default (or -1: no limit by time) could not be renewed for a
 * settled topic; namespaces and topics whose own policy keeps longer are visited every run and
 * renewed.
 */
export function expiryAllowedBy(defaultRetention: RetentionPolicies, expiryMs: number): boolean {
  const minutes = defaultRetention.retentionTimeInMinutes;
  return expiryMs > 0 && minutes >= 0 && minutes * 60_000 <= expiryMs / 4;
}
