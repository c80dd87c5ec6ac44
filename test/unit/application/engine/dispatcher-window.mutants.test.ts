import { describe, expect, it } from 'vitest';
import { dispatchWindowSize, windowSize } from '../../../../shared/application/engine/dispatcher-window.ts';
import { newDispatchHead } from '../../../../shared/domain/dispatch-head.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { ManagedLedgerState } from '../../../../shared/ports/ledger.ts';
import { engineWorld } from '../../../support/engine-world.ts';

// The dispatch window the subscription's cap of unacknowledged entries bounds: from mark-delete
// (excluded) to the read position (excluded), across ledgers (mutation testing, issue 21
// criterion 5).

const at = (ledgerId: number, entryId: number) =>
  entryId < 0 ? Position.beforeFirst(BigInt(ledgerId)) : Position.of(ledgerId, entryId);
const layout = (...sizes: [number, number][]) =>
  sizes.map(([ledgerId, entries]) => ({ ledgerId: BigInt(ledgerId), entries: BigInt(entries) }));

describe('dispatchWindowSize', () => {
  it.each([
    ['mark-delete at the read position', at(1, 5), at(1, 5), 0],
    ['mark-delete past the read position', at(1, 7), at(1, 5), 0],
    ['mark-delete right before the read position', at(1, 4), at(1, 5), 0],
    ['entries between, in one ledger', at(1, 2), at(1, 6), 3],
    ['from before the first entry', at(1, -1), at(1, 4), 4],
  ])('%s: %s to %s holds %i', (_name, markDelete, readPosition, expected) => {
    expect(dispatchWindowSize(markDelete, readPosition, [])).toBe(expected);
  });

  it('counts across ledgers by the layout', () => {
    const ledgers = layout([1, 10], [2, 10], [3, 10]);
    // 1:8, 1:9, 2:0, 2:1, 2:2
    expect(dispatchWindowSize(at(1, 7), at(2, 3), ledgers)).toBe(5);
    // 1:8, 1:9: the read position at the start of the next ledger
    expect(dispatchWindowSize(at(1, 7), at(2, 0), ledgers)).toBe(2);
    // the whole of ledger 2 between
    expect(dispatchWindowSize(at(1, 9), at(3, 1), ledgers)).toBe(11);
    // mark-delete in a ledger retention deleted: the window starts at the next ledger kept
    expect(dispatchWindowSize(at(1, 3), at(3, 2), layout([2, 10], [3, 10]))).toBe(12);
  });

  it('is empty across ledgers without a layout (the partition was deleted) or without entries', () => {
    expect(dispatchWindowSize(at(1, 3), at(2, 4), [])).toBe(0);
    expect(dispatchWindowSize(at(1, -1), at(2, 0), layout([1, 0], [2, 0]))).toBe(0);
  });
});

describe('windowSize', () => {
  it('reads no layout when mark-delete and the read position are in one ledger', async () => {
    const w = engineWorld({ type: 'Shared' });
    let reads = 0;
    const ctx = {
      ...w.ctx,
      recentState: async () => {
        reads++;
        return undefined;
      },
    };
    const head = newDispatchHead(at(4, 1), at(4, 9));
    expect(await windowSize(ctx, w.cursor, head)).toBe(7);
    expect(reads).toBe(0);
  });

  it('across ledgers, counts by the layout the recent state gives', async () => {
    const w = engineWorld({ type: 'Shared' });
    const state = { ledgers: layout([1, 10], [2, 10]) } as unknown as ManagedLedgerState;
    let reads = 0;
    const ctx = {
      ...w.ctx,
      recentState: async () => {
        reads++;
        return state;
      },
    };
    expect(await windowSize(ctx, w.cursor, newDispatchHead(at(1, 7), at(2, 3)))).toBe(5);
    expect(reads).toBe(1);
  });

  it('without a recent state, reads the ledger; a partition without ledgers has an empty window', async () => {
    const w = engineWorld({ type: 'Shared', ledgerSize: 4 });
    const positions = await w.publish(6); // 4 in the first ledger, 2 in the second
    const first = positions[0] as Position;
    const sixth = positions[5] as Position;
    expect(sixth.ledgerId).not.toBe(first.ledgerId);
    // 1..3 of the first ledger and the second ledger's 0: the read position at the sixth entry
    const head = newDispatchHead(first, sixth);
    expect(await windowSize(w.ctx, w.cursor, head)).toBe(4);
    const gone = { ...w.cursor, partition: TopicName.parse('persistent://public/default/none') };
    expect(await windowSize(w.ctx, gone, head)).toBe(0);
  });
});
