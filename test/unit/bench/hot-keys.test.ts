import { describe, expect, it } from 'vitest';
import { compareAndSetCeiling, hotKeysLines, hotKeysOf, roleOf } from '../../../bench/hot-keys.ts';
import type { CompareAndSetUsage, KeyUsage } from '../../../shared/adapters/dynamodb/partition-key-meter.ts';
import type { UsageSnapshot } from '../../../shared/adapters/usage-meter.ts';

const CURSOR = 'AbCdEfGhIjKlMnOpQrStUv';

function key(table: string, partitionKey: string, units: { w?: number; r?: number }): KeyUsage {
  return {
    table,
    partitionKey,
    requests: 1,
    readCapacityUnits: units.r ?? 0,
    writeCapacityUnits: units.w ?? 0,
    failedConditions: 0,
    byItemKind: { item: { readCapacityUnits: units.r ?? 0, writeCapacityUnits: units.w ?? 0 } },
  };
}

const usage = (keys: KeyUsage[], compareAndSets: CompareAndSetUsage[] = []): UsageSnapshot => ({
  requests: {},
  invocations: {},
  keys,
  compareAndSets,
});

describe('hotKeysOf', () => {
  it('bounds a key by 1,000 write units and 3,000 read units a second, whichever comes first', () => {
    // 1,000 messages: the entries key wrote 1.1 units and read 0.2 a message.
    const hot = hotKeysOf(
      usage([key('Entries', '7', { w: 1_100, r: 200 }), key('Catalog', 'ACT', { w: 1 })]),
      1_000,
    );

    expect(hot.keys[0]).toMatchObject({
      role: 'entries of ledger 7',
      writeUnitsPerMessage: 1.1,
      readUnitsPerMessage: 0.2,
    });
    expect(hot.keys[0]?.unitsMessagesPerSecond).toBeCloseTo(1_000 / 1.1);
    expect(hot.keys[1]?.unitsMessagesPerSecond).toBeCloseTo(1_000_000);
    expect(hot.ceiling).toMatchObject({ role: 'entries of ledger 7', by: 'units' });
  });

  it('takes a read-heavy key at 3,000 read units a second', () => {
    const hot = hotKeysOf(usage([key('Cursors', CURSOR, { w: 100, r: 6_000 })]), 1_000);

    expect(hot.keys[0]?.unitsMessagesPerSecond).toBeCloseTo(500);
  });

  it('bounds a compare-and-set item by m × (1 − c) × 1,000 / (10 ms + 10 ms)', () => {
    // 1,000 messages over 100 committed claims (m = 10), 25 refused of 125 attempts (c = 0.2).
    const head = { table: 'Cursors', partitionKey: CURSOR, sortKey: 'H', committed: 100, refused: 25 };
    const hot = hotKeysOf(
      usage([key('Cursors', CURSOR, { w: 200, r: 50 }), key('Entries', '7', { w: 1_100 })], [head]),
      1_000,
    );

    expect(hot.keys[0]?.compareAndSet).toMatchObject({
      role: 'dispatch head of cursor AbCdEfGh…',
      messagesPerUpdate: 10,
      refusedShare: 0.2,
    });
    expect(hot.keys[0]?.compareAndSet?.messagesPerSecond).toBeCloseTo(400);
    expect(hot.ceiling.messagesPerSecond).toBeCloseTo(400);
    expect(hot.ceiling).toMatchObject({
      role: expect.stringMatching(/^cursor AbCdEfGh…/),
      by: 'compare-and-set',
    });
  });

  it('leaves out an item no update committed to, and a key that spent nothing bounds nothing', () => {
    const refusedOnly = { table: 'Cursors', partitionKey: CURSOR, sortKey: 'H', committed: 0, refused: 3 };

    expect(compareAndSetCeiling(refusedOnly, 100)).toBeUndefined();
    const hot = hotKeysOf(usage([key('Catalog', 'ACT', {})], [refusedOnly]), 100);
    expect(hot.ceiling).toEqual({ messagesPerSecond: null, role: '-', by: 'none' });
    expect(hotKeysLines(hot).at(-1)).toContain('**Ceiling: - messages/s**');
  });
});

describe('roleOf', () => {
  it.each([
    ['Entries', '12', [], 'entries of ledger 12'],
    ['Cursors', CURSOR, ['H', 'P#', 'query'], 'cursor AbCdEfGh… (head, ack pages, queries)'],
    [
      'Catalog',
      'ML#persistent://public/default/orders-partition-0',
      ['M', 'S#'],
      'partition state of orders-partition-0 (state, subscriptions)',
    ],
    ['Catalog', 'ACT#07', [], 'activity index shard ACT#07'],
    ['Catalog', 'ACT#seeded', [], 'activity index seed flag'],
    ['Catalog', 'MEM#["persistent://public/default/orders","billing"]', [], 'memberships of orders/billing'],
    ['Catalog', 'C#ledgerId', [], 'ledgerId counter (deployment-wide)'],
    ['Catalog', 'L#12', [], 'ledger index of ledger 12'],
    ['Catalog', `CONS#${CURSOR}`, [], 'consumer AbCdEfGh…'],
    ['Catalog', 'somethingElse', [], 'Catalog somethin…'],
  ])('names %s %s by its role', (table, partitionKey, kinds, role) => {
    expect(roleOf(table, partitionKey, kinds)).toBe(role);
  });
});
