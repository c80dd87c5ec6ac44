import { describe, expect, it } from 'vitest';
import { Position } from '../../../../shared/domain/position.ts';
import { engineWorld, idsOf } from '../../../support/engine-world.ts';

// A new subscription's cursor on one partition: where its mark-delete starts, and that creating
// it again changes nothing (mutation testing, issue 21 criterion 5).

describe('createSubscriptionCursor', () => {
  it('at Earliest starts before the first entry: every entry kept is backlog', async () => {
    const w = engineWorld({ type: 'Shared' });
    const positions = await w.publish(3);
    const markDelete = await w.subscribe('Earliest');
    expect(markDelete.isBeforeFirst).toBe(true);
    expect(markDelete.ledgerId).toBe(positions[0]?.ledgerId);
    const head = await w.store.readHead(w.cursor.cursorId);
    expect(head?.head.markDelete.toString()).toBe(markDelete.toString());
    expect(head?.head.readPosition.toString()).toBe(positions[0]?.toString());
    expect(idsOf(await w.receive('a', 10))).toEqual(idsOf(positions.map((position) => ({ position }))));
  });

  it('at Latest starts at the last entry: only what is published after is delivered', async () => {
    const w = engineWorld({ type: 'Shared' });
    const before = await w.publish(3);
    const markDelete = await w.subscribe('Latest');
    expect(markDelete.toString()).toBe(before[2]?.toString());
    const head = await w.store.readHead(w.cursor.cursorId);
    expect(head?.head.readPosition.toString()).toBe(
      Position.of(markDelete.ledgerId, markDelete.entryId + 1n).toString(),
    );
    const after = await w.publish(2);
    expect(idsOf(await w.receive('a', 10))).toEqual(idsOf(after.map((position) => ({ position }))));
  });

  it('at a given position starts there', async () => {
    const w = engineWorld({ type: 'Shared' });
    const positions = await w.publish(4);
    const markDelete = await w.subscribe(positions[1] as Position);
    expect(markDelete.toString()).toBe(positions[1]?.toString());
    expect(idsOf(await w.receive('a', 10))).toEqual([positions[2]?.toString(), positions[3]?.toString()]);
  });

  it('at Earliest starts at the first entry retention kept; at Latest stays at the last', async () => {
    const w = engineWorld({ type: 'Shared' });
    const positions = await w.publish(5);
    await w.ledger.trim(w.cursor.partition, {
      consumedUpTo: positions[1] as Position,
      retentionTimeMs: 0,
      retentionSizeBytes: 0,
      nowMs: w.clock.nowMs() + 1_000,
      maxBatches: 10,
    });
    const kept = (await w.ledger.state(w.cursor.partition))?.firstKept as Position;
    expect(kept.toString()).toBe(positions[2]?.toString());
    const earliest = await w.subscribe('Earliest');
    expect(earliest.toString()).toBe(positions[1]?.toString());
    expect(idsOf(await w.receive('a', 10))).toEqual(
      idsOf(positions.slice(2).map((position) => ({ position }))),
    );

    const latest = engineWorld({ type: 'Shared' });
    const published = await latest.publish(5);
    await latest.ledger.trim(latest.cursor.partition, {
      consumedUpTo: published[1] as Position,
      retentionTimeMs: 0,
      retentionSizeBytes: 0,
      nowMs: latest.clock.nowMs() + 1_000,
      maxBatches: 10,
    });
    expect((await latest.subscribe('Latest')).toString()).toBe(published[4]?.toString());
  });

  it('is idempotent: an existing head is left as it is', async () => {
    const w = engineWorld({ type: 'Shared' });
    await w.publish(3);
    await w.subscribe('Earliest');
    await w.receive('a', 2);
    const before = await w.store.readHead(w.cursor.cursorId);
    await w.subscribe('Latest');
    expect(await w.store.readHead(w.cursor.cursorId)).toEqual(before);
  });
});
