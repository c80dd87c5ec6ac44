import { describe, expect, it } from 'vitest';
import { type CachedChunk, EntryChunkCache } from '../../../../shared/adapters/dynamodb/entry-chunk-cache.ts';
import { Position } from '../../../../shared/domain/position.ts';

function chunk(ledgerId: bigint, firstEntryId: bigint, n: number, bytes = 100): CachedChunk {
  return {
    ledgerId,
    firstEntryId,
    entries: Array.from({ length: n }, (_, i) => ({
      position: Position.of(ledgerId, firstEntryId + BigInt(i)),
      payload: `p${firstEntryId + BigInt(i)}`,
      properties: {},
      publishTimeMs: 1,
    })),
    bytes,
  };
}

describe('EntryChunkCache', () => {
  it('finds the chunk holding an entry, and nothing in a gap or past a chunk', () => {
    const cache = new EntryChunkCache();
    cache.put(chunk(7n, 10n, 5));
    cache.put(chunk(7n, 0n, 3));
    cache.put(chunk(8n, 10n, 5));

    expect(cache.covering(7n, 12n)?.firstEntryId).toBe(10n);
    expect(cache.covering(7n, 0n)?.firstEntryId).toBe(0n);
    expect(cache.covering(7n, 2n)?.firstEntryId).toBe(0n);
    expect(cache.covering(7n, 3n)).toBeUndefined(); // between the chunks
    expect(cache.covering(7n, 15n)).toBeUndefined(); // past the last
    expect(cache.covering(9n, 12n)).toBeUndefined(); // another ledger
    expect(cache.covering(8n, 14n)?.ledgerId).toBe(8n);
  });

  it('knows a chunk can only start at an entry when a cached chunk ends just before it, or it is the first', () => {
    const cache = new EntryChunkCache();
    cache.put(chunk(7n, 10n, 5));

    expect(cache.startsAt(7n, 15n)).toBe(true); // the cached chunk ends at 14
    expect(cache.startsAt(7n, 0n)).toBe(true); // a ledger's first entry
    expect(cache.startsAt(7n, 14n)).toBe(false); // inside the cached chunk
    expect(cache.startsAt(7n, 16n)).toBe(false); // a chunk holding 16 may start at 15
    expect(cache.startsAt(7n, 10n)).toBe(false); // nothing known before 10
    expect(cache.startsAt(8n, 15n)).toBe(false); // another ledger
  });

  it('keeps at most its size, dropping the least recently used', () => {
    const cache = new EntryChunkCache(300);
    cache.put(chunk(1n, 0n, 10));
    cache.put(chunk(1n, 10n, 10));
    cache.put(chunk(1n, 20n, 10));
    cache.covering(1n, 0n); // used: the oldest is now 10
    cache.put(chunk(1n, 30n, 10));

    expect(cache.sizeBytes).toBe(300);
    expect(cache.covering(1n, 15n)).toBeUndefined();
    expect(cache.covering(1n, 5n)?.firstEntryId).toBe(0n);
    expect(cache.covering(1n, 25n)?.firstEntryId).toBe(20n);
    expect(cache.covering(1n, 35n)?.firstEntryId).toBe(30n);
  });

  it('forgets a deleted ledger whole, and never keeps a chunk larger than itself', () => {
    const cache = new EntryChunkCache(1000);
    cache.put(chunk(1n, 0n, 10));
    cache.put(chunk(1n, 10n, 10));
    cache.put(chunk(2n, 0n, 10));
    cache.put(chunk(3n, 0n, 10, 2000));

    cache.forgetLedger(1n);

    expect(cache.covering(1n, 5n)).toBeUndefined();
    expect(cache.covering(1n, 15n)).toBeUndefined();
    expect(cache.covering(2n, 5n)?.ledgerId).toBe(2n);
    expect(cache.covering(3n, 5n)).toBeUndefined();
    expect(cache.sizeBytes).toBe(100);
  });
});
