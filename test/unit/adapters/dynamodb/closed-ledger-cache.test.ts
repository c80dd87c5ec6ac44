import { describe, expect, it } from 'vitest';
import { ClosedLedgerCache } from '../../../../shared/adapters/dynamodb/closed-ledger-cache.ts';
import type { LedgerInfo } from '../../../../shared/domain/ledger-layout.ts';

const ledgers = (...ids: number[]): LedgerInfo[] => ids.map((id) => ({ ledgerId: BigInt(id), entries: 5n }));
const idsOf = (prefix: readonly LedgerInfo[]) => prefix.map((ledger) => Number(ledger.ledgerId));

describe('ClosedLedgerCache', () => {
  it('keeps a prefix per partition incarnation, extended by what is read after it', () => {
    const cache = new ClosedLedgerCache();
    cache.extend('p', 1n, ledgers(1, 4));
    cache.extend('p', 1n, ledgers(7));

    expect(idsOf(cache.prefix('p', 1n))).toEqual([1, 4, 7]);
    expect(cache.prefix('q', 1n)).toEqual([]);
    // A topic created again under the name: another first ledger, another incarnation.
    expect(cache.prefix('p', 20n)).toEqual([]);
    expect(cache.size).toBe(3);
  });

  it('ignores ledgers at or before its last one, so racing readers extend it once', () => {
    const cache = new ClosedLedgerCache();
    cache.extend('p', 1n, ledgers(1, 4));
    cache.extend('p', 1n, ledgers(1, 4, 7));
    cache.extend('p', 1n, ledgers(4, 7));

    expect(idsOf(cache.prefix('p', 1n))).toEqual([1, 4, 7]);
    expect(cache.size).toBe(3);
  });

  it('evicts the partitions used least recently past its bound, and never keeps a prefix larger than it', () => {
    const cache = new ClosedLedgerCache(4);
    cache.extend('a', 1n, ledgers(1, 2));
    cache.extend('b', 3n, ledgers(3, 4));
    cache.prefix('a', 1n);
    cache.extend('c', 5n, ledgers(5));

    expect(idsOf(cache.prefix('a', 1n))).toEqual([1, 2]);
    expect(cache.prefix('b', 3n)).toEqual([]);
    expect(idsOf(cache.prefix('c', 5n))).toEqual([5]);
    cache.extend('d', 6n, ledgers(6, 7, 8, 9, 10));
    expect(cache.prefix('d', 6n)).toEqual([]);
    expect(cache.size).toBe(3);
  });

  it('hands out a prefix that later extensions do not change', () => {
    const cache = new ClosedLedgerCache();
    cache.extend('p', 1n, ledgers(1));
    const before = cache.prefix('p', 1n);
    cache.extend('p', 1n, ledgers(2));

    expect(idsOf(before)).toEqual([1]);
  });
});
