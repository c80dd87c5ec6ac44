import type { DeliveryRun } from './delivery-run.ts';
import { Position } from './position.ts';

/**
 * The one item every receive reads and every claim compares-and-sets: a subscription's dispatcher
 * state on one partition, as Pulsar's dispatcher and managed cursor keep it in memory. Kept small
 * (well under 1 KB encoded) so that a write costs one write unit.
 */
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
  /** Exclusive/Failover: the last few replaced owners, whose calls are refused (I6). */
  readonly fenced?: readonly string[];
  /** A read-modify-write of the cursor in progress (an admin skip), until `untilMs`. */
  readonly lease?: { readonly holder: string; readonly untilMs: number };
}

/** The head of a new cursor: nothing dispatched after `markDelete`. */
export function newDispatchHead(markDelete: Position, readPosition: Position): DispatchHead {
  return { markDelete, readPosition, runs: [], epoch: 0 };
}

type EncodedRun =
  | [string, string, number, number, 'h', string, number, number?]
  | [string, string, number, number, 'r', number];

interface EncodedHead {
  md: string;
  rp: string;
  x: EncodedRun[];
  rd?: number;
  ep: number;
  ow?: [string, number];
  rw?: string;
  ra?: number;
  fz?: string[];
  ls?: [string, number];
}

export function encodeRuns(runs: readonly DeliveryRun[]): EncodedRun[] {
  return runs.map((run): EncodedRun => {
    const base = [run.ledgerId.toString(), run.entryId.toString(), run.n, run.deliveries] as const;
    if (run.state.kind === 'released') return [...base, 'r', run.state.dueAtMs];
    const held: EncodedRun = [...base, 'h', run.state.consumerId, run.state.deliveredAtMs];
    if (run.state.timeoutAtMs !== undefined) held.push(run.state.timeoutAtMs);
    return held;
  });
}

export function decodeRuns(encoded: readonly EncodedRun[]): DeliveryRun[] {
  return encoded.map((item): DeliveryRun => {
    const [ledgerId, entryId, n, deliveries] = item;
    const base = { ledgerId: BigInt(ledgerId), entryId: BigInt(entryId), n, deliveries };
    if (item[4] === 'r') return { ...base, state: { kind: 'released', dueAtMs: item[5] } };
    const timeoutAtMs = item[7];
    return {
      ...base,
      state: {
        kind: 'held',
        consumerId: item[5],
        deliveredAtMs: item[6],
        ...(timeoutAtMs !== undefined ? { timeoutAtMs } : {}),
      },
    };
  });
}

/** The head as stored: compact JSON (bigints as decimal strings). */
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
  if (head.fenced && head.fenced.length > 0) encoded.fz = [...head.fenced];
  if (head.lease) encoded.ls = [head.lease.holder, head.lease.untilMs];
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
    ...(encoded.fz ? { fenced: encoded.fz } : {}),
    ...(encoded.ls ? { lease: { holder: encoded.ls[0], untilMs: encoded.ls[1] } } : {}),
  };
}
