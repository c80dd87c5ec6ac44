import { describe, expect, it } from 'vitest';
import {
  isAcknowledged,
  locateRun,
  lowerTrackerDue,
  offsetAcknowledged,
  pageKey,
  pageOf,
  readPagesOf,
  runPagesOf,
  spillIfFull,
  withRunsReplaced,
  writeRuns,
} from '../../../../shared/application/engine/pending-state.ts';
import type { DeliveryRun } from '../../../../shared/domain/delivery-run.ts';
import { type DispatchHead, newDispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { HeadRecord, PageState } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, RacedStore } from '../../../support/engine-world.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';

// Pulsar's pendingAcks read from the runs of the head and the pages (mutation testing, issue 21
// criterion 5): which page a position lives in, what counts as acknowledged, where a run lives,
// and the writes that move runs.

const held = (ledgerId: number, entryId: number, n: number, deliveries = 1): DeliveryRun => ({
  ledgerId: BigInt(ledgerId),
  entryId: BigInt(entryId),
  n,
  deliveries,
  state: { kind: 'held', consumerId: 'a', deliveredAtMs: 1 },
});

const pageState = (ledgerId: number, page: number, extra: Partial<PageState> = {}): PageState => ({
  ledgerId: BigInt(ledgerId),
  page: BigInt(page),
  acked: new Set(),
  runs: [],
  version: 1,
  ...extra,
});

const pagesOf = (...states: PageState[]) => new Map(states.map((state) => [pageKey(state), state]));

const head = (extra: Partial<DispatchHead> = {}): DispatchHead => ({
  ...newDispatchHead(Position.of(1, 9), Position.of(1, 500)),
  ...extra,
});

const runIds = (runs: readonly DeliveryRun[]) => runs.map((run) => `${run.ledgerId}:${run.entryId}+${run.n}`);

describe('pages and acknowledgements', () => {
  it('places a position in its ledger’s page of 100 entries', () => {
    expect(pageOf(Position.of(3, 99))).toEqual({ ledgerId: 3n, page: 0n });
    expect(pageOf(Position.of(3, 100))).toEqual({ ledgerId: 3n, page: 1n });
    expect(pageKey({ ledgerId: 3n, page: 1n })).toBe('3#1');
  });

  it('names the page of a run’s position and the one before, where a run reaching into it may start', () => {
    expect(runPagesOf(Position.of(1, 99)).map(String)).toEqual(['1:99']);
    expect(runPagesOf(Position.of(1, 100)).map(String)).toEqual(['1:100', '1:0']);
    expect(runPagesOf(Position.of(1, 250)).map(String)).toEqual(['1:250', '1:150']);
  });

  it('reads each missing page once, and none it already knows', async () => {
    const store = new InMemoryDispatchStore();
    const known = pagesOf(pageState(1, 0));
    const before = store.usage.reads;
    const pages = await readPagesOf(
      store,
      'c1',
      [Position.of(1, 5), Position.of(1, 105), Position.of(1, 150), Position.of(2, 0)],
      known,
    );
    expect(store.usage.reads - before).toBe(2);
    expect([...pages.keys()].sort()).toEqual(['1#0', '1#1', '2#0']);
    // The known page is the one given, not one read again.
    expect(pages.get('1#0')).toBe(known.get('1#0'));
    const none = store.usage.reads;
    await readPagesOf(store, 'c1', [Position.of(1, 5)], known);
    expect(store.usage.reads).toBe(none);
  });

  it('counts as acknowledged what is at or before mark-delete, under a floor, or in the acks', () => {
    const pages = pagesOf(pageState(1, 0, { acked: new Set([20]) }), pageState(1, 1, { floor: 49 }));
    const h = head();
    expect(isAcknowledged(h, pages, Position.of(1, 9))).toBe(true);
    expect(isAcknowledged(h, pages, Position.of(1, 10))).toBe(false);
    expect(isAcknowledged(h, pages, Position.of(1, 20))).toBe(true);
    expect(isAcknowledged(h, pages, Position.of(1, 149))).toBe(true);
    expect(isAcknowledged(h, pages, Position.of(1, 150))).toBe(false);
    // A page not read: nothing known acknowledged there.
    expect(isAcknowledged(h, pages, Position.of(1, 250))).toBe(false);
    expect(isAcknowledged(h, pages, Position.of(0, 500))).toBe(true);
  });

  it('reads a floor of -1 (a reset cleared the page) as nothing acknowledged', () => {
    const cleared = pageState(1, 0, { floor: -1 });
    expect(offsetAcknowledged(cleared, 0)).toBe(false);
    expect(offsetAcknowledged(pageState(1, 0), 0)).toBe(false);
    expect(offsetAcknowledged(pageState(1, 0, { floor: 0 }), 0)).toBe(true);
    expect(offsetAcknowledged(pageState(1, 0, { floor: 0 }), 1)).toBe(false);
    expect(offsetAcknowledged(pageState(1, 0, { acked: new Set([1]) }), 1)).toBe(true);
  });
});

describe('locateRun', () => {
  it('finds nothing at or after the read position, even where a run says otherwise', () => {
    const h = head({ readPosition: Position.of(1, 20), runs: [held(1, 15, 10)] });
    expect(locateRun(h, new Map(), Position.of(1, 19))?.home).toEqual({ kind: 'head' });
    expect(locateRun(h, new Map(), Position.of(1, 20))).toBeUndefined();
  });

  it('prefers the head’s run, else the page’s own, else a run of the page before reaching into it', () => {
    const inPage0 = held(1, 95, 10, 2);
    const inPage1 = held(1, 120, 5, 3);
    const pages = pagesOf(pageState(1, 0, { runs: [inPage0] }), pageState(1, 1, { runs: [inPage1] }));
    const h = head({ runs: [held(1, 122, 1, 7)] });
    expect(locateRun(h, pages, Position.of(1, 122))?.run.deliveries).toBe(7);
    const own = locateRun(h, pages, Position.of(1, 121));
    expect([own?.run, own?.home.kind === 'page' && own.home.page.page]).toEqual([inPage1, 1n]);
    const before = locateRun(h, pages, Position.of(1, 104));
    expect([before?.run, before?.home.kind === 'page' && before.home.page.page]).toEqual([inPage0, 0n]);
    expect(locateRun(h, pages, Position.of(1, 105))).toBeUndefined();
    expect(locateRun(h, pages, Position.of(1, 50))).toBeUndefined();
  });

  it('looks for a run of page 0 in page 0 only, and of another ledger nowhere', () => {
    const pages = pagesOf(pageState(1, 0, { runs: [held(1, 10, 5)] }), pageState(2, 0, { runs: [] }));
    expect(locateRun(head(), pages, Position.of(1, 12))?.home.kind).toBe('page');
    expect(locateRun(head(), pages, Position.of(2, 12))).toBeUndefined();
    // A run in page 1 never covers a position of page 0.
    const later = pagesOf(pageState(1, 0), pageState(1, 1, { runs: [held(1, 100, 5)] }));
    expect(locateRun(head(), later, Position.of(1, 12))).toBeUndefined();
  });
});

describe('withRunsReplaced', () => {
  it('takes out the runs equal by value, puts the new ones in, and orders them by position', () => {
    const a = held(1, 0, 2);
    const b = held(1, 10, 2);
    const c = held(1, 20, 2);
    const runs = withRunsReplaced([a, c], [{ ...c }], [b, held(1, 5, 1)]);
    expect(runIds(runs)).toEqual(['1:0+2', '1:5+1', '1:10+2']);
    // Same place, another count or state: another run, kept.
    expect(runIds(withRunsReplaced([a], [{ ...a, deliveries: 2 }], []))).toEqual(['1:0+2']);
    expect(runIds(withRunsReplaced([a], [{ ...a, state: { kind: 'released', dueAtMs: 1 } }], []))).toEqual([
      '1:0+2',
    ]);
  });
});

describe('writeRuns', () => {
  async function headRecord(store: InMemoryDispatchStore, runs: DeliveryRun[]): Promise<HeadRecord> {
    await store.createHead('c1', head({ runs }));
    return (await store.readHead('c1')) as HeadRecord;
  }

  it('replaces runs in the head with the head’s other changes, in one write', async () => {
    const store = new InMemoryDispatchStore();
    const record = await headRecord(store, [held(1, 10, 2), held(1, 20, 2)]);
    const ok = await writeRuns(store, 'c1', {
      record,
      home: { kind: 'head' },
      replaced: [held(1, 10, 2)],
      by: [held(1, 10, 2, 2)],
      headChanges: { trackerDueAtMs: 5 },
    });
    expect(ok).toBe(true);
    const after = (await store.readHead('c1'))?.head;
    expect(after?.runs.map((run) => run.deliveries)).toEqual([2, 1]);
    expect(after?.trackerDueAtMs).toBe(5);
  });

  it('writes nothing when a run to replace is no longer there, or the head changed', async () => {
    const store = new InMemoryDispatchStore();
    const record = await headRecord(store, [held(1, 10, 2)]);
    const write = { record, home: { kind: 'head' } as const, replaced: [held(1, 30, 2)], by: [] };
    expect(await writeRuns(store, 'c1', write)).toBe(false);
    expect((await store.readHead('c1'))?.version).toBe(record.version);
    await store.casHead('c1', record.version, record.head);
    expect(await writeRuns(store, 'c1', { ...write, replaced: [held(1, 10, 2)] })).toBe(false);
    expect((await store.readHead('c1'))?.head.runs).toHaveLength(1);
  });

  it('replaces runs in their page, leaving the head alone', async () => {
    const store = new InMemoryDispatchStore();
    const record = await headRecord(store, []);
    await store.casPage('c1', { ledgerId: 1n, page: 0n }, 0, { runs: [held(1, 10, 2)] });
    const [page] = await store.readPages('c1', [{ ledgerId: 1n, page: 0n }]);
    const write = {
      record,
      home: { kind: 'page', page: page as PageState } as const,
      by: [held(1, 10, 2, 5)],
    };
    expect(await writeRuns(store, 'c1', { ...write, replaced: [held(1, 11, 2)] })).toBe(false);
    expect(await writeRuns(store, 'c1', { ...write, replaced: [held(1, 10, 2)] })).toBe(true);
    const [after] = await store.readPages('c1', [{ ledgerId: 1n, page: 0n }]);
    expect(after?.runs.map((run) => run.deliveries)).toEqual([5]);
    expect((await store.readHead('c1'))?.version).toBe(record.version);
    // The page changed since: nothing written.
    expect(await writeRuns(store, 'c1', { ...write, replaced: [held(1, 10, 2)] })).toBe(false);
  });
});

describe('spillIfFull', () => {
  async function withHead(store: InMemoryDispatchStore, runs: DeliveryRun[]): Promise<HeadRecord> {
    await store.createHead('c1', head({ runs }));
    return (await store.readHead('c1')) as HeadRecord;
  }
  const pageRuns = async (store: InMemoryDispatchStore, page: number) =>
    runIds((await store.readPages('c1', [{ ledgerId: 1n, page: BigInt(page) }]))[0]?.runs ?? []);

  it('leaves a head at its bound alone', async () => {
    const store = new InMemoryDispatchStore();
    const record = await withHead(store, [held(1, 10, 1), held(1, 20, 1)]);
    await spillIfFull(store, 'c1', record, 2);
    expect((await store.readHead('c1'))?.version).toBe(record.version);
  });

  it('moves the oldest page’s runs to that page, replacing the page’s overlapping copies, until under the bound', async () => {
    const store = new InMemoryDispatchStore();
    // Page 0 already holds an older copy of 1:10 and a run of its own that does not overlap.
    await store.casPage('c1', { ledgerId: 1n, page: 0n }, 0, { runs: [held(1, 0, 5), held(1, 10, 3)] });
    const record = await withHead(store, [
      held(1, 10, 3, 2),
      held(1, 95, 10),
      held(1, 150, 1),
      held(1, 250, 1),
      held(1, 350, 1),
    ]);
    await spillIfFull(store, 'c1', record, 2);
    expect(await pageRuns(store, 0)).toEqual(['1:0+5', '1:10+3', '1:95+10']);
    const page0 = (await store.readPages('c1', [{ ledgerId: 1n, page: 0n }]))[0];
    expect(page0?.runs[1]?.deliveries).toBe(2);
    expect(await pageRuns(store, 1)).toEqual(['1:150+1']);
    expect(runIds((await store.readHead('c1'))?.head.runs ?? [])).toEqual(['1:250+1', '1:350+1']);
  });

  it('moves at most 4 pages a call', async () => {
    const store = new InMemoryDispatchStore();
    const runs = Array.from({ length: 6 }, (_, i) => held(1, i * 100, 1));
    await spillIfFull(store, 'c1', await withHead(store, runs), 0);
    expect(runIds((await store.readHead('c1'))?.head.runs ?? [])).toEqual(['1:400+1', '1:500+1']);
  });

  it('keeps a run of the page that ends where the moved one starts, and one of another ledger', async () => {
    const store = new InMemoryDispatchStore();
    await store.casPage('c1', { ledgerId: 1n, page: 0n }, 0, { runs: [held(1, 0, 10), held(1, 20, 5)] });
    await spillIfFull(store, 'c1', await withHead(store, [held(1, 10, 10), held(2, 0, 1)]), 1);
    expect(await pageRuns(store, 0)).toEqual(['1:0+10', '1:10+10', '1:20+5']);
  });

  it('stops at a lost page or head write: both copies stay, the head’s wins', async () => {
    const store = new RacedStore();
    const runs = [held(1, 10, 1), held(1, 150, 1), held(1, 250, 1)];
    store.lose.page = 1;
    await spillIfFull(store, 'c1', await withHead(store, runs), 1);
    expect(await pageRuns(store, 0)).toEqual([]);
    expect(runIds((await store.readHead('c1'))?.head.runs ?? [])).toHaveLength(3);
    store.lose.head = 1;
    await spillIfFull(store, 'c1', (await store.readHead('c1')) as HeadRecord, 1);
    expect(await pageRuns(store, 0)).toEqual(['1:10+1']);
    expect(await pageRuns(store, 1)).toEqual([]);
    expect(runIds((await store.readHead('c1'))?.head.runs ?? [])).toHaveLength(3);
  });
});

describe('lowerTrackerDue', () => {
  it('lowers a later or missing due time, and leaves an earlier or equal one', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(1);
    await w.subscribe();
    const due = async () => (await w.store.readHead('c1'))?.head.trackerDueAtMs;
    await lowerTrackerDue(w.ctx, w.cursor, 5_000);
    expect(await due()).toBe(5_000);
    await lowerTrackerDue(w.ctx, w.cursor, 6_000);
    expect(await due()).toBe(5_000);
    const version = (await w.store.readHead('c1'))?.version;
    await lowerTrackerDue(w.ctx, w.cursor, 5_000);
    expect((await w.store.readHead('c1'))?.version).toBe(version);
    await lowerTrackerDue(w.ctx, w.cursor, 4_000);
    expect(await due()).toBe(4_000);
  });

  it('tries casAttempts times under contention, and does nothing for a deleted cursor', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store, limits: { casAttempts: 2 } });
    await w.publish(1);
    await w.subscribe();
    store.lose.head = 2;
    await lowerTrackerDue(w.ctx, w.cursor, 5_000);
    expect((await store.readHead('c1'))?.head.trackerDueAtMs).toBeUndefined();
    store.lose.head = 1;
    await lowerTrackerDue(w.ctx, w.cursor, 5_000);
    expect((await store.readHead('c1'))?.head.trackerDueAtMs).toBe(5_000);
    await expect(lowerTrackerDue(w.ctx, { ...w.cursor, cursorId: 'gone' }, 1)).resolves.toBeUndefined();
  });
});
