import { describe, expect, it } from 'vitest';
import type { EngineContext } from '../../../../shared/application/engine/engine-context.ts';
import { acknowledge, isPositionAcknowledged } from '../../../../shared/application/engine/pending-acks.ts';
import {
  finishReset,
  MAX_RESET_PAGES,
  markDeleteForward,
  RESET_TIMEOUT_MS,
  resetCursor,
} from '../../../../shared/application/engine/reset-cursor.ts';
import type { DeliveryRun } from '../../../../shared/domain/delivery-run.ts';
import { NotFoundError } from '../../../../shared/domain/errors.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { PageRef } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld, idsOf, RacedStore } from '../../../support/engine-world.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';

// Reset cursor and mark-delete forward on the delivery engine (mutation testing, issue 21
// criterion 5): where a reset's page clearing ends, what it rewrites, and its contention paths.

const positions = (ledgerId: number, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => Position.of(ledgerId, from + i));

const page = (ledgerId: bigint, n: bigint): PageRef => ({ ledgerId, page: n });

const run = (entryId: number, n: number): DeliveryRun => ({
  ledgerId: 1n,
  entryId: BigInt(entryId),
  n,
  deliveries: 1,
  state: { kind: 'held', consumerId: 'a', deliveredAtMs: 1 },
});

/** A store whose page writes fail: a resetter that dies right after its first head write. */
class DyingStore extends InMemoryDispatchStore {
  dying = false;
  override async casPage(...args: Parameters<InMemoryDispatchStore['casPage']>) {
    if (this.dying) throw new Error('the resetter died');
    return super.casPage(...args);
  }

  override async dueTracker(...args: Parameters<InMemoryDispatchStore['dueTracker']>) {
    if (this.dying) throw new Error('the resetter died');
    return super.dueTracker(...args);
  }
}

async function world(options: { readonly store?: InMemoryDispatchStore; casAttempts?: number } = {}) {
  const w = engineWorld({
    type: 'Shared',
    ...(options.store ? { store: options.store } : {}),
    ...(options.casAttempts ? { limits: { casAttempts: options.casAttempts } } : {}),
  });
  return w;
}

const headOf = async (w: Awaited<ReturnType<typeof world>>) => (await w.store.readHead('c1'))?.head;

describe('resetCursor', () => {
  it('clears an early acknowledgement at the old read position when the read position starts a page', async () => {
    const w = await world();
    await w.publish(150);
    await w.subscribe();
    await w.receive('a', 100);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 100)], { byId: true });
    expect((await w.store.readHead('c1'))?.aheadAck?.toString()).toBe('1:100');
    await resetCursor(w.ctx, w.cursor, Position.of(1, 50));
    const again = [...(await w.receive('b', 100)), ...(await w.receive('b', 100))];
    expect(idsOf(again)).toEqual(positions(1, 50, 150).map(String));
  });

  it('names the pages it still has to clear: up to the read position, an early acknowledgement past it, or its own read position', async () => {
    for (const [target, early, end] of [
      [2, undefined, '1:5'],
      [2, 8, '1:9'],
      [8, undefined, '1:8'],
    ] as const) {
      const store = new DyingStore();
      const w = await world({ store });
      await w.publish(10);
      await w.subscribe();
      await w.receive('a', 5);
      if (early !== undefined) await acknowledge(w.ctx, w.cursor, [Position.of(1, early)], { byId: true });
      store.dying = true;
      await resetCursor(w.ctx, w.cursor, Position.of(1, target)).catch(() => undefined);
      expect((await headOf(w))?.resetting?.end.toString()).toBe(end);
      expect((await headOf(w))?.resetting?.untilMs).toBe(w.clock.nowMs() + RESET_TIMEOUT_MS);
    }
  });

  it('finishes a reset under way before its own; a dry run finishes nothing', async () => {
    const store = new DyingStore();
    const w = await world({ store });
    await w.publish(10);
    await w.subscribe();
    await w.receive('a', 10);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 10), { byId: false });
    store.dying = true;
    await expect(resetCursor(w.ctx, w.cursor, Position.of(1, 0))).rejects.toThrow('the resetter died');
    store.dying = false;
    const dry = await resetCursor(w.ctx, w.cursor, Position.of(1, 6), { dryRun: true });
    expect(dry.newMarkDeletePosition.toString()).toBe('1:5');
    expect((await headOf(w))?.resetting).toBeDefined();
    await resetCursor(w.ctx, w.cursor, Position.of(1, 6));
    const head = await headOf(w);
    expect([head?.resetting, head?.markDelete.toString()]).toEqual([undefined, '1:5']);
    // The first reset cleared every acknowledgement from 1:0: 6..9 come again, unacknowledged.
    expect(await isPositionAcknowledged(w.ctx, w.cursor, Position.of(1, 7))).toBe(false);
    expect(idsOf(await w.receive('b', 10))).toEqual(positions(1, 6, 10).map(String));
  });

  it('tries casAttempts head writes under contention, then answers busy', async () => {
    const store = new RacedStore();
    const w = await world({ store, casAttempts: 2 });
    await w.publish(5);
    await w.subscribe();
    await w.receive('a', 5);
    store.lose.head = 2;
    await expect(resetCursor(w.ctx, w.cursor, Position.of(1, 0))).rejects.toThrow(
      /The subscription is busy \(its cursor kept changing\): reset again/,
    );
    expect((await headOf(w))?.readPosition.toString()).toBe('1:5');
    store.lose.head = 1;
    await resetCursor(w.ctx, w.cursor, Position.of(1, 0));
    expect((await headOf(w))?.readPosition.toString()).toBe('1:0');
  });

  it('answers not found for a deleted cursor', async () => {
    const w = await world();
    await expect(resetCursor(w.ctx, w.cursor, Position.of(1, 0))).rejects.toThrow(NotFoundError);
    await expect(markDeleteForward(w.ctx, w.cursor, Position.of(1, 0))).rejects.toThrow(NotFoundError);
  });

  it(`rewinds over ${MAX_RESET_PAGES} pages, and refuses one more`, async () => {
    const w = await world();
    await w.publish(1);
    await w.subscribe();
    // A layout of a long ledger, without its entries: only the page window reads it.
    const entries = BigInt(MAX_RESET_PAGES * 100 + 50);
    const ledger = new Proxy(w.ledger, {
      get(target, property, receiver) {
        if (property === 'state') {
          return async () => ({
            ...(await target.state(w.cursor.partition)),
            ledgers: [{ ledgerId: 1n, entries }],
          });
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const ctx: EngineContext = { ...w.ctx, ledger };
    const readFrom = async (entryId: number) => {
      const record = await w.store.readHead('c1');
      await w.store.casHead('c1', record?.version as number, {
        ...record!.head,
        readPosition: Position.of(1, entryId),
      });
    };
    // A rewind over one page of a long ledger: the pages after the read position do not count.
    await readFrom(10);
    await resetCursor(ctx, w.cursor, Position.of(1, 0));
    expect((await headOf(w))?.readPosition.toString()).toBe('1:0');
    // Exactly 5000 pages before the read position (the page it starts is not rewritten): done.
    await readFrom(MAX_RESET_PAGES * 100);
    await w.store.acknowledge('c1', [
      Position.of(1, MAX_RESET_PAGES * 100 - 50),
      Position.of(1, MAX_RESET_PAGES * 100 + 5),
    ]);
    await resetCursor(ctx, w.cursor, Position.of(1, 0));
    expect(await isPositionAcknowledged(ctx, w.cursor, Position.of(1, MAX_RESET_PAGES * 100 - 50))).toBe(
      false,
    );
    expect(await isPositionAcknowledged(ctx, w.cursor, Position.of(1, MAX_RESET_PAGES * 100 + 5))).toBe(true);
    await readFrom(MAX_RESET_PAGES * 100 + 10);
    await expect(resetCursor(ctx, w.cursor, Position.of(1, 0))).rejects.toThrow(
      /would rewrite more than 5000 cursor pages \(500000 entries\).*read position 1:500010/,
    );
    await resetCursor(ctx, w.cursor, Position.of(1, 100));
    expect((await headOf(w))?.readPosition.toString()).toBe('1:100');
  });
});

describe('finishReset', () => {
  it('takes out of the page before the runs that reach into the reset’s first page, and keeps the others', async () => {
    const w = await world();
    await w.publish(150);
    await w.subscribe();
    await w.receive('a', 100);
    await w.receive('a', 50);
    const [p0] = await w.store.readPages('c1', [page(1n, 0n)]);
    await w.store.casPage('c1', page(1n, 0n), p0?.version as number, { runs: [run(80, 20), run(95, 10)] });
    await resetCursor(w.ctx, w.cursor, Position.of(1, 100));
    const [after] = await w.store.readPages('c1', [page(1n, 0n)]);
    expect(after?.runs.map((r) => `${r.entryId}+${r.n}`)).toEqual(['80+20']);
    // No run reaches into it any more: the page before is not written again.
    await w.receive('a', 50);
    await resetCursor(w.ctx, w.cursor, Position.of(1, 100));
    const [again] = await w.store.readPages('c1', [page(1n, 0n)]);
    expect(again?.version).toBe(after?.version);
  });

  it('clears no page on a forward reset past everything held, and early acks below the old read position stay out of it', async () => {
    const w = await world();
    await w.publish(300);
    await w.subscribe();
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 5)], { byId: true });
    for (let i = 0; i < 3; i++) await w.receive('a', 100);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 250)], { byId: false });
    await resetCursor(w.ctx, w.cursor, Position.of(1, 0));
    // The read position (1:300) bounds the clearing, not the early ack at 1:5.
    expect(await isPositionAcknowledged(w.ctx, w.cursor, Position.of(1, 250))).toBe(false);
    await w.receive('a', 100);
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 20)], { byId: false });
    const before = (await w.store.readPages('c1', [page(1n, 0n)]))[0]?.version;
    await resetCursor(w.ctx, w.cursor, Position.of(1, 150));
    expect((await w.store.readPages('c1', [page(1n, 0n)]))[0]?.version).toBe(before);
    await expect(finishReset(w.ctx, { ...w.cursor, cursorId: 'gone' })).resolves.toBeUndefined();
  });

  it('rewrites only pages that hold something', async () => {
    const w = await world();
    await w.publish(300);
    await w.subscribe();
    const receiveAll = async () => {
      for (let i = 0; i < 3; i++) await w.receive('a', 100);
    };
    const versions = async () =>
      (await w.store.readPages('c1', [page(1n, 0n), page(1n, 1n), page(1n, 2n)])).map((p) => p.version);
    await receiveAll();
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 150)], { byId: false });
    await resetCursor(w.ctx, w.cursor, Position.of(1, 0));
    const [cleared] = await w.store.readPages('c1', [page(1n, 1n)]);
    expect([cleared?.floor, cleared?.acked.size]).toEqual([-1, 0]);
    // Pages cleared or never written: a reset writes none of them.
    await receiveAll();
    const empty = await versions();
    await resetCursor(w.ctx, w.cursor, Position.of(1, 0));
    expect(await versions()).toEqual(empty);
    // Runs in page 0, an acknowledgement in page 1, a floor in page 2: each is written once.
    await receiveAll();
    await w.store.casPage('c1', page(1n, 0n), empty[0] as number, { runs: [run(10, 1)] });
    await acknowledge(w.ctx, w.cursor, [Position.of(1, 120)], { byId: false });
    await w.store.casPage('c1', page(1n, 2n), empty[2] as number, { runs: [], floor: 99 });
    const held = await versions();
    await resetCursor(w.ctx, w.cursor, Position.of(1, 0));
    expect((await versions()).map((v, i) => v - (held[i] as number))).toEqual([1, 1, 1]);
  });

  it('reads and writes a page again when it changed meanwhile, and leaves the reset to finish when it keeps changing', async () => {
    const store = new RacedStore();
    const w = await world({ store, casAttempts: 2 });
    await w.publish(10);
    await w.subscribe();
    await w.receive('a', 10);
    await acknowledge(w.ctx, w.cursor, positions(1, 0, 10), { byId: false });
    store.lose.page = 2;
    await expect(resetCursor(w.ctx, w.cursor, Position.of(1, 0))).rejects.toThrow(
      /The subscription is busy \(its cursor pages kept changing\): reset again/,
    );
    expect((await headOf(w))?.resetting).toBeDefined();
    store.lose.page = 1;
    await finishReset(w.ctx, w.cursor);
    expect((await headOf(w))?.resetting).toBeUndefined();
    expect(idsOf(await w.receive('b', 10))).toEqual(positions(1, 0, 10).map(String));
  });

  it('deletes every tracker entry, more than one Query’s worth too', async () => {
    const w = await world();
    await w.publish(5);
    await w.subscribe();
    await w.receive('a', 5);
    await w.store.putTracker(
      'c1',
      Array.from({ length: 1_500 }, (_, i) => ({
        dueAtMs: w.clock.nowMs() + i,
        position: Position.of(1, i % 5),
        deliveries: i + 1,
        n: 1,
      })),
    );
    await resetCursor(w.ctx, w.cursor, Position.of(1, 0));
    expect(await w.store.dueTracker('c1', Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it('tries the last head write casAttempts × 4 times under contention', async () => {
    const store = new RacedStore();
    const w = await world({ store, casAttempts: 1 });
    await w.publish(5);
    await w.subscribe();
    const record = await w.store.readHead('c1');
    await w.store.casHead('c1', record?.version as number, {
      ...record!.head,
      resetting: { end: Position.of(1, 0), untilMs: 0 },
    });
    store.lose.head = 4;
    await finishReset(w.ctx, w.cursor);
    expect((await headOf(w))?.resetting).toBeDefined();
    store.lose.head = 3;
    await finishReset(w.ctx, w.cursor);
    expect((await headOf(w))?.resetting).toBeUndefined();
  });
});

describe('markDeleteForward', () => {
  it('writes nothing in a dry run or when it would not move, and answers busy under contention', async () => {
    const store = new RacedStore();
    const w = await world({ store, casAttempts: 2 });
    await w.publish(10);
    await w.subscribe();
    const version = (await w.store.readHead('c1'))?.version;
    const dry = await markDeleteForward(w.ctx, w.cursor, Position.of(1, 4), { dryRun: true });
    expect([dry.markDeletePosition.toString(), dry.newMarkDeletePosition.toString()]).toEqual([
      '1:-1',
      '1:4',
    ]);
    expect((await w.store.readHead('c1'))?.version).toBe(version);
    await markDeleteForward(w.ctx, w.cursor, Position.beforeFirst(1n));
    expect((await w.store.readHead('c1'))?.version).toBe(version);
    store.lose.head = 2;
    await expect(markDeleteForward(w.ctx, w.cursor, Position.of(1, 4))).rejects.toThrow(
      /The subscription is busy \(its cursor kept changing\): try again/,
    );
    store.lose.head = 1;
    const moved = await markDeleteForward(w.ctx, w.cursor, Position.of(1, 4));
    expect([moved.readPosition.toString(), moved.newReadPosition.toString()]).toEqual(['1:0', '1:5']);
    expect((await headOf(w))?.markDelete.toString()).toBe('1:4');
  });
});
