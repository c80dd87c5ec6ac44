import { describe, expect, it } from 'vitest';
import { FOLD_PAGES_PER_STEP, foldStep, ORPHAN_AGE_MS } from '../../../../shared/application/engine/fold.ts';
import { acknowledge } from '../../../../shared/application/engine/pending-acks.ts';
import { RESET_TIMEOUT_MS, resetCursor } from '../../../../shared/application/engine/reset-cursor.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { PageRef } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, idsOf, RacedStore } from '../../../support/engine-world.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';

// Maintenance's fold: mark-delete moves over the acknowledged entries after it, across pages and
// rolled-over ledgers, pages passed become tombstones, and the tracker is kept honest (mutation
// testing, issue 21 criterion 5).

const positions = (ledgerId: number, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => Position.of(ledgerId, from + i));

const headOf = async (w: ReturnType<typeof engineWorld>) => (await w.store.readHead(w.cursor.cursorId))?.head;

const page = (ledgerId: bigint, n: bigint): PageRef => ({ ledgerId, page: n });

/** A store that runs `before` once, just before its next head write (a racing writer), and counts head reads. */
class HookedStore extends InMemoryDispatchStore {
  before: (() => Promise<void>) | undefined;
  headReads = 0;
  /** Makes the head read after this many more reads answer nothing (the cursor deleted meanwhile). */
  goneAfter = Number.POSITIVE_INFINITY;

  override async readHead(...args: Parameters<InMemoryDispatchStore['readHead']>) {
    this.headReads++;
    if (this.goneAfter-- <= 0) return undefined;
    return super.readHead(...args);
  }

  override async casHead(...args: Parameters<InMemoryDispatchStore['casHead']>) {
    const before = this.before;
    this.before = undefined;
    if (before) await before();
    return super.casHead(...args);
  }
}

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

  it('waits while a reset is under way, and finishes a reset whose resetter died', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(5);
    await w.subscribe();
    await w.receive('a', 5);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 5), { byId: false });
    const record = await w.store.readHead(w.cursor.cursorId);
    // Step 1 of a reset to 1:0 done, its resetter still at work (or dead).
    await w.store.casHead(w.cursor.cursorId, record?.version as number, {
      ...record!.head,
      readPosition: Position.of(1, 0),
      runs: [],
      resetting: { end: Position.of(1, 5), untilMs: w.clock.nowMs() + RESET_TIMEOUT_MS },
    });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
    expect((await headOf(w))?.resetting).toBeDefined();
    w.clock.advance(RESET_TIMEOUT_MS);
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
    const head = await headOf(w);
    expect(head?.resetting).toBeUndefined();
    expect(head?.markDelete.toString()).toBe('1:-1');
    // The reset cleared the acknowledgements: everything is handed out again.
    expect(idsOf(await w.receive('b', 10))).toEqual(positions(1, 0, 5).map(String));
  });

  it('never moves mark-delete over acknowledgements a reset cleared after the fold read them', async () => {
    const store = new HookedStore();
    const w = engineWorld({ type: 'Shared', store });
    await w.publish(10);
    await w.subscribe();
    await w.receive('a', 10);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 10), { byId: false });
    store.before = async () => {
      await resetCursor(w.ctx, w.cursor, Position.of(1, 0));
    };
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
    expect((await headOf(w))?.markDelete.toString()).toBe('1:-1');
    expect(idsOf(await w.receive('b', 20))).toEqual(positions(1, 0, 10).map(String));
  });

  it('never moves mark-delete while a reset that started after the fold read the head is under way', async () => {
    const store = new HookedStore();
    const w = engineWorld({ type: 'Shared', store });
    await w.publish(10);
    await w.subscribe();
    await w.receive('a', 10);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 10), { byId: false });
    store.before = async () => {
      // A reset to 1:10 (forward, so the read position does not go back), its resetter at work.
      const record = await store.readHead(w.cursor.cursorId);
      await store.casHead(w.cursor.cursorId, record?.version as number, {
        ...record!.head,
        resetting: { end: Position.of(1, 10), untilMs: w.clock.nowMs() + RESET_TIMEOUT_MS },
      });
    };
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
    expect((await headOf(w))?.markDelete.toString()).toBe('1:-1');
  });

  it('writes the head again when another writer changed it meanwhile, and gives up after casAttempts', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store, limits: { casAttempts: 3 } });
    await w.publish(10);
    await w.subscribe();
    await w.receive('a', 10);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 4), { byId: false });
    store.lose.head = 3;
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
    expect((await headOf(w))?.markDelete.toString()).toBe('1:-1');
    store.lose.head = 2;
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(1, 3),
      entries: 4,
      tombstoned: 0,
    });
    expect((await headOf(w))?.markDelete.toString()).toBe('1:3');
  });

  it('tombstones a page only once its head write went through', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store, limits: { casAttempts: 2 } });
    await w.publish(100);
    await w.subscribe();
    await w.receive('a', 100);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 100), { byId: false });
    store.lose.head = 2;
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
    const [p0] = await w.store.readPages(w.cursor.cursorId, [page(1n, 0n)]);
    expect([p0?.floor, p0?.acked.size]).toEqual([undefined, 100]);
    store.lose.head = 1;
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(1, 99),
      entries: 100,
      tombstoned: 1,
    });
  });

  it('tombstones a full page when mark-delete stops on its last entry', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(150);
    await w.subscribe();
    await w.receive('a', 100);
    await w.receive('a', 50);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 100), { byId: false });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(1, 99),
      entries: 100,
      tombstoned: 1,
    });
    const [p0, p1] = await w.store.readPages(w.cursor.cursorId, [page(1n, 0n), page(1n, 1n)]);
    expect([p0?.floor, p0?.acked.size]).toEqual([99, 0]);
    expect(p1?.floor).toBeUndefined();
  });

  it('tombstones the last page of a closed ledger when mark-delete stops on the ledger’s last entry', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 150 });
    await w.publish(200);
    await w.subscribe();
    for (let i = 0; i < 2; i++) await w.receive('a', 100);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 150), { byId: false });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(1, 149),
      entries: 150,
      tombstoned: 2,
    });
    const [p1] = await w.store.readPages(w.cursor.cursorId, [page(1n, 1n)]);
    expect([p1?.floor, p1?.acked.size]).toEqual([99, 0]);
    // The next fold walks that page again (mark-delete is on its last entry): a tombstone already.
    await acknowledge(w.ctx, w.cursor, positions(2, 0, 10), { byId: false });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(2, 9),
      entries: 10,
      tombstoned: 0,
    });
  });

  it('honours a page’s floor as acknowledging every offset at or below it, and rewrites a tombstone that holds runs', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(250);
    await w.subscribe();
    for (let i = 0; i < 3; i++) await w.receive('a', 100);
    const [p0, p1] = await w.store.readPages(w.cursor.cursorId, [page(1n, 0n), page(1n, 1n)]);
    // Page 0: a tombstone that still names a run; page 1: a floor at offset 49 and nothing in its acks.
    await w.store.casPage(w.cursor.cursorId, page(1n, 0n), p0?.version as number, {
      runs: [{ ledgerId: 1n, entryId: 0n, n: 1, deliveries: 1, state: { kind: 'released', dueAtMs: 0 } }],
      floor: 99,
    });
    await w.store.casPage(w.cursor.cursorId, page(1n, 1n), p1?.version as number, {
      runs: p1?.runs ?? [],
      floor: 49,
    });
    expect(await foldStep(w.ctx, w.cursor)).toEqual({
      markDelete: Position.of(1, 149),
      entries: 150,
      tombstoned: 1,
    });
    const [after] = await w.store.readPages(w.cursor.cursorId, [page(1n, 0n)]);
    expect(after?.runs).toEqual([]);
  });

  it('takes the newest acknowledgement time of the pages it passed and of the one it stopped in, not of later ones', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(300);
    await w.subscribe();
    for (let i = 0; i < 3; i++) await w.receive('a', 100);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 100), { byId: false });
    w.clock.advance(1_000);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 100)], { byId: false });
    w.clock.advance(1_000);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 200)], { byId: false });
    expect((await foldStep(w.ctx, w.cursor)).markDelete?.toString()).toBe('1:100');
    expect((await headOf(w))?.lastAckedAtMs).toBe(1_001_000);
  });

  it('takes the stop page’s acknowledgement time when it is the newest, and sets none when no page has one', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(200);
    await w.subscribe();
    for (let i = 0; i < 2; i++) await w.receive('a', 100);
    // Acknowledged without a time (as first-deliveries does for entries it abandons).
    await w.store.acknowledge(w.cursor.cursorId, positions(1, 0, 100));
    await foldStep(w.ctx, w.cursor);
    expect((await headOf(w))?.markDelete.toString()).toBe('1:99');
    expect((await headOf(w))?.lastAckedAtMs).toBeUndefined();
    w.clock.advance(5_000);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 150)], { byId: false });
    await w.store.acknowledge(w.cursor.cursorId, [Position.of(1, 100)]);
    expect((await foldStep(w.ctx, w.cursor)).markDelete?.toString()).toBe('1:100');
    expect((await headOf(w))?.lastAckedAtMs).toBe(1_005_000);
  });

  it('reads the head once and writes nothing when there is nothing to fold, sweep or repair', async () => {
    const store = new HookedStore();
    const w = engineWorld({ type: 'Shared', store });
    await w.publish(3);
    await w.subscribe();
    await w.receive('a', 3);
    const version = (await w.store.readHead(w.cursor.cursorId))?.version;
    store.headReads = 0;
    expect(await foldStep(w.ctx, w.cursor)).toEqual({ entries: 0, tombstoned: 0 });
    expect(store.headReads).toBe(1);
    expect((await w.store.readHead(w.cursor.cursorId))?.version).toBe(version);
  });

  it('keeps a tracker entry long past due while any of its entries is still due, and sweeps one all acknowledged across pages', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(201);
    await w.subscribe();
    await w.receive('a', 99);
    // One run 1:99..1:198, with its ack timeout, spanning pages 0 and 1; another of 2 entries.
    await w.receive('b', 100, { ackTimeoutMs: 1_000 });
    await w.receive('c', 2, { ackTimeoutMs: 1_000 });
    await acknowledge(w.ctx, w.cursor, [...positions(1, 99, 199), Position.of(1, 199)], { byId: false });
    w.clock.advance(ORPHAN_AGE_MS + 1_000);
    await foldStep(w.ctx, w.cursor);
    const left = await w.store.dueTracker(w.cursor.cursorId, Number.MAX_SAFE_INTEGER, 100);
    expect(left.map((e) => `${e.position.toString()}+${e.n}`)).toEqual(['1:199+2']);
  });

  it('does not fail when the subscription is deleted while the fold sweeps or repairs', async () => {
    for (const goneAfter of [1, 2]) {
      const store = new HookedStore();
      const w = engineWorld({ type: 'Shared', store });
      await w.publish(2);
      await w.subscribe();
      await w.receive('a', 2, { ackTimeoutMs: 1_000 });
      w.clock.advance(ORPHAN_AGE_MS + 1_000);
      // Reads: the fold's own (1), the sweep's (2), the repair's (3).
      store.goneAfter = goneAfter;
      await expect(foldStep(w.ctx, w.cursor)).resolves.toEqual({ entries: 0, tombstoned: 0 });
    }
  });

  it('gives up lowering the head’s tracker due time after casAttempts lost writes', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store, limits: { casAttempts: 2 } });
    await w.publish(2);
    await w.subscribe();
    await w.receive('a', 2, { ackTimeoutMs: 30_000 });
    const record = await w.store.readHead(w.cursor.cursorId);
    await w.store.casHead(w.cursor.cursorId, record?.version as number, {
      ...record!.head,
      trackerDueAtMs: 1_090_000,
    });
    store.lose.head = 2;
    await foldStep(w.ctx, w.cursor);
    expect((await headOf(w))?.trackerDueAtMs).toBe(1_090_000);
    store.lose.head = 1;
    await foldStep(w.ctx, w.cursor);
    expect((await headOf(w))?.trackerDueAtMs).toBe(1_030_000);
  });
});
