import { ConflictError } from '../../shared/domain/errors.ts';
import { Position } from '../../shared/domain/position.ts';
import type {
  CursorStore,
  DeliveryState,
  DeliveryStateOptions,
  StoredCursor,
} from '../../shared/ports/cursor-store.ts';
import { InjectedFaults } from './in-memory-faults.ts';

interface CursorRecord {
  /** Undefined when only acks exist: a late acknowledgement of a deleted or never-created cursor. */
  markDeletePosition?: Position;
  readonly acknowledged: Map<string, Position>;
}

/**
 * CursorStore in memory, with the semantics of DynamoDbCursorStore: a cursor
 * is a head (the mark-delete position) plus a set of acknowledged positions;
 * acknowledging is an idempotent set union that needs no head (as an `ADD` to
 * an ack page does), and a cursor without a head does not exist. Mark-delete
 * drops every ack it covers (the adapter keeps the acks of the page it stops
 * in; the port allows both). Not page-based: the delivery check always reads
 * the mark-delete position, so `individualAcksOnly` changes nothing here.
 * Not persisted; every operation is atomic.
 */
export class InMemoryCursorStore implements CursorStore {
  private readonly cursors = new Map<string, CursorRecord>();
  private readonly leases = new Map<string, { holder: string; untilMs: number }>();
  /** cursorId -> position -> highest redelivery count recorded. */
  private readonly redeliveries = new Map<string, Map<string, number>>();
  private readonly faults = new InjectedFaults<keyof CursorStore>();

  /** The next call of `operation` rejects with `error` and changes nothing. */
  failNext(operation: keyof CursorStore, error: Error): void {
    this.faults.failNext(operation, error);
  }

  async create(cursorId: string, markDeletePosition: Position): Promise<void> {
    await this.faults.enter('create');
    const record = this.record(cursorId);
    if (record.markDeletePosition !== undefined) {
      throw new ConflictError(`Cursor ${cursorId} already exists`);
    }
    record.markDeletePosition = markDeletePosition;
  }

  async load(cursorId: string): Promise<StoredCursor | undefined> {
    await this.faults.enter('load');
    const record = this.cursors.get(cursorId);
    if (record?.markDeletePosition === undefined) return undefined;
    return {
      markDeletePosition: record.markDeletePosition,
      acknowledged: [...record.acknowledged.values()].sort(Position.compare),
    };
  }

  async acknowledge(cursorId: string, positions: readonly Position[]): Promise<void> {
    await this.faults.enter('acknowledge');
    if (positions.length === 0) return;
    const record = this.record(cursorId);
    for (const position of positions) record.acknowledged.set(position.toString(), position);
  }

  async markDelete(cursorId: string, position: Position): Promise<void> {
    await this.faults.enter('markDelete');
    const record = this.cursors.get(cursorId);
    if (record === undefined) return;
    const current = record.markDeletePosition;
    if (current !== undefined && position.compareTo(current) > 0) record.markDeletePosition = position;
    for (const [key, acked] of record.acknowledged) {
      if (acked.compareTo(position) <= 0) record.acknowledged.delete(key);
    }
  }

  async isAcknowledged(cursorId: string, positions: readonly Position[]): Promise<boolean[]> {
    await this.faults.enter('isAcknowledged');
    const record = this.cursors.get(cursorId);
    const markDelete = record?.markDeletePosition;
    if (record === undefined || markDelete === undefined) return positions.map(() => false);
    return positions.map(
      (position) => position.compareTo(markDelete) <= 0 || record.acknowledged.has(position.toString()),
    );
  }

  async deliveryState(
    cursorId: string,
    positions: readonly Position[],
    _options?: DeliveryStateOptions,
  ): Promise<DeliveryState[]> {
    await this.faults.enter('deliveryState');
    const record = this.cursors.get(cursorId);
    const markDelete = record?.markDeletePosition;
    if (record === undefined || markDelete === undefined) {
      return positions.map(() => ({ acknowledged: false, redeliveryCount: 0 }));
    }
    const counts = this.redeliveries.get(cursorId);
    return positions.map((position) =>
      position.compareTo(markDelete) <= 0
        ? { acknowledged: true, redeliveryCount: 0 }
        : {
            acknowledged: record.acknowledged.has(position.toString()),
            redeliveryCount: counts?.get(position.toString()) ?? 0,
          },
    );
  }

  async recordRedelivery(
    cursorId: string,
    redeliveries: readonly { position: Position; count: number }[],
  ): Promise<void> {
    await this.faults.enter('recordRedelivery');
    const counts = this.redeliveries.get(cursorId) ?? new Map<string, number>();
    for (const { position, count } of redeliveries) {
      counts.set(position.toString(), Math.max(count, counts.get(position.toString()) ?? 0));
    }
    this.redeliveries.set(cursorId, counts);
  }

  async delete(cursorId: string): Promise<void> {
    await this.faults.enter('delete');
    this.cursors.delete(cursorId);
    this.redeliveries.delete(cursorId);
  }

  async acquireLease(cursorId: string, holder: string, nowMs: number, untilMs: number): Promise<boolean> {
    await this.faults.enter('acquireLease');
    if (this.cursors.get(cursorId)?.markDeletePosition === undefined) return false;
    const lease = this.leases.get(cursorId);
    if (lease && lease.untilMs >= nowMs && lease.holder !== holder) return false;
    this.leases.set(cursorId, { holder, untilMs });
    return true;
  }

  async releaseLease(cursorId: string, holder: string): Promise<void> {
    await this.faults.enter('releaseLease');
    if (this.leases.get(cursorId)?.holder === holder) this.leases.delete(cursorId);
  }

  private record(cursorId: string): CursorRecord {
    let record = this.cursors.get(cursorId);
    if (record === undefined) {
      record = { acknowledged: new Map() };
      this.cursors.set(cursorId, record);
    }
    return record;
  }
}
