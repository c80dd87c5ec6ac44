import { markDeleteTo } from '../../domain/dispatch-head.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { nextInLedger, Position } from '../../domain/position.ts';
import type { CursorStore, DeliveryState, StoredCursor } from '../../ports/cursor-store.ts';
import { DISPATCH_PAGE_SIZE } from '../../ports/dispatch-store.ts';
import { windowPages } from './cursor-window.ts';
import type { EngineContext, PartitionCursor } from './engine-context.ts';
import { acknowledge } from './pending-acks.ts';
import { isAcknowledged, readPagesOf } from './pending-state.ts';
import { createSubscriptionCursor } from './subscription-cursor.ts';

/** Pages `load` reads at most (1,000,000 entries after mark-delete). */
const LOAD_PAGES = 10_000;

/**
 * The cursor as the admin paths see it (Pulsar's ManagedCursor: mark-delete plus individually
 * acknowledged entries), read from and written to the delivery engine's items, so admin calls and
 * dispatch share one truth. Acknowledgements go through the engine's by-id path (the early-ack mark
 * keeps dispatch from handing them out); moving mark-delete is a compare-and-set of the head.
 * Cursors are addressed by id; the view resolves the partition through `partitionOf`.
 */
export class EngineCursorView implements CursorStore {
  constructor(private readonly ctx: EngineContext) {}

  /**
   * The cursor as the engine addresses it. Only the id and the partition matter to what the view
   * does; the partition is the owner of mark-delete's ledger (ledgerIds name one partition).
   */
  private async cursor(cursorId: string, markDelete: Position): Promise<PartitionCursor> {
    const partition = await this.ctx.ledger.ownerOf(markDelete.ledgerId);
    if (!partition) throw new NotFoundError(`Cursor ${cursorId} not found`);
    // Stryker disable next-line StringLiteral: equivalent, the view's paths (the window's pages) read no subscription type
    return { partition, cursorId, type: 'Shared' };
  }

  async create(cursorId: string, markDeletePosition: Position): Promise<void> {
    await createSubscriptionCursor(this.ctx, { cursorId } as PartitionCursor, markDeletePosition);
  }

  /** Cost: the head, the ledger layout and one read per page from mark-delete's page on. */
  async load(cursorId: string): Promise<StoredCursor | undefined> {
    const record = await this.ctx.store.readHead(cursorId);
    if (!record) return undefined;
    const cursor = await this.cursor(cursorId, record.head.markDelete);
    const start = nextInLedger(record.head.markDelete);
    const pages = await windowPages(this.ctx, cursor, start, LOAD_PAGES);
    const states = await this.ctx.store.readPages(cursorId, pages);
    const acknowledged: Position[] = [];
    for (const page of states) {
      const base = page.page * DISPATCH_PAGE_SIZE;
      const offsets = new Set(page.acked);
      for (let o = 0; o <= (page.floor ?? -1); o++) offsets.add(o);
      for (const offset of [...offsets].sort((a, b) => a - b)) {
        acknowledged.push(Position.of(page.ledgerId, base + BigInt(offset)));
      }
    }
    return { markDeletePosition: record.head.markDelete, acknowledged };
  }

  async acknowledge(cursorId: string, positions: readonly Position[]): Promise<void> {
    await acknowledge(this.ctx, { cursorId } as PartitionCursor, positions, { byId: true });
  }

  async markDelete(cursorId: string, position: Position): Promise<void> {
    for (let attempt = 0; attempt < this.ctx.limits.casAttempts; attempt++) {
      const record = await this.ctx.store.readHead(cursorId);
      if (!record || position.compareTo(record.head.markDelete) <= 0) return;
      if ((await this.ctx.store.casHead(cursorId, record.version, markDeleteTo(record.head, position))).ok)
        return;
    }
  }

  async isAcknowledged(cursorId: string, positions: readonly Position[]): Promise<boolean[]> {
    const record = await this.ctx.store.readHead(cursorId);
    if (!record) return positions.map(() => false);
    const pages = await readPagesOf(this.ctx.store, cursorId, positions);
    return positions.map((position) => isAcknowledged(record.head, pages, position));
  }

  async deliveryState(cursorId: string, positions: readonly Position[]): Promise<DeliveryState[]> {
    const acked = await this.isAcknowledged(cursorId, positions);
    return acked.map((acknowledged) => ({ acknowledged, redeliveryCount: 0 }));
  }

  async recordRedelivery(): Promise<void> {
    // Redelivery counts live in the engine's delivery runs.
  }

  async delete(cursorId: string): Promise<void> {
    await this.ctx.store.deleteCursor(cursorId);
  }

  async acquireLease(cursorId: string, holder: string, nowMs: number, untilMs: number): Promise<boolean> {
    const record = await this.ctx.store.readHead(cursorId);
    if (!record) return false;
    const lease = record.head.lease;
    if (lease && lease.untilMs >= nowMs && lease.holder !== holder) return false;
    return (
      await this.ctx.store.casHead(cursorId, record.version, { ...record.head, lease: { holder, untilMs } })
    ).ok;
  }

  async releaseLease(cursorId: string, holder: string): Promise<void> {
    for (let attempt = 0; attempt < this.ctx.limits.casAttempts; attempt++) {
      const record = await this.ctx.store.readHead(cursorId);
      if (!record || record.head.lease?.holder !== holder) return;
      const { lease: _released, ...head } = record.head;
      if ((await this.ctx.store.casHead(cursorId, record.version, head)).ok) return;
    }
  }
}
