import type { Position } from '../domain/position.ts';

/** What the store holds of one cursor: mark-delete plus every individual ack after it. */
export interface StoredCursor {
  readonly markDeletePosition: Position;
  /** Individually acknowledged positions, ascending; may include positions at or before mark-delete. */
  readonly acknowledged: readonly Position[];
}

export interface DeliveryState {
  readonly acknowledged: boolean;
  readonly redeliveryCount: number;
}

/** How a delivery check may read the cursor. */
export interface DeliveryStateOptions {
  /**
   * The caller vouches that this cursor's mark-delete position only ever moved by folding
   * individual acknowledgements (Shared and Key_Shared subscriptions: Pulsar refuses cumulative
   * acks there), so every entry between the position the cursor was created at and its current
   * mark-delete position was acknowledged one by one. The store may then answer from the
   * individual acks alone and skip reading the mark-delete position. Never set it for a cursor a
   * cumulative acknowledgement moves (Exclusive, Failover): an entry the mark-delete position
   * passed without an individual ack could be reported unacknowledged and delivered again.
   * One narrow gap is accepted: entries before the position the cursor was created at, on a page
   * before that position's page which an acknowledgement by id of one of them created (no floor
   * covers them), read as unacknowledged; only a token for such an entry, which publish's fan-out
   * sends in a window of one write around the subscription's creation, can then deliver it.
   */
  readonly individualAcksOnly?: boolean;
}

/**
 * Durable subscription cursors. Every individual acknowledgement is kept (no
 * cap on ack holes), and acknowledging is commutative and idempotent, so
 * concurrent writers never lose each other's acks.
 */
export interface CursorStore {
  /** Creates the cursor with everything at or before `markDeletePosition` acknowledged. */
  create(cursorId: string, markDeletePosition: Position): Promise<void>;
  /** Reads the whole cursor. Cost grows with the number of ack pages from mark-delete's page on. */
  load(cursorId: string): Promise<StoredCursor | undefined>;
  /** Individual acknowledgement of any number of positions. Cost: one write per ack page touched. */
  acknowledge(cursorId: string, positions: readonly Position[]): Promise<void>;
  /**
   * Moves mark-delete forward to `position` (never backwards) and marks the ack pages it passed
   * as covered. Cost: one write, plus one per ack page it passes or stops in.
   */
  markDelete(cursorId: string, position: Position): Promise<void>;
  /** Whether each position is acknowledged. Cost: the head plus one read per ack page touched. */
  isAcknowledged(cursorId: string, positions: readonly Position[]): Promise<boolean[]>;
  /**
   * The delivery check of a batch: whether each position is acknowledged, and
   * the highest redelivery count recorded for it (0 when none). Cost: one read
   * per ack page touched, plus the head; with `individualAcksOnly`, the head
   * only when a position's ack page does not exist.
   */
  deliveryState(
    cursorId: string,
    positions: readonly Position[],
    options?: DeliveryStateOptions,
  ): Promise<DeliveryState[]>;
  /**
   * Records that each position is (re)delivered with the given count. Commutative:
   * the highest count recorded wins, so a token carrying a lower count is stale.
   * Cost: one write per ack page touched.
   */
  recordRedelivery(
    cursorId: string,
    redeliveries: readonly { position: Position; count: number }[],
  ): Promise<void>;
  delete(cursorId: string): Promise<void>;
  /**
   * Takes the cursor's exclusive lease for read-modify-write operations (skip)
   * until `untilMs`; false when another holder's lease has not expired.
   * Individual acknowledgements never need it: they commute.
   */
  acquireLease(cursorId: string, holder: string, nowMs: number, untilMs: number): Promise<boolean>;
  /** Releases the lease if `holder` still holds it. */
  releaseLease(cursorId: string, holder: string): Promise<void>;
}
