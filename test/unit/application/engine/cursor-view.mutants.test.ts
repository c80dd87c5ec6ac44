import { describe, expect, it } from 'vitest';
import { EngineCursorView } from '../../../../shared/application/engine/cursor-view.ts';
import { NotFoundError } from '../../../../shared/domain/errors.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { engineWorld, RacedStore } from '../../../support/engine-world.ts';

// The admin paths' view of a cursor over the engine's items (Pulsar's ManagedCursor: mark-delete
// and the individually acknowledged entries), mutation testing, issue 21 criterion 5.

async function viewOf(published = 250) {
  const w = engineWorld({ type: 'Shared' });
  await w.publish(published);
  const view = new EngineCursorView(w.ctx);
  await view.create('c1', Position.beforeFirst(1n));
  return { w, view };
}

const shown = (positions: readonly Position[]) => positions.map(String);

describe('EngineCursorView', () => {
  it('loads a new cursor at its mark-delete with nothing acknowledged, and nothing for an unknown one', async () => {
    const { view } = await viewOf();
    const loaded = await view.load('c1');
    expect(loaded?.markDeletePosition.toString()).toBe('1:-1');
    expect(loaded?.acknowledged).toEqual([]);
    expect(await view.load('nope')).toBeUndefined();
  });

  it('lists individual acknowledgements in order across pages, with a page’s floor', async () => {
    const { w, view } = await viewOf();
    await view.acknowledge('c1', [Position.of(1, 150), Position.of(1, 5), Position.of(1, 7)]);
    await w.store.casPage('c1', { ledgerId: 1n, page: 2n }, 0, { runs: [], floor: 2 });
    expect(shown((await view.load('c1'))?.acknowledged ?? [])).toEqual([
      '1:5',
      '1:7',
      '1:150',
      '1:200',
      '1:201',
      '1:202',
    ]);
  });

  it('tells which positions are acknowledged, and counts no redelivery', async () => {
    const { view } = await viewOf();
    await view.acknowledge('c1', [Position.of(1, 3)]);
    const asked = [Position.of(1, 2), Position.of(1, 3)];
    expect(await view.isAcknowledged('c1', asked)).toEqual([false, true]);
    expect(await view.deliveryState('c1', asked)).toEqual([
      { acknowledged: false, redeliveryCount: 0 },
      { acknowledged: true, redeliveryCount: 0 },
    ]);
    expect(await view.isAcknowledged('nope', asked)).toEqual([false, false]);
    await view.recordRedelivery();
    expect((await view.deliveryState('c1', asked))[0]?.redeliveryCount).toBe(0);
  });

  it('moves mark-delete forward only', async () => {
    const { view } = await viewOf();
    await view.markDelete('c1', Position.of(1, 9));
    expect((await view.load('c1'))?.markDeletePosition.toString()).toBe('1:9');
    expect(await view.isAcknowledged('c1', [Position.of(1, 9), Position.of(1, 10)])).toEqual([true, false]);
    await view.markDelete('c1', Position.of(1, 4));
    await view.markDelete('c1', Position.of(1, 9));
    expect((await view.load('c1'))?.markDeletePosition.toString()).toBe('1:9');
    await expect(view.markDelete('nope', Position.of(1, 1))).resolves.toBeUndefined();
  });

  it('refuses to load a cursor whose ledger no partition owns', async () => {
    const { view } = await viewOf();
    await view.create('orphan', Position.of(99, 0));
    await expect(view.load('orphan')).rejects.toThrow(NotFoundError);
    await expect(view.load('orphan')).rejects.toThrow('Cursor orphan not found');
  });

  it('deletes a cursor', async () => {
    const { view } = await viewOf();
    await view.delete('c1');
    expect(await view.load('c1')).toBeUndefined();
  });

  it('leases the cursor to one holder until its end, or until it releases it', async () => {
    const { view } = await viewOf();
    expect(await view.acquireLease('nope', 'x', 0, 100)).toBe(false);
    expect(await view.acquireLease('c1', 'x', 1_000, 2_000)).toBe(true);
    expect(await view.acquireLease('c1', 'y', 1_500, 3_000)).toBe(false);
    expect(await view.acquireLease('c1', 'y', 2_000, 3_000)).toBe(false);
    // The holder may renew it.
    expect(await view.acquireLease('c1', 'x', 1_500, 2_500)).toBe(true);
    // Past its end, anyone may take it.
    expect(await view.acquireLease('c1', 'y', 2_501, 4_000)).toBe(true);
    // Only the holder releases it.
    await view.releaseLease('c1', 'x');
    expect(await view.acquireLease('c1', 'x', 2_600, 5_000)).toBe(false);
    await view.releaseLease('c1', 'y');
    expect(await view.acquireLease('c1', 'x', 2_600, 5_000)).toBe(true);
    await expect(view.releaseLease('nope', 'x')).resolves.toBeUndefined();
  });

  it('lists a page’s acknowledgements in offset order, whatever order they came in', async () => {
    const { w, view } = await viewOf();
    await view.acknowledge('c1', [Position.of(1, 60), Position.of(1, 7), Position.of(1, 30)]);
    await w.store.casPage('c1', { ledgerId: 1n, page: 1n }, 0, { runs: [], floor: 1 });
    await view.acknowledge('c1', [Position.of(1, 190), Position.of(1, 150)]);
    expect(shown((await view.load('c1'))?.acknowledged ?? [])).toEqual([
      '1:7',
      '1:30',
      '1:60',
      '1:100',
      '1:101',
      '1:150',
      '1:190',
    ]);
  });

  it('acknowledges by id: dispatch never hands out an entry acknowledged ahead of it', async () => {
    const { w, view } = await viewOf(4);
    await view.acknowledge('c1', [Position.of(1, 1)]);
    expect((await w.receive('a', 10)).map((d) => d.position.toString())).toEqual(['1:0', '1:2', '1:3']);
  });

  it('writes nothing for a mark-delete at or before the current one', async () => {
    const { w, view } = await viewOf();
    await view.markDelete('c1', Position.of(1, 9));
    const version = (await w.store.readHead('c1'))?.version;
    await view.markDelete('c1', Position.of(1, 9));
    await view.markDelete('c1', Position.of(1, 3));
    expect((await w.store.readHead('c1'))?.version).toBe(version);
  });

  it('releases no lease when none is held', async () => {
    const { w, view } = await viewOf();
    const version = (await w.store.readHead('c1'))?.version;
    await expect(view.releaseLease('c1', 'x')).resolves.toBeUndefined();
    expect((await w.store.readHead('c1'))?.version).toBe(version);
  });

  it('gives up moving mark-delete or releasing a lease after casAttempts lost races', async () => {
    const store = new RacedStore();
    const w = engineWorld({ type: 'Shared', store });
    await w.publish(20);
    const view = new EngineCursorView(w.ctx);
    await view.create('c1', Position.beforeFirst(1n));
    const attempts = w.ctx.limits.casAttempts;
    store.lose.head = attempts;
    await view.markDelete('c1', Position.of(1, 5));
    expect((await view.load('c1'))?.markDeletePosition.toString()).toBe('1:-1');
    store.lose.head = attempts - 1;
    await view.markDelete('c1', Position.of(1, 5));
    expect((await view.load('c1'))?.markDeletePosition.toString()).toBe('1:5');
    expect(await view.acquireLease('c1', 'x', 0, 100)).toBe(true);
    store.lose.head = attempts;
    await view.releaseLease('c1', 'x');
    expect((await w.store.readHead('c1'))?.head.lease?.holder).toBe('x');
    store.lose.head = attempts - 1;
    await view.releaseLease('c1', 'x');
    expect((await w.store.readHead('c1'))?.head.lease).toBeUndefined();
  });
});
