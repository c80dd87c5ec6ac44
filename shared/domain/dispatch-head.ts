import type { DeliveryRun, ReleaseCause } from './delivery-run.ts';
import { nextInLedger, Position } from './position.ts';
import { decodeRateCounter, encodeRateCounter, type RateCounter } from './rate-counter.ts';

/**
 * The one item every receive reads and every claim compares-and-sets: a subscription's dispatcher
 * state on one partition, as Pulsar's dispatcher and managed cursor keep it in memory. Kept small
 * (well under 1 KB encoded) so that a write costs one write unit.
 */
/** A Key_Shared member whose join mark was taken and whose subscribe has not registered it yet. */
export interface JoiningMember {
  readonly consumerId: string;
  readonly atMs: number;
}

export interface DispatchHead {
  /** Everything at or before it is acknowledged (Pulsar's markDeletePosition). */
  readonly markDelete: Position;
  /**
   * The next entry never dispatched (Pulsar's readPosition): first deliveries start here. Every
   * entry before it has a delivery run or is acknowledged.
   */
  readonly readPosition: Position;
  /** The newest delivery runs, ordered by position; older ones are spilled to their pages. */
  readonly runs: readonly DeliveryRun[];
  /** No tracker entry is due before this time (epoch ms); undefined: the tracker is empty. */
  readonly trackerDueAtMs?: number;
  /** Exclusive/Failover: bumped by every takeover; a claim or cumulative ack from another epoch fails. */
  readonly epoch: number;
  /** Exclusive/Failover: the active consumer and the end of its lease. */
  readonly owner?: { readonly consumerId: string; readonly leaseUntilMs: number };
  /** Exclusive/Failover: a rewind in progress; entries from here up to readPosition are replayed in order. */
  readonly replayFrom?: Position;
  /** Key_Shared: the due time of the last entries routed to another member (kept monotonic). */
  readonly routedAtMs?: number;
  /**
   * Key_Shared: the members joining now (each one's join mark was taken on this head), and since
   * when. Until a subscribe has registered its member and taken it off this list, a receive whose
   * member list lacks it hands nothing out: its list was read before the member registered, and
   * would give the new member's keys to the others (see engine/key-shared-routing.ts,
   * joinPending). A list, so two subscribes racing each keep their own mark (at most MAX_JOINING).
   */
  readonly joining?: readonly JoiningMember[];
  /** Exclusive/Failover: the last few replaced owners, whose calls are refused (I6). */
  readonly fenced?: readonly string[];
  /** A read-modify-write of the cursor in progress (an admin skip), until `untilMs`. */
  readonly lease?: { readonly holder: string; readonly untilMs: number };
  /**
   * A reset-cursor in progress: the pages from the read position up to `end` (excluded) still hold
   * acknowledgements and runs of before the reset, which its resetter is clearing. Until it is
   * done, nothing is dispatched and the fold waits; past `untilMs` (its resetter died) whoever
   * finds it finishes it (see engine/reset-cursor.ts).
   */
  readonly resetting?: { readonly end: Position; readonly untilMs: number };
  /**
   * First deliveries handed out by claims: count, bytes, the last claim's time and the rate
   * snapshots, kept by the claim's own write (no write of its own). Deliveries from the tracker
   * and replays are counted beside the head (DispatchStore.addToCounters).
   */
  readonly delivered?: RateCounter;
  /** The last cumulative acknowledgement, or the newest acknowledgement a fold passed (epoch ms). */
  readonly lastAckedAtMs?: number;
  /**
   * Shared/Key_Shared: due times an operator set (topics reschedule) on entries the dispatcher has
   * not reached, at most MAX_DUE_OVERRIDES, by position. The claim that reaches one releases it to
   * the tracker due then (or hands it out, when that time has come), whatever its deliverAt, and
   * drops it; so does any head whose read position passed it. Absent in nearly every head: it
   * costs bytes (about 20 each) only while an operator's reschedule waits for the dispatcher.
   */
  readonly overrides?: readonly DueOverride[];
}

/** A due time an operator set on an entry the dispatcher has not reached (see DispatchHead.overrides). */
export interface DueOverride {
  readonly position: Position;
  readonly dueAtMs: number;
}

/** Overrides one head keeps at most (about 20 bytes each). */
export const MAX_DUE_OVERRIDES = 8;

/** The override at `position`, if any. */
export function overrideAt(head: DispatchHead, position: Position): DueOverride | undefined {
  return head.overrides?.find((override) => override.position.equals(position));
}

/** The head without the overrides the read position passed (the same head when none was). */
export function dropPassedOverrides(head: DispatchHead): DispatchHead {
  const { overrides, ...rest } = head;
  if (!overrides) return head;
  const left = overrides.filter((override) => override.position.compareTo(head.readPosition) >= 0);
  if (left.length === overrides.length) return head;
  return left.length > 0 ? { ...rest, overrides: left } : rest;
}

/** The head with `override` set (replacing one at its position), in position order. */
export function withOverride(head: DispatchHead, override: DueOverride): DispatchHead {
  const others = (head.overrides ?? []).filter((o) => !o.position.equals(override.position));
  return { ...head, overrides: [...others, override].sort((a, b) => a.position.compareTo(b.position)) };
}

/** The head of a new cursor: nothing dispatched after `markDelete`. */
export function newDispatchHead(markDelete: Position, readPosition: Position): DispatchHead {
  return { markDelete, readPosition, runs: [], epoch: 0 };
}

/**
 * The head with mark-delete moved to `position` (never back) and the runs it passed dropped. A
 * replay behind it starts after it (what it passed is acknowledged: replaying it would hand out
 * nothing, one page per receive), and ends when that reaches the read position.
 */
export function markDeleteTo(head: DispatchHead, position: Position): DispatchHead {
  if (position.compareTo(head.markDelete) <= 0) return head;
  const runs = head.runs.filter((run) => {
    const last = Position.of(run.ledgerId, run.entryId + BigInt(run.n - 1));
    return last.compareTo(position) > 0;
  });
  const afterMarkDelete = nextInLedger(position);
  const readPosition = head.readPosition.compareTo(afterMarkDelete) < 0 ? afterMarkDelete : head.readPosition;
  const { replayFrom: replay, ...rest } = head;
  const replayFrom = replay && replay.compareTo(afterMarkDelete) < 0 ? afterMarkDelete : replay;
  return dropPassedOverrides({
    ...rest,
    markDelete: position,
    runs,
    readPosition,
    ...(replayFrom && replayFrom.compareTo(readPosition) < 0 ? { replayFrom } : {}),
  });
}

/** Whether a reset's resetter is overdue (died): then whoever finds it finishes it. */
export function resetOverdue(head: DispatchHead, nowMs: number): boolean {
  return head.resetting !== undefined && head.resetting.untilMs <= nowMs;
}

/**
 * One run, compactly: `ledger|entry|n|deliveries|h|consumer|deliveredAt[|timeoutAt]` or
 * `ledger|entry|n|deliveries|r|dueAt`, numbers in base 36 (a head of 16 runs stays under 1 KB, so
 * its writes cost one write unit). Consumer ids never hold `|` (the API's ids are [A-Za-z0-9_-]).
 */
type EncodedRun = string;

const b36 = (value: bigint | number) => value.toString(36);
const fromB36 = (text: string) => Number.parseInt(text, 36);
const bigFromB36 = (text: string) => {
  let value = 0n;
  for (const char of text) value = value * 36n + BigInt(Number.parseInt(char, 36));
  return value;
};

interface EncodedHead {
  md: string;
  rp: string;
  x: EncodedRun[];
  rd?: number;
  ep: number;
  ow?: [string, number];
  rw?: string;
  ra?: number;
  /** Members joining: `[[id, atMs], ...]`; heads written before the list hold one `[id, atMs]`. */
  kj?: [string, number] | [string, number][];
  fz?: string[];
  ls?: [string, number];
  rs?: [string, number];
  oc?: number[];
  la?: number;
  ov?: string[];
}

/** A released run's cause in one letter (absent: a nack or a deliverAt; older items have none). */
const CAUSE_CODES: Record<ReleaseCause, string> = { gone: 'g', rescheduled: 's' };
const CAUSE_OF_CODE: Record<string, ReleaseCause> = { g: 'gone', s: 'rescheduled' };

export function encodeRuns(runs: readonly DeliveryRun[]): EncodedRun[] {
  return runs.map((run): EncodedRun => {
    const base = [b36(run.ledgerId), b36(run.entryId), b36(run.n), b36(run.deliveries)];
    if (run.state.kind === 'released') {
      const cause = run.state.cause ? [CAUSE_CODES[run.state.cause]] : [];
      return [...base, 'r', b36(run.state.dueAtMs), ...cause].join('|');
    }
    if (run.state.consumerId.includes('|'))
      throw new RangeError(`Consumer id ${run.state.consumerId} holds '|'`);
    const held = [...base, 'h', run.state.consumerId, b36(run.state.deliveredAtMs)];
    if (run.state.timeoutAtMs !== undefined) held.push(b36(run.state.timeoutAtMs));
    return held.join('|');
  });
}

export function decodeRuns(encoded: readonly EncodedRun[]): DeliveryRun[] {
  return encoded.map((item): DeliveryRun => {
    const [ledgerId, entryId, n, deliveries, kind, ...rest] = item.split('|') as [
      string,
      string,
      string,
      string,
      string,
      ...string[],
    ];
    const base = {
      ledgerId: bigFromB36(ledgerId),
      entryId: bigFromB36(entryId),
      n: fromB36(n),
      deliveries: fromB36(deliveries),
    };
    if (kind === 'r') {
      const cause = rest[1] === undefined ? undefined : CAUSE_OF_CODE[rest[1]];
      return {
        ...base,
        state: { kind: 'released', dueAtMs: fromB36(rest[0] as string), ...(cause ? { cause } : {}) },
      };
    }
    const [consumerId, deliveredAt, timeoutAt] = rest as [string, string, string?];
    return {
      ...base,
      state: {
        kind: 'held',
        consumerId,
        deliveredAtMs: fromB36(deliveredAt),
        ...(timeoutAt !== undefined ? { timeoutAtMs: fromB36(timeoutAt) } : {}),
      },
    };
  });
}

/** The head as stored: compact JSON (bigints as decimal strings). */
function decodeJoining(kj: [string, number] | [string, number][]): JoiningMember[] {
  const list = typeof kj[0] === 'string' ? [kj as [string, number]] : (kj as [string, number][]);
  return list.map(([consumerId, atMs]) => ({ consumerId, atMs }));
}

export function encodeDispatchHead(head: DispatchHead): string {
  const encoded: EncodedHead = {
    md: head.markDelete.toString(),
    rp: head.readPosition.toString(),
    x: encodeRuns(head.runs),
    ep: head.epoch,
  };
  if (head.trackerDueAtMs !== undefined) encoded.rd = head.trackerDueAtMs;
  if (head.owner) encoded.ow = [head.owner.consumerId, head.owner.leaseUntilMs];
  if (head.replayFrom) encoded.rw = head.replayFrom.toString();
  if (head.routedAtMs !== undefined) encoded.ra = head.routedAtMs;
  if (head.joining && head.joining.length > 0)
    encoded.kj = head.joining.map((member): [string, number] => [member.consumerId, member.atMs]);
  if (head.fenced && head.fenced.length > 0) encoded.fz = [...head.fenced];
  if (head.lease) encoded.ls = [head.lease.holder, head.lease.untilMs];
  if (head.resetting) encoded.rs = [head.resetting.end.toString(), head.resetting.untilMs];
  if (head.delivered) encoded.oc = encodeRateCounter(head.delivered);
  if (head.lastAckedAtMs !== undefined) encoded.la = head.lastAckedAtMs;
  if (head.overrides && head.overrides.length > 0)
    encoded.ov = head.overrides.map(
      ({ position, dueAtMs }) => `${b36(position.ledgerId)}|${b36(position.entryId)}|${b36(dueAtMs)}`,
    );
  return JSON.stringify(encoded);
}

export function decodeDispatchHead(text: string): DispatchHead {
  const encoded = JSON.parse(text) as EncodedHead;
  return {
    markDelete: Position.parseStored(encoded.md),
    readPosition: Position.parseStored(encoded.rp),
    runs: decodeRuns(encoded.x),
    epoch: encoded.ep,
    ...(encoded.rd !== undefined ? { trackerDueAtMs: encoded.rd } : {}),
    ...(encoded.ow ? { owner: { consumerId: encoded.ow[0], leaseUntilMs: encoded.ow[1] } } : {}),
    ...(encoded.rw !== undefined ? { replayFrom: Position.parseStored(encoded.rw) } : {}),
    ...(encoded.ra !== undefined ? { routedAtMs: encoded.ra } : {}),
    ...(encoded.kj ? { joining: decodeJoining(encoded.kj) } : {}),
    ...(encoded.fz ? { fenced: encoded.fz } : {}),
    ...(encoded.ls ? { lease: { holder: encoded.ls[0], untilMs: encoded.ls[1] } } : {}),
    ...(encoded.rs
      ? { resetting: { end: Position.parseStored(encoded.rs[0]), untilMs: encoded.rs[1] } }
      : {}),
    ...(encoded.oc ? { delivered: decodeRateCounter(encoded.oc) as RateCounter } : {}),
    ...(encoded.la !== undefined ? { lastAckedAtMs: encoded.la } : {}),
    ...(encoded.ov ? { overrides: encoded.ov.map(decodeOverride) } : {}),
  };
}

function decodeOverride(text: string): DueOverride {
  const [ledgerId, entryId, dueAtMs] = text.split('|') as [string, string, string];
  return { position: Position.of(bigFromB36(ledgerId), bigFromB36(entryId)), dueAtMs: fromB36(dueAtMs) };
}
