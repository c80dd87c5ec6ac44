import { describe, expect, it } from 'vitest';
import { FOLD_PAGES_PER_STEP, foldStep, ORPHAN_AGE_MS } from '../../../../shared/application/engine/fold.ts';
import { acknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { PageRef } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld } from '../../../support/engine-world.ts';

// Maintenance's fold: mark-delete moves over the acknowledged entries after it, across pages and
// rolled-over ledgers, pages passed become tombstones, and the tracker is kept honest (mutation
// testing, issue 21 criterion 5).

const positions = (ledgerId: number, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => Position.of(ledgerId, from + i));

const headOf = async (w: ReturnType<typeof engineWorld>) => (await w.store.readHead(w.cursor.cursorId))?.head;

const page = (ledgerId: bigint, n: bigint): PageRef => ({ ledgerId, page: n });

describe('foldStep', () => {
  it('does nothing for a cursor that does not exist', async () => {
    const w = engineWorld({ type: 'Shared' });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
  });

  it('moves mark-delete up to the first entry not acknowledged, and no further', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(10);
    await w.subscribe();
    await w.receive('a', 10);
    await acknowledge(w.ctx, w.cursor, [...positions(1, 0, 4), Position.of(1, 6)], { byId: false });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(1, 3),
      entries: 4,
      tombstoned: 0,
    });
    expect((await headOf(w))?.markDelete.toString()).toBe('1:3');
    // Nothing new acknowledged: nothing moves.
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 4), Position.of(1, 5)], { byId: false });
    expect((await foldStep(w.ctx, w.cursor)).markDelete?.toString()).toBe('1:6');
  });

  it('keeps the newest acknowledgement time in the head', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 3);
    w.clock.advance(7_000);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 2), { byId: false });
    await foldStep(w.ctx, w.cursor);
    expect((await headOf(w))?.lastAckedAtMs).toBe(1_007_000);
  });

  it('passes whole pages and rolled-over ledgers, and tombstones the pages it passed', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 150 });
    await w.publish(250);
    await w.subscribe();
    for (let i = 0; i < 5; i++) await w.receive('a', 100);
    await acknowledge(w.ctx, w.cursor, [...positions(1, 0, 150), ...positions(2, 0, 60)], { byId: false });
    const folded = await foldStep(w.ctx, w.cursor);
    expect(folded.markDelete?.toString()).toBe('2:59');
    expect(folded.entries).toBe(210);
    // Ledger 1's two pages (the second one ends the closed ledger) are passed: tombstones.
    expect(folded.tombstoned).toBe(2);
    const [p0, p1, q0] = await w.store.readPages(w.cursor.cursorId, [
      page(1n, 0n),
      page(1n, 1n),
      page(2n, 0n),
    ]);
    expect([p0?.floor, p0?.acked.size, p0?.runs]).toEqual([99, 0, []]);
    expect([p1?.floor, p1?.acked.size]).toEqual([99, 0]);
    expect(q0?.floor).toBeUndefined();
    // Tombstones are not written again.
    await acknowledge(w.ctx, w.cursor, [Position.of(2, 60)], { byId: false });
    expect((await foldStep(w.ctx, w.cursor)).tombstoned).toBe(0);
  });

  it('stops at the end of an open ledger’s partial page, and goes on when it fills up', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(50);
    await w.subscribe();
    await w.receive('a', 50);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 50), { byId: false });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(1, 49),
      entries: 50,
      tombstoned: 0,
    });
    await w.publish(60);
    await w.receive('a', 60);
    await acknowledge(w.ctx, w.cursor, positions(1, 50, 110), { byId: false });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(1, 109),
      entries: 60,
      tombstoned: 1,
    });
  });

  it(`walks at most ${FOLD_PAGES_PER_STEP} pages a step`, async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 1_000_000 });
    const count = (FOLD_PAGES_PER_STEP + 1) * 100;
    await w.publish(count);
    await w.subscribe();
    for (let i = 0; i < FOLD_PAGES_PER_STEP + 1; i++) await w.receive('a', 100);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, count), { byId: false });
    expect((await foldStep(w.ctx, w.cursor)).markDelete?.toString()).toBe(
      `1:${FOLD_PAGES_PER_STEP * 100 - 1}`,
    );
    expect((await foldStep(w.ctx, w.cursor)).markDelete?.toString()).toBe(`1:${count - 1}`);
  });

  it('sweeps a tracker entry long past due that no write ever made true, and keeps due ones', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 1, { ackTimeoutMs: 1_000 });
    // An entry whose write never came: nothing was handed out at 1:2 with that count.
    await w.store.putTracker(w.cursor.cursorId, [
      { dueAtMs: w.clock.nowMs(), position: Position.of(1, 2), deliveries: 4, n: 1 },
    ]);
    w.clock.advance(ORPHAN_AGE_MS - 1);
    await foldStep(w.ctx, w.cursor);
    const dueAll = () => w.store.dueTracker(w.cursor.cursorId, Number.MAX_SAFE_INTEGER, 100);
    expect((await dueAll()).map((e) => e.position.toString()).sort()).toEqual(['1:0', '1:2']);
    w.clock.advance(1_001);
    await foldStep(w.ctx, w.cursor);
    // The orphan goes; the ack timeout of 1:0 is due, not orphaned: it stays.
    expect((await dueAll()).map((e) => e.position.toString())).toEqual(['1:0']);
  });

  it('lowers the head’s tracker due time when the tracker holds an earlier entry', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2, { ackTimeoutMs: 30_000 });
    const record = await w.store.readHead(w.cursor.cursorId);
    const due = record?.head.trackerDueAtMs as number;
    expect(due).toBe(1_030_000);
    // A lost update: the head says later than the tracker.
    await w.store.casHead(w.cursor.cursorId, record?.version as number, {
      ...record!.head,
      trackerDueAtMs: due + 50_000,
    });
    await foldStep(w.ctx, w.cursor);
    expect((await headOf(w))?.trackerDueAtMs).toBe(due);
    // A head already early enough stays as it is.
    const before = (await w.store.readHead(w.cursor.cursorId))?.version;
    await foldStep(w.ctx, w.cursor);
    expect((await w.store.readHead(w.cursor.cursorId))?.version).toBe(before);
  });
});
