import type { LedgerInfo } from '../../domain/ledger-layout.ts';

/** What one process keeps by default: 100 bytes or so a ledger, about 20 MB at most. */
export const DEFAULT_CLOSED_LEDGER_CACHE_LEDGERS = 200_000;

/**
 * The closed ledgers of each partition incarnation this process read, oldest first: a prefix of
 * its layout. A closed ledger never changes (its entries count is written once, at the rollover
 * that closes it, and ledger ids are never reused), and a partition's closed ledgers are only ever
 * appended to, so a cached prefix is what a strongly consistent read would return: no TTL is
 * needed. An incarnation is named by its first ledger id: a topic deleted and created again starts
 * on new ledgers, and what was cached of the old one is never asked for again (it is evicted in
 * time). Bounded by the number of ledgers held; the partitions used least recently go first.
 * Not persisted.
 */
export class ClosedLedgerCache {
  private readonly prefixes = new Map<string, LedgerInfo[]>();
  private held = 0;

  constructor(private readonly maxLedgers = DEFAULT_CLOSED_LEDGER_CACHE_LEDGERS) {}

  /** The cached closed ledgers of the incarnation, oldest first (empty: none cached). */
  prefix(partition: string, firstLedgerId: bigint): readonly LedgerInfo[] {
    const key = keyOf(partition, firstLedgerId);
    const prefix = this.prefixes.get(key);
    if (!prefix) return [];
    // Most recently used last, so eviction takes the least recently used.
    this.prefixes.delete(key);
    this.prefixes.set(key, prefix);
    return prefix;
  }

  /**
   * Appends closed ledgers read after the cached prefix (ascending ids; those not after its last
   * one are ignored, so two readers racing extend it once).
   */
  extend(partition: string, firstLedgerId: bigint, ledgers: readonly LedgerInfo[]): void {
    const key = keyOf(partition, firstLedgerId);
    const prefix = this.prefixes.get(key) ?? [];
    const lastId = prefix[prefix.length - 1]?.ledgerId ?? -1n;
    const added = ledgers.filter((ledger) => ledger.ledgerId > lastId);
    if (added.length === 0 || prefix.length + added.length > this.maxLedgers) return;
    this.prefixes.delete(key);
    this.prefixes.set(key, [...prefix, ...added]);
    this.held += added.length;
    for (const [oldest, ledgersOfOldest] of this.prefixes) {
      if (this.held <= this.maxLedgers) break;
      this.prefixes.delete(oldest);
      this.held -= ledgersOfOldest.length;
    }
  }

  /** Ledgers held, over every partition. */
  get size(): number {
    return this.held;
  }
}

function keyOf(partition: string, firstLedgerId: bigint): string {
  return `${firstLedgerId}\u0000${partition}`;
}
