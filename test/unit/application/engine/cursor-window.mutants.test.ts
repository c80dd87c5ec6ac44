import { describe, expect, it } from 'vitest';
import { pageStart, windowPages } from '../../../../shared/application/engine/cursor-window.ts';
import {
  DEFAULT_ENGINE_LIMITS,
  type EngineContext,
  type PartitionCursor,
} from '../../../../shared/application/engine/engine-context.ts';
import { Position } from '../../../../shared/domain/position.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryDispatchStore } from '../../../support/in-memory-dispatch-store.ts';
import { InMemoryLedger } from '../../../support/in-memory-ledger.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

// The window the fold, the release jobs, the rewinds and the pending summary walk: pages of 100
// entries, across ledgers, from a position on (mutation testing, issue 21 criterion 5).

const partition = TopicName.parse('persistent://public/default/cursor-window');
const cursor: PartitionCursor = { partition, cursorId: 'c1', type: 'Shared' };

/** A partition whose ledgers roll over after `perLedger` entries, holding `count` entries. */
async function partitionOf(perLedger: number, count: number) {
  const ledger = new InMemoryLedger(perLedger);
  const ctx: EngineContext = {
    store: new InMemoryDispatchStore(),
    ledger,
    clock: new ManualClock(1_000),
    limits: DEFAULT_ENGINE_LIMITS,
  };
  await ledger.initialize(partition);
  if (count > 0) {
    await ledger.append(
      partition,
      Array.from({ length: count }, (_, i) => ({ payload: `m${i}`, properties: {} })),
      1_000,
    );
  }
  const ledgers = ((await ledger.state(partition))?.ledgers ?? []).map((info) => info.ledgerId);
  return { ctx, ledgers };
}

/** A page as `ledgerId/page [first, end) closed?`, to compare windows at a glance. */
const shown = (pages: Awaited<ReturnType<typeof windowPages>>) =>
  pages.map(
    (p) => `${p.ledgerId}/${p.page} [${p.firstEntryId},${p.endEntryId})${p.ledgerClosed ? ' closed' : ''}`,
  );

describe('windowPages', () => {
  it('is empty for a partition without ledgers', async () => {
    const { ctx } = await partitionOf(250, 0);
    const other: PartitionCursor = {
      ...cursor,
      partition: TopicName.parse('persistent://public/default/none'),
    };
    expect(await windowPages(ctx, other, Position.beforeFirst(1n), 10)).toEqual([]);
  });

  it('walks every ledger from before the first entry, the closed ones marked, the last page cut at the ledger end', async () => {
    const { ctx, ledgers } = await partitionOf(250, 520);
    const [l1, l2, l3] = ledgers;
    expect(ledgers).toHaveLength(3);
    expect(shown(await windowPages(ctx, cursor, Position.beforeFirst(l1 as bigint), 20))).toEqual([
      `${l1}/0 [0,100) closed`,
      `${l1}/1 [100,200) closed`,
      `${l1}/2 [200,250) closed`,
      `${l2}/0 [0,100) closed`,
      `${l2}/1 [100,200) closed`,
      `${l2}/2 [200,250) closed`,
      `${l3}/0 [0,20)`,
    ]);
  });

  it('starts at the page holding the position, and at page 0 in the ledgers after it', async () => {
    const { ctx, ledgers } = await partitionOf(250, 300);
    const [l1, l2] = ledgers as [bigint, bigint];
    expect(shown(await windowPages(ctx, cursor, Position.of(l1, 150), 20))).toEqual([
      `${l1}/1 [100,200) closed`,
      `${l1}/2 [200,250) closed`,
      `${l2}/0 [0,50)`,
    ]);
    // From the second ledger on, the first is skipped whole.
    expect(shown(await windowPages(ctx, cursor, Position.of(l2, 20), 20))).toEqual([`${l2}/0 [0,50)`]);
  });

  it('has no empty page past a ledger that ends on a page boundary', async () => {
    const { ctx, ledgers } = await partitionOf(1_000, 200);
    const [l1] = ledgers as [bigint];
    expect(shown(await windowPages(ctx, cursor, Position.beforeFirst(l1), 20))).toEqual([
      `${l1}/0 [0,100)`,
      `${l1}/1 [100,200)`,
    ]);
  });

  it('stops at maxPages', async () => {
    const { ctx, ledgers } = await partitionOf(250, 520);
    const [l1, l2] = ledgers as [bigint, bigint];
    expect(shown(await windowPages(ctx, cursor, Position.beforeFirst(l1), 4))).toEqual([
      `${l1}/0 [0,100) closed`,
      `${l1}/1 [100,200) closed`,
      `${l1}/2 [200,250) closed`,
      `${l2}/0 [0,100) closed`,
    ]);
    expect(await windowPages(ctx, cursor, Position.beforeFirst(l1), 1)).toHaveLength(1);
    expect(await windowPages(ctx, cursor, Position.beforeFirst(l1), 0)).toEqual([]);
  });
});

describe('pageStart', () => {
  it('is the first position of the page', () => {
    expect(pageStart({ ledgerId: 7n, page: 0n }).toString()).toBe('7:0');
    expect(pageStart({ ledgerId: 7n, page: 3n }).toString()).toBe('7:300');
  });
});
