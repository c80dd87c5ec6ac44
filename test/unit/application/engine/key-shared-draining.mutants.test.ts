import { describe, expect, it } from 'vitest';
import {
  keysHeldByOthers,
  recentlyJoined,
} from '../../../../shared/application/engine/key-shared-draining.ts';
import type { DeliveryRun } from '../../../../shared/domain/delivery-run.ts';
import { Position } from '../../../../shared/domain/position.ts';
import type { HeadRecord } from '../../../../shared/ports/dispatch-store.ts';
import { engineWorld } from '../../../support/engine-world.ts';

// Key_Shared draining for a recently joined member (mutation testing, issue 21 criterion 5): the
// keys other members hold unacknowledged entries of before its join mark, each with the first.

const run = (ledgerId: number, entryId: number, state: DeliveryRun['state'], n = 1): DeliveryRun => ({
  ledgerId: BigInt(ledgerId),
  entryId: BigInt(entryId),
  n,
  deliveries: 1,
  state,
});
const heldBy = (consumerId: string) => ({ kind: 'held' as const, consumerId, deliveredAtMs: 1 });
const released = { kind: 'released' as const, dueAtMs: 1 };

async function keyedWorld(keys: readonly string[], ledgerSize = 1_000) {
  const w = engineWorld({ type: 'Key_Shared', ledgerSize });
  for (const key of keys) await w.publish(1, { key });
  await w.subscribe();
  return w;
}

async function withRuns(
  w: Awaited<ReturnType<typeof keyedWorld>>,
  head: { runs: DeliveryRun[]; readPosition: Position },
  pageRuns: DeliveryRun[] = [],
): Promise<HeadRecord> {
  const record = (await w.store.readHead('c1')) as HeadRecord;
  await w.store.casHead('c1', record.version, { ...record.head, ...head });
  if (pageRuns.length > 0) await w.store.casPage('c1', { ledgerId: 1n, page: 0n }, 0, { runs: pageRuns });
  return (await w.store.readHead('c1')) as HeadRecord;
}

const asObject = (keys: ReadonlyMap<string, Position> | undefined) =>
  keys && Object.fromEntries([...keys].map(([key, position]) => [key, position.toString()]));

describe('keysHeldByOthers', () => {
  it('names each key another member holds unacknowledged up to the join mark, with its first position', async () => {
    //                          0    1    2    3    4    5    6    7
    const w = await keyedWorld(['k', 'j', 'k', 'm', 'n', 'p', 'q', 'r']);
    const record = await withRuns(
      w,
      {
        readPosition: Position.of(1, 8),
        runs: [
          run(1, 1, released),
          run(1, 2, heldBy('a')),
          run(1, 3, heldBy('new')),
          run(1, 5, heldBy('a'), 3),
        ],
      },
      // In the page: 1:0 (only there), and a stale copy of 1:1 (the head's released one counts).
      [run(1, 0, heldBy('a')), run(1, 1, heldBy('a'))],
    );
    await w.store.acknowledge('c1', [Position.of(1, 5)]);
    const keys = await keysHeldByOthers(w.ctx, {
      cursor: w.cursor,
      record,
      consumerId: 'new',
      upTo: Position.of(1, 6),
    });
    expect(asObject(keys)).toEqual({ k: '1:0', q: '1:6' });
  });

  it('reads each ledger’s held entries from the first to the last', async () => {
    const w = await keyedWorld(['a0', 'a1', 'a2', 'b0', 'b1', 'b2'], 3);
    const record = await withRuns(w, {
      readPosition: Position.of(2, 3),
      runs: [run(1, 2, heldBy('a')), run(2, 0, heldBy('a')), run(2, 2, heldBy('a'))],
    });
    await w.store.casPage('c1', { ledgerId: 1n, page: 0n }, 0, { runs: [run(1, 0, heldBy('a'))] });
    const keys = await keysHeldByOthers(w.ctx, {
      cursor: w.cursor,
      record,
      consumerId: 'new',
      upTo: Position.of(2, 2),
    });
    expect(asObject(keys)).toEqual({ a0: '1:0', a2: '1:2', b0: '2:0', b2: '2:2' });
  });

  it('answers not known past 200 pages of window, and reads 200', async () => {
    const w = engineWorld({ type: 'Key_Shared', ledgerSize: 100_000 });
    await w.publish(20_100, { key: 'k' });
    await w.subscribe();
    const record = await withRuns(w, {
      readPosition: Position.of(1, 20_100),
      runs: [run(1, 19_999, heldBy('a'))],
    });
    const ask = (upTo: number) =>
      keysHeldByOthers(w.ctx, { cursor: w.cursor, record, consumerId: 'new', upTo: Position.of(1, upTo) });
    expect(await ask(20_000)).toBeUndefined();
    expect(asObject(await ask(19_999))).toEqual({ k: '1:19999' });
  });
});

describe('recentlyJoined', () => {
  it('is the member while mark-delete is before its join mark', async () => {
    const w = await keyedWorld(['k', 'k', 'k']);
    const record = (await w.store.readHead('c1')) as HeadRecord;
    const members = [
      { consumerId: 'a', joinedAfter: Position.beforeFirst(1n) },
      { consumerId: 'b', joinedAfter: Position.of(1, 1) },
    ];
    expect(recentlyJoined(members, 'b', record)).toEqual(members[1]);
    expect(recentlyJoined(members, 'a', record)).toBeUndefined();
    expect(recentlyJoined(members, 'c', record)).toBeUndefined();
  });
});
